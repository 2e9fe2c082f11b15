#include "passes/pass_manager.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace hgc {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `status` re-coded and prefixed, keeping its payloads (the source location
// the driver reports, support/diagnostics.h).
absl::Status Rewrap(const absl::Status& status, absl::StatusCode code,
                    absl::string_view prefix) {
  absl::Status out(code, absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace

std::string IrDumpHeader(const Pass& pass) {
  return absl::StrCat("// -----// IR Dump After ", pass.name(), " (",
                      pass.argument(), ") //----- //");
}

std::string PassManager::PipelineString() const {
  std::vector<std::string> args;
  for (const auto& p : passes_) args.emplace_back(p->argument());
  return absl::StrJoin(args, ",");
}

absl::Status PassManager::ValidateOptions() const {
  auto in_pipeline = [&](const std::string& arg) {
    for (const auto& p : passes_) {
      if (p->argument() == arg) return true;
    }
    return false;
  };
  auto missing = [&](absl::string_view flag, const std::string& arg) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", arg, ": no pass '", arg, "' in the pipeline '",
                     PipelineString(), "'"));
  };
  if (!options_.stop_after.empty() && !in_pipeline(options_.stop_after)) {
    return missing("--stop-after", options_.stop_after);
  }
  for (const std::string& arg : options_.print_ir_after) {
    if (!in_pipeline(arg)) return missing("--print-ir-after", arg);
  }
  return absl::OkStatus();
}

void PassManager::Dump(const Pass& pass, const Module& module) const {
  if (options_.dump_stream == nullptr) return;
  if (!options_.print_ir_after_all &&
      options_.print_ir_after.count(std::string(pass.argument())) == 0) {
    return;
  }
  *options_.dump_stream << IrDumpHeader(pass) << "\n"
                        << PrintModule(module) << "\n";
}

void PassManager::PrintTiming(double total_seconds) const {
  if (!options_.time_passes || options_.dump_stream == nullptr) return;
  std::ostream& os = *options_.dump_stream;
  // The layout of MLIR's -mlir-timing report (wall time only), with
  // microseconds: most passes take well under a millisecond.
  const std::string rule(77, '-');
  os << "===" << rule.substr(3) << "===\n"
     << "                      ... Pass execution timing report ...\n"
     << "===" << rule.substr(3) << "===\n"
     << absl::StrFormat("  Total Execution Time: %.6f seconds\n\n",
                        total_seconds)
     << "  ----Wall Time----    ----Name----\n";
  auto line = [&](double seconds, const std::string& label) {
    double percent = total_seconds > 0 ? 100.0 * seconds / total_seconds : 0;
    os << absl::StrFormat("  %10.6f (%5.1f%%)  %s\n", seconds, percent, label);
  };
  for (const PassRecord& r : records_) {
    line(r.seconds, absl::StrCat(r.name, " (", r.argument, ")"));
  }
  if (options_.verify_each) line(verifier_seconds_, "Verifier");
  line(total_seconds, "Total");
}

absl::Status PassManager::Run(Module& module) {
  records_.clear();
  verifier_seconds_ = 0;
  absl::Status named = ValidateOptions();
  if (!named.ok()) return named;
  Clock::time_point run_start = Clock::now();
  for (const auto& pass : passes_) {
    PassRecord record{std::string(pass->name()), std::string(pass->argument())};
    Clock::time_point start = Clock::now();
    absl::StatusOr<bool> changed = pass->Run(module);
    record.seconds = SecondsSince(start);
    if (!changed.ok()) {
      return Rewrap(changed.status(), changed.status().code(),
                    absl::StrCat(pass->argument(), ": "));
    }
    record.changed = *changed;
    records_.push_back(record);
    // Dump before verifying: the broken IR is what one wants to see when
    // the verifier fails.
    Dump(*pass, module);
    if (options_.verify_each) {
      Clock::time_point verify_start = Clock::now();
      absl::Status verified = Verify(module);
      verifier_seconds_ += SecondsSince(verify_start);
      if (!verified.ok()) {
        return Rewrap(verified, absl::StatusCode::kInternal,
                      absl::StrCat("after ", pass->argument(), ": "));
      }
    }
    if (pass->argument() == options_.stop_after) break;
  }
  PrintTiming(SecondsSince(run_start));
  return absl::OkStatus();
}

}  // namespace hgc
