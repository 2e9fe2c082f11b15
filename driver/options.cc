#include "driver/options.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hgc {
namespace {

absl::Status FlagError(absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(message, " (see 'hgc --help')"));
}

}  // namespace

std::string HelpText() {
  return R"(usage: hgc FILE.graph [options]

hgc compiles deep-learning graphs written in the .graph text format.

Actions (default: --emit=ir):
  --emit=ir             print the verified graph in canonical form
  --run                 execute the graph on seeded random inputs (or the
                        files given with --input) and print each output
  --check               with --run: compare every output with the reference
                        interpreter, print the error per output and
                        'check: PASS' or 'check: FAIL'; exit 1 on FAIL

Inputs and outputs:
  --input NAME=FILE.npy use FILE.npy for parameter %NAME (NAME without '%');
                        may be repeated; an f32 file is rounded for a bf16
                        parameter
  --seed N              seed for the random inputs (default 0)
  --output-dir DIR      write output i as DIR/out<i>.npy (bf16 as f32)
  --graph NAME          run graph @NAME of the file (default: the first)

Execution:
  --threads N           threads to run on (default 1)
  --rtol R, --atol A    --check tolerances (default: per dtype, see README)

  --help                print this text

Exit status: 0 on success, 1 on any error (bad input, bad flags, check FAIL).
Errors in the input file are reported as FILE:LINE:COL: error: MESSAGE.
)";
}

absl::StatusOr<DriverOptions> ParseOptions(const std::vector<std::string>& args) {
  DriverOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      if (!options.input_file.empty()) {
        return FlagError(absl::StrCat("more than one input file ('",
                                      options.input_file, "' and '", arg, "')"));
      }
      options.input_file = arg;
      continue;
    }
    std::string name = arg, value;
    bool has_value = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (absl::StartsWith(name, "--")) name = name.substr(2);
    else name = name.substr(1);  // accept -flag as well, like absl

    auto take_value = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) {
        return FlagError(absl::StrCat("flag '--", name, "' needs a value"));
      }
      return args[++i];
    };
    auto no_value = [&]() -> absl::Status {
      if (has_value) {
        return FlagError(absl::StrCat("flag '--", name, "' takes no value"));
      }
      return absl::OkStatus();
    };
    auto parse_int = [&](int64_t lo, int64_t hi) -> absl::StatusOr<int64_t> {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      int64_t n;
      if (!absl::SimpleAtoi(*v, &n) || n < lo || n > hi) {
        return FlagError(absl::StrCat("invalid value '", *v, "' for '--", name,
                                      "' (expected an integer in [", lo, ", ",
                                      hi, "])"));
      }
      return n;
    };
    auto parse_double = [&]() -> absl::StatusOr<double> {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      double d;
      if (!absl::SimpleAtod(*v, &d) || !(d >= 0)) {
        return FlagError(absl::StrCat("invalid value '", *v, "' for '--", name,
                                      "' (expected a non-negative number)"));
      }
      return d;
    };

    if (name == "help" || name == "h") {
      options.help = true;
    } else if (name == "emit") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      if (*v != "ir") {
        return FlagError(absl::StrCat("unsupported --emit kind '", *v,
                                      "' (supported: ir)"));
      }
      options.emit_ir = true;
    } else if (name == "run") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.run = true;
    } else if (name == "check") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.check = true;
    } else if (name == "seed") {
      absl::StatusOr<int64_t> n = parse_int(0, INT64_MAX);
      if (!n.ok()) return n.status();
      options.seed = static_cast<uint64_t>(*n);
    } else if (name == "threads") {
      absl::StatusOr<int64_t> n = parse_int(1, 1024);
      if (!n.ok()) return n.status();
      options.threads = static_cast<int>(*n);
    } else if (name == "input") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      size_t sep = v->find('=');
      if (sep == std::string::npos || sep == 0 || sep + 1 == v->size()) {
        return FlagError(absl::StrCat("--input expects NAME=FILE.npy, found '",
                                      *v, "'"));
      }
      std::string param = v->substr(0, sep);
      if (absl::StartsWith(param, "%")) param = param.substr(1);
      options.inputs.emplace_back(param, v->substr(sep + 1));
    } else if (name == "output-dir") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      options.output_dir = *v;
    } else if (name == "graph") {
      absl::StatusOr<std::string> v = take_value();
      if (!v.ok()) return v.status();
      options.graph = absl::StartsWith(*v, "@") ? v->substr(1) : *v;
    } else if (name == "rtol") {
      absl::StatusOr<double> d = parse_double();
      if (!d.ok()) return d.status();
      options.rtol = *d;
    } else if (name == "atol") {
      absl::StatusOr<double> d = parse_double();
      if (!d.ok()) return d.status();
      options.atol = *d;
    } else {
      return FlagError(absl::StrCat("unknown flag '", arg, "'"));
    }
  }
  if (options.help) return options;
  if (options.input_file.empty()) return FlagError("no input file");
  if (options.check) options.run = true;
  if (!options.run) options.emit_ir = true;
  return options;
}

}  // namespace hgc
