// Command-line options of the `hgc` driver.
#ifndef HGC_DRIVER_OPTIONS_H_
#define HGC_DRIVER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/threading.h"

namespace hgc {

struct DriverOptions {
  std::string input_file;
  // --emit=ir (the default action when neither --run nor --check is given).
  bool emit_ir = false;
  // --emit=llvm / --emit=asm: compile and print the generated step
  // functions as optimized LLVM IR / assembly (codegen/compile.h).
  bool emit_llvm = false;
  bool emit_loops = false;  // --emit=loops: the tile IR of every step
  bool emit_asm = false;
  // --target-cpu=NAME: with --emit=llvm / --emit=asm, the printed code is
  // optimized for LLVM CPU NAME instead of the host (same text on every
  // machine). Empty: the host.
  std::string target_cpu;
  bool run = false;
  bool check = false;
  uint64_t seed = 0;
  int threads = 1;
  // --threading=pool|openmp: hgc's own thread pool or the OpenMP runtime.
  Threading threading = Threading::kOwnPool;
  // --input NAME=FILE.npy, in order given.
  std::vector<std::pair<std::string, std::string>> inputs;
  // For ONNX models (ignored for .graph files), in order given:
  // --dim NAME=N, the size N > 0 of symbolic dimension NAME, and
  // --input-shape NAME=D0,D1,..., the shape of input NAME.
  std::vector<std::pair<std::string, int64_t>> dims;
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
  // --onnx-literal: import every node as written, lifting no LayerNorm or
  // GELU chain into one op (OnnxImportOptions::lift_patterns).
  bool onnx_literal = false;
  std::string output_dir;
  // --graph NAME: which graph of the file to run (default: the first).
  std::string graph;
  // --cache-dir DIR: the on-disk object cache (docs/cache.md); main()
  // makes it the process's HGC_CACHE_DIR.
  std::string cache_dir;
  // Tolerances for --check; negative means "the dtype's default".
  double rtol = -1;
  double atol = -1;
  bool help = false;

  // Graph passes. `pipeline` is a pipeline string (passes/pipelines.h) from
  // --pipeline / --pass-pipeline / -O0 / -O2; empty when none was given,
  // which means: no passes for --emit=ir, O2 for --run.
  std::string pipeline;
  bool print_ir_after_all = false;
  // --print-ir-after=a,b (pass arguments; repeatable).
  std::vector<std::string> print_ir_after;
  bool verify_each = true;
  bool time_passes = false;
  std::string stop_after;
  // --list-passes: print the passes and pipelines, then exit.
  bool list_passes = false;
  // --stats: print the entry graph's arena plan and fusion groups to stderr.
  bool stats = false;

  // --bench: compile, time against the primitive baseline (bench/compare.h).
  bool bench = false;
  // --bench-iters N: timed runs per side (0: about 0.5 s each).
  int bench_iters = 0;
  // --profile: with --bench, also time each of hgc's steps.
  bool profile = false;
};

// Parses argv (without argv[0]). Accepts `--flag=value` and `--flag value`;
// `-` as the input file means stdin. Errors are InvalidArgument with a
// message for the user. The pipeline string is not resolved here (the
// driver reports unknown passes). Each flag's value goes through its
// process-wide Abseil flag, so calls must not overlap in time; each call
// starts from DriverOptions' defaults.
absl::StatusOr<DriverOptions> ParseOptions(const std::vector<std::string>& args);

// The text printed by --help (driver/help_text.cc).
std::string HelpText();

}  // namespace hgc

#endif  // HGC_DRIVER_OPTIONS_H_
