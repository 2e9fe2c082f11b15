#include "driver/options.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "driver/flag_types.h"
#include "support/status_macros.h"

// hgc's flags: those declared in this file, and no other flag linked into
// the binary (FindHgcFlag). Written with '-' for '_' on the command line.
// ParseOptions copies each one given into DriverOptions, whose members hold
// the defaults; HelpText() documents them.
ABSL_FLAG(hgc::EmitKind, emit, {}, "what to print: ir, loops, llvm, asm");
ABSL_FLAG(hgc::CpuName, target_cpu, {}, "LLVM CPU of --emit=llvm/asm");
ABSL_FLAG(bool, run, false, "compile, run and print the outputs");
ABSL_FLAG(bool, check, false, "compare --run with the reference");
ABSL_FLAG(bool, bench, false, "time against the oneDNN baseline");
ABSL_FLAG(hgc::BenchIters, bench_iters, {}, "timed runs per side");
ABSL_FLAG(bool, profile, false, "with --bench, time each step");
ABSL_FLAG(bool, list_passes, false, "print the passes and pipelines");
ABSL_FLAG(hgc::NonEmptyText, pipeline, {}, "the pass pipeline");
ABSL_FLAG(hgc::NonEmptyText, pass_pipeline, {}, "the same as --pipeline");
ABSL_FLAG(bool, O0, false, "the O0 pipeline");
ABSL_FLAG(bool, O2, false, "the O2 pipeline");
ABSL_FLAG(bool, print_ir_after_all, false, "print the IR after each pass");
ABSL_FLAG(std::vector<std::string>, print_ir_after, {},
          "print the IR after these passes");
ABSL_FLAG(hgc::Switch, verify_each, {}, "verify the IR after each pass");
ABSL_FLAG(bool, time_passes, false, "print the time of each pass");
ABSL_FLAG(std::string, stop_after, "", "stop after this pass");
ABSL_FLAG(bool, stats, false, "print the arena plan and fusion groups");
ABSL_FLAG(hgc::ParameterFile, input, {}, "NAME=FILE.npy for --run");
ABSL_FLAG(hgc::NamedSize, dim, {}, "NAME=N: an ONNX model's dimension");
ABSL_FLAG(hgc::NamedShape, input_shape, {}, "NAME=D0,D1,...: an ONNX input");
ABSL_FLAG(bool, onnx_literal, false, "import an ONNX model as written");
ABSL_FLAG(hgc::Seed, seed, {}, "seed of the random inputs");
ABSL_FLAG(hgc::NonEmptyText, output_dir, {}, "where --run writes its outputs");
ABSL_FLAG(std::string, graph, "", "the graph to run");
ABSL_FLAG(hgc::ThreadCount, threads, {}, "threads to run on");
ABSL_FLAG(hgc::NonEmptyText, cache_dir, {}, "where compiled code is kept");
ABSL_FLAG(hgc::ThreadingChoice, threading, {}, "pool or openmp");
ABSL_FLAG(hgc::NonNegative, rtol, {}, "relative tolerance of --check");
ABSL_FLAG(hgc::NonNegative, atol, {}, "absolute tolerance of --check");

namespace hgc {

namespace {

absl::Status FlagError(absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(message, " (see 'hgc --help')"));
}

// hgc's flag `name`, as written on the command line, or null.
absl::CommandLineFlag* FindHgcFlag(absl::string_view name) {
  if (absl::StrContains(name, '_')) return nullptr;
  absl::CommandLineFlag* flag =
      absl::FindCommandLineFlag(absl::StrReplaceAll(name, {{"-", "_"}}));
  const std::string hgc_file =
      absl::GetFlagReflectionHandle(FLAGS_run).Filename();
  return flag != nullptr && flag->Filename() == hgc_file ? flag : nullptr;
}

absl::Status SetPipeline(DriverOptions& options, std::string pipeline) {
  if (!options.pipeline.empty() && options.pipeline != pipeline) {
    return FlagError(absl::StrCat("more than one pipeline ('", options.pipeline,
                                  "' and '", pipeline, "')"));
  }
  options.pipeline = std::move(pipeline);
  return absl::OkStatus();
}

// The member each flag without a value turns on; null for other names.
bool DriverOptions::*OnOffMember(absl::string_view name) {
  static constexpr std::pair<absl::string_view, bool DriverOptions::*>
      kMembers[] = {{"run", &DriverOptions::run},
                    {"check", &DriverOptions::check},
                    {"bench", &DriverOptions::bench},
                    {"profile", &DriverOptions::profile},
                    {"list_passes", &DriverOptions::list_passes},
                    {"print_ir_after_all", &DriverOptions::print_ir_after_all},
                    {"time_passes", &DriverOptions::time_passes},
                    {"onnx_literal", &DriverOptions::onnx_literal},
                    {"stats", &DriverOptions::stats}};
  for (const auto& [flag_name, member] : kMembers) {
    if (name == flag_name) return member;
  }
  return nullptr;
}

// Copies the value `flag` was just given into `options`: the repeatable
// flags (--emit, --input, --dim, --input-shape, --print-ir-after) add to
// what came before, the pipeline flags must agree with it, the others
// replace it.
absl::Status ApplyFlag(const absl::CommandLineFlag& flag, DriverOptions& o) {
  using absl::GetFlag;
  const absl::string_view name = flag.Name();
  if (name == "emit") {
    const EmitKind kind = GetFlag(FLAGS_emit);
    (kind == EmitKind::kIr      ? o.emit_ir
     : kind == EmitKind::kLoops ? o.emit_loops
     : kind == EmitKind::kLlvm  ? o.emit_llvm
                                : o.emit_asm) = true;
  } else if (name == "input") {
    ParameterFile input = GetFlag(FLAGS_input);
    o.inputs.emplace_back(std::move(input.parameter), std::move(input.file));
  } else if (name == "dim") {
    NamedSize dim = GetFlag(FLAGS_dim);
    o.dims.emplace_back(std::move(dim.name), dim.size);
  } else if (name == "input_shape") {
    NamedShape shape = GetFlag(FLAGS_input_shape);
    o.input_shapes.emplace_back(std::move(shape.name), std::move(shape.dims));
  } else if (name == "print_ir_after") {
    for (std::string& pass : GetFlag(FLAGS_print_ir_after)) {
      if (!pass.empty()) o.print_ir_after.push_back(std::move(pass));
    }
  } else if (name == "pipeline") {
    return SetPipeline(o, GetFlag(FLAGS_pipeline).value);
  } else if (name == "pass_pipeline") {
    return SetPipeline(o, GetFlag(FLAGS_pass_pipeline).value);
  } else if (name == "O0" || name == "O2") {
    return SetPipeline(o, std::string(name));
  } else if (name == "target_cpu") {
    o.target_cpu = GetFlag(FLAGS_target_cpu).value;
  } else if (name == "bench_iters") {
    o.bench_iters = static_cast<int>(GetFlag(FLAGS_bench_iters).value);
  } else if (name == "verify_each") {
    o.verify_each = GetFlag(FLAGS_verify_each).on;
  } else if (name == "stop_after") {
    o.stop_after = GetFlag(FLAGS_stop_after);
  } else if (name == "seed") {
    o.seed = static_cast<uint64_t>(GetFlag(FLAGS_seed).value);
  } else if (name == "output_dir") {
    o.output_dir = GetFlag(FLAGS_output_dir).value;
  } else if (name == "graph") {
    o.graph = std::string(absl::StripPrefix(GetFlag(FLAGS_graph), "@"));
  } else if (name == "cache_dir") {
    o.cache_dir = GetFlag(FLAGS_cache_dir).value;
  } else if (name == "threads") {
    o.threads = GetFlag(FLAGS_threads).value;
  } else if (name == "threading") {
    o.threading = GetFlag(FLAGS_threading).value;
  } else if (name == "rtol" || name == "atol") {
    (name == "rtol" ? o.rtol : o.atol) =
        GetFlag(name == "rtol" ? FLAGS_rtol : FLAGS_atol).value;
  } else if (bool DriverOptions::*member = OnOffMember(name)) {
    o.*member = true;
  } else {
    return absl::InternalError(absl::StrCat("--", name, " sets no option"));
  }
  return absl::OkStatus();
}

// A flag as written: `--name=value`, `--name` or `-name`, and so on.
struct WrittenFlag {
  std::string name;                  // without its leading '-' or '--'
  std::optional<std::string> value;  // after '='
};

WrittenFlag SplitFlag(absl::string_view arg) {
  WrittenFlag flag;
  const size_t eq = arg.find('=');
  if (eq != absl::string_view::npos)
    flag.value = std::string(arg.substr(eq + 1));
  absl::string_view name = arg.substr(0, eq);
  name.remove_prefix(absl::StartsWith(name, "--") ? 2 : 1);
  flag.name = std::string(name);
  return flag;
}

// The text to parse for `flag`: a flag of type bool, or a switch written
// --no-NAME, takes none; a switch may take one after '='; every other flag
// needs one, after '=' or else the next argument (*index moves past it).
absl::StatusOr<std::string> FlagValue(const absl::CommandLineFlag& flag,
                                      const WrittenFlag& written, bool negated,
                                      const std::vector<std::string>& args,
                                      size_t* index) {
  if (negated || flag.IsOfType<bool>()) {
    if (written.value.has_value()) {
      return FlagError(
          absl::StrCat("flag '--", written.name, "' takes no value"));
    }
    return negated ? "false" : "true";
  }
  if (written.value.has_value()) return *written.value;
  if (flag.IsOfType<Switch>()) return "true";
  if (*index + 1 >= args.size()) {
    return FlagError(absl::StrCat("flag '--", written.name, "' needs a value"));
  }
  return args[++*index];
}

// Parses the flag args[*index] (and its value) into `options`.
absl::Status ParseFlag(const std::vector<std::string>& args, size_t* index,
                       DriverOptions& options) {
  const std::string& arg = args[*index];
  const WrittenFlag written = SplitFlag(arg);
  const std::string& name = written.name;
  if (name == "help" || name == "h") {
    options.help = true;
    return absl::OkStatus();
  }
  absl::CommandLineFlag* flag = FindHgcFlag(name);
  bool negated = false;
  if (flag == nullptr && absl::StartsWith(name, "no-")) {
    // --no-verify-each: a switch turned off.
    flag = FindHgcFlag(absl::string_view(name).substr(3));
    negated = flag != nullptr && flag->IsOfType<Switch>();
    if (!negated) flag = nullptr;
  }
  if (flag == nullptr && name.size() == 2 && name[0] == 'O') {
    return FlagError(absl::StrCat("unsupported optimization level '-", name,
                                  "' (supported: -O0, -O2)"));
  }
  if (flag == nullptr) {
    return FlagError(absl::StrCat("unknown flag '", arg, "'"));
  }
  HGC_ASSIGN_OR_RETURN(std::string value,
                       FlagValue(*flag, written, negated, args, index));
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    // ParseFrom puts its own words before AbslParseFlag's message.
    absl::string_view message = error;
    absl::ConsumePrefix(
        &message, absl::StrCat("Illegal value '", value,
                               "' specified for flag '", flag->Name(), "'; "));
    return FlagError(absl::StrReplaceAll(
        message, {{"{flag}", absl::StrCat("--", name)}, {"{value}", value}}));
  }
  return ApplyFlag(*flag, options);
}

// Flags that do not apply to the chosen action are errors, not ignored.
// Also settles what --check and no action at all imply.
absl::Status CheckActions(DriverOptions& options) {
  if (options.input_file.empty()) return FlagError("no input file");
  if (options.check) options.run = true;
  if (options.bench && !options.inputs.empty()) {
    return FlagError(
        "--input does not apply to --bench (it times both sides on seeded "
        "random inputs, see --seed)");
  }
  if (options.bench && !options.output_dir.empty()) {
    return FlagError(
        "--output-dir does not apply to --bench (it writes no "
        "outputs)");
  }
  if (options.bench && !options.stop_after.empty()) {
    return FlagError(
        "--stop-after does not apply to --bench (it times the whole "
        "pipeline)");
  }
  if (!options.run && !options.bench) {
    if (!options.inputs.empty()) return FlagError("--input needs --run");
    if (!options.output_dir.empty()) {
      return FlagError("--output-dir needs --run");
    }
  }
  if (!options.check && !options.bench &&
      (options.rtol >= 0 || options.atol >= 0)) {
    return FlagError(absl::StrCat(options.rtol >= 0 ? "--rtol" : "--atol",
                                  " needs --check or --bench"));
  }
  if (!options.bench && options.bench_iters != 0) {
    return FlagError("--bench-iters needs --bench");
  }
  if (!options.bench && options.profile) {
    return FlagError("--profile needs --bench");
  }
  if (!options.target_cpu.empty() && !options.emit_llvm && !options.emit_asm) {
    return FlagError("--target-cpu applies to --emit=llvm and --emit=asm only");
  }
  if (!options.run && !options.bench && !options.emit_llvm &&
      !options.emit_asm && !options.emit_loops) {
    options.emit_ir = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DriverOptions> ParseOptions(
    const std::vector<std::string>& args) {
  DriverOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (absl::StartsWith(arg, "-") && arg != "-") {
      HGC_RETURN_IF_ERROR(ParseFlag(args, &i, options));
    } else if (options.input_file.empty()) {
      options.input_file = arg;
    } else {
      return FlagError(absl::StrCat("more than one input file ('",
                                    options.input_file, "' and '", arg, "')"));
    }
  }
  if (options.help || options.list_passes) return options;
  HGC_RETURN_IF_ERROR(CheckActions(options));
  return options;
}

}  // namespace hgc
