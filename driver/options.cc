#include "driver/options.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "support/status_macros.h"
#include "support/system_limits.h"

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
  --emit=ir             print the graph in canonical form: as parsed, or
                        after the passes when a pipeline is given
  --emit=llvm           compile (-O2 unless told otherwise) and print the
                        generated step functions as optimized LLVM IR
  --emit=asm            the same as assembly
  --emit=loops          compile (-O2 unless told otherwise) and print each
                        step's tile IR: buffers, kernels, the loop nest and
                        its parallel split
  --target-cpu=NAME     with --emit=llvm/asm: optimize the printed code for
                        LLVM CPU NAME (e.g. skylake-avx512, sapphirerapids)
                        and its features instead of this machine's, so the
                        text is the same on every host (what --run executes
                        is always compiled for the host)
  --run                 run the pipeline (default -O2), execute the result
                        on seeded random inputs (or the files given with
                        --input) and print each output
  --check               with --run: compare every output with the reference
                        interpreter on the ORIGINAL (unoptimized) graph,
                        print the error per output and 'check: PASS' or
                        'check: FAIL'; exit 1 on FAIL
  --bench               compile (-O2 unless told otherwise) and time the
                        result against the oneDNN primitive-per-op baseline
                        on seeded random inputs, same threads, same process:
                        compile ms (median of 3), median ms per run,
                        GFLOP/s (matmuls: 2*M*N*K), speedup; checks that
                        both agree (exit 1 if not)
  --bench-iters N       timed runs per side (default: about 0.5 s each)
  --profile             with --bench: then time each of hgc's steps over as
                        many runs and print a table: step, kind (native,
                        serial, pool, host), median ms and share of the run
  --list-passes         print every pass (with options) and named pipeline

Passes:
  --pipeline=P          run pipeline P: passes and named pipelines separated
                        by ',', options in braces, e.g.
                        --pipeline=canonicalize,fusion{max-ops=8},dce
  --pass-pipeline=P     the same (mlir-opt spelling)
  -O0, -O2              named pipelines: O0 verifies only; O2 is the full
                        graph pipeline (see --list-passes)
  --print-ir-after-all  print the IR after every pass to stderr
  --print-ir-after=A    print the IR after pass A (comma list, repeatable)
  --verify-each         verify the IR after every pass (default on);
  --no-verify-each      turn it off
  --time-passes         print the time each pass took to stderr
  --stop-after=A        stop the pipeline after the first run of pass A
  --stats               print the entry graph's arena plan to stderr
                        (after -O2 unless told otherwise, e.g. -O0):
                        'arena: N bytes (intermediates: M bytes)', the
                        memory one execution needs, and its fused groups
                        by kind: 'fusion groups: attention 1, matmul 2'

Inputs and outputs:
  --input NAME=FILE.npy use FILE.npy for parameter %NAME (NAME without '%');
                        may be repeated; float data (f16, f32, f64) is
                        rounded to a float parameter's type, integer data
                        (int8 to int64, uint8 to uint64) must fit an
                        integer parameter's
  --seed N              seed for the random inputs (default 0)
  --output-dir DIR      write output i as DIR/out<i>.npy (bf16 as f32), all
                        or none; removes out<i>.npy left by an earlier run
                        with more results (--input and --output-dir need
                        --run)
  --graph NAME          run graph @NAME of the file (default: the first)

Execution:
  --threads N           threads to run on (default 1; at most 8 per CPU)
  --threading=pool|openmp
                        run parallel steps on hgc's own thread pool (default)
                        or on the process's OpenMP runtime (libgomp), which
                        shares OpenMP's threads and OMP_PROC_BIND binding
  --rtol R, --atol A    --check tolerances (default: per dtype, see README)

  --help                print this text

FILE may be '-' for stdin.
Exit status: 0 on success, 1 on any error (bad input, bad flags, check FAIL).
Errors in the input file are reported as FILE:LINE:COL: error: MESSAGE.
)";
}

namespace {

// One flag of the command line, `--name=value` or `--name value`, and the
// arguments after it, from which a value may be taken.
class Flag {
 public:
  // args[*index] is a flag: it starts with '-' and is not "-". Taking a
  // value from the next argument advances *index past it.
  Flag(const std::vector<std::string>& args, size_t* index)
      : args_(args), index_(index) {
    const std::string& arg = args[*index];
    name_ = arg;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name_ = arg.substr(0, eq);
      value_ = arg.substr(eq + 1);
      has_value_ = true;
    }
    // -flag is accepted as well, as absl does.
    name_ = name_.substr(absl::StartsWith(name_, "--") ? 2 : 1);
  }

  const std::string& name() const { return name_; }
  bool has_value() const { return has_value_; }
  // The `=value` part, empty without one.
  const std::string& inline_value() const { return value_; }

  // The value, after '=' or else the next argument.
  absl::StatusOr<std::string> Value() {
    if (has_value_) return value_;
    if (*index_ + 1 >= args_.size()) {
      return FlagError(absl::StrCat("flag '--", name_, "' needs a value"));
    }
    return args_[++*index_];
  }

  // OK for a flag written without a value.
  absl::Status NoValue() const {
    if (has_value_) {
      return FlagError(absl::StrCat("flag '--", name_, "' takes no value"));
    }
    return absl::OkStatus();
  }

  // The value as an integer in [lo, hi].
  absl::StatusOr<int64_t> Int(int64_t lo, int64_t hi) {
    HGC_ASSIGN_OR_RETURN(std::string v, Value());
    int64_t n;
    if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
      return FlagError(absl::StrCat("invalid value '", v, "' for '--", name_,
                                    "' (expected an integer in [", lo, ", ", hi,
                                    "])"));
    }
    return n;
  }

  // The value as a number >= 0 (NaN refused).
  absl::StatusOr<double> NonNegative() {
    HGC_ASSIGN_OR_RETURN(std::string v, Value());
    double d;
    if (!absl::SimpleAtod(v, &d) || !(d >= 0)) {
      return FlagError(absl::StrCat("invalid value '", v, "' for '--", name_,
                                    "' (expected a non-negative number)"));
    }
    return d;
  }

 private:
  const std::vector<std::string>& args_;
  size_t* index_;
  std::string name_, value_;
  bool has_value_ = false;
};

absl::Status SetPipeline(DriverOptions& options, std::string pipeline) {
  if (!options.pipeline.empty() && options.pipeline != pipeline) {
    return FlagError(absl::StrCat("more than one pipeline ('", options.pipeline,
                                  "' and '", pipeline, "')"));
  }
  options.pipeline = std::move(pipeline);
  return absl::OkStatus();
}

// The pass flags; false when `flag` is not one of them.
absl::StatusOr<bool> ApplyPassFlag(Flag& flag, DriverOptions& options) {
  const std::string& name = flag.name();
  if (name == "pipeline" || name == "pass-pipeline") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    if (v.empty()) return FlagError(absl::StrCat("--", name, " is empty"));
    HGC_RETURN_IF_ERROR(SetPipeline(options, v));
  } else if (name == "O0" || name == "O2") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    HGC_RETURN_IF_ERROR(SetPipeline(options, name));
  } else if (absl::StartsWith(name, "O") && name.size() == 2) {
    return FlagError(absl::StrCat("unsupported optimization level '-", name,
                                  "' (supported: -O0, -O2)"));
  } else if (name == "print-ir-after-all") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.print_ir_after_all = true;
  } else if (name == "print-ir-after") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    for (absl::string_view a : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      options.print_ir_after.emplace_back(a);
    }
  } else if (name == "verify-each") {
    const std::string& v = flag.inline_value();
    if (!flag.has_value() || v == "true" || v == "1") {
      options.verify_each = true;
    } else if (v == "false" || v == "0") {
      options.verify_each = false;
    } else {
      return FlagError(absl::StrCat("invalid value '", v,
                                    "' for '--verify-each' (expected true "
                                    "or false)"));
    }
  } else if (name == "no-verify-each") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.verify_each = false;
  } else if (name == "time-passes") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.time_passes = true;
  } else if (name == "stop-after") {
    HGC_ASSIGN_OR_RETURN(options.stop_after, flag.Value());
  } else if (name == "list-passes") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.list_passes = true;
  } else if (name == "stats") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.stats = true;
  } else {
    return false;
  }
  return true;
}

// The action flags (--emit, --run, --check, --bench and theirs); false when
// `flag` is not one of them.
absl::StatusOr<bool> ApplyActionFlag(Flag& flag, DriverOptions& options) {
  const std::string& name = flag.name();
  if (name == "help" || name == "h") {
    options.help = true;
  } else if (name == "emit") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    if (v == "ir") {
      options.emit_ir = true;
    } else if (v == "llvm") {
      options.emit_llvm = true;
    } else if (v == "asm") {
      options.emit_asm = true;
    } else if (v == "loops") {
      options.emit_loops = true;
    } else {
      return FlagError(absl::StrCat("unsupported --emit kind '", v,
                                    "' (supported: ir, loops, llvm, asm)"));
    }
  } else if (name == "target-cpu") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    if (v.empty()) return FlagError("--target-cpu needs a CPU name");
    options.target_cpu = v;
  } else if (name == "run" || name == "bench" || name == "check") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    bool& action = name == "run"     ? options.run
                   : name == "bench" ? options.bench
                                     : options.check;
    action = true;
  } else if (name == "bench-iters") {
    HGC_ASSIGN_OR_RETURN(int64_t n, flag.Int(1, 10000000));
    options.bench_iters = static_cast<int>(n);
  } else if (name == "profile") {
    HGC_RETURN_IF_ERROR(flag.NoValue());
    options.profile = true;
  } else if (name == "rtol" || name == "atol") {
    HGC_ASSIGN_OR_RETURN(double d, flag.NonNegative());
    (name == "rtol" ? options.rtol : options.atol) = d;
  } else {
    return false;
  }
  return true;
}

// The input, output and execution flags; false when `flag` is not one of
// them.
absl::StatusOr<bool> ApplyRunFlag(Flag& flag, DriverOptions& options) {
  const std::string& name = flag.name();
  if (name == "seed") {
    HGC_ASSIGN_OR_RETURN(int64_t n, flag.Int(0, INT64_MAX));
    options.seed = static_cast<uint64_t>(n);
  } else if (name == "threads") {
    HGC_ASSIGN_OR_RETURN(int64_t n, flag.Int(1, kMaxThreadsEver));
    if (absl::Status s = CheckNumThreads(n, "--threads"); !s.ok()) {
      return FlagError(s.message());
    }
    options.threads = static_cast<int>(n);
  } else if (name == "threading") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    if (v == "pool") {
      options.threading = Threading::kOwnPool;
    } else if (v == "openmp") {
      options.threading = Threading::kOpenMP;
    } else {
      return FlagError(absl::StrCat(
          "--threading expects 'pool' or 'openmp', found '", v, "'"));
    }
  } else if (name == "input") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    const size_t sep = v.find('=');
    if (sep == std::string::npos || sep == 0 || sep + 1 == v.size()) {
      return FlagError(
          absl::StrCat("--input expects NAME=FILE.npy, found '", v, "'"));
    }
    std::string param = v.substr(0, sep);
    if (absl::StartsWith(param, "%")) param = param.substr(1);
    options.inputs.emplace_back(param, v.substr(sep + 1));
  } else if (name == "output-dir") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    if (v.empty()) return FlagError("--output-dir is empty");
    options.output_dir = v;
  } else if (name == "graph") {
    HGC_ASSIGN_OR_RETURN(std::string v, flag.Value());
    options.graph = absl::StartsWith(v, "@") ? v.substr(1) : v;
  } else {
    return false;
  }
  return true;
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
    return FlagError("--output-dir does not apply to --bench (it writes no "
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
  if (!options.target_cpu.empty() && !options.emit_llvm &&
      !options.emit_asm) {
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
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      if (!options.input_file.empty()) {
        return FlagError(absl::StrCat("more than one input file ('",
                                      options.input_file, "' and '", arg,
                                      "')"));
      }
      options.input_file = arg;
      continue;
    }
    Flag flag(args, &i);
    bool known = false;
    for (auto apply : {ApplyActionFlag, ApplyPassFlag, ApplyRunFlag}) {
      HGC_ASSIGN_OR_RETURN(known, apply(flag, options));
      if (known) break;
    }
    if (!known) return FlagError(absl::StrCat("unknown flag '", arg, "'"));
  }
  if (options.help || options.list_passes) return options;
  HGC_RETURN_IF_ERROR(CheckActions(options));
  return options;
}

}  // namespace hgc
