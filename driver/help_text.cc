// The text of `hgc --help` (declared in driver/options.h): one table kept
// by hand, grouped and worded for the reader; options_test checks that it
// names every flag of driver/options.cc.
#include "driver/options.h"

#include <string>

namespace hgc {

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
  --dim NAME=N          (ONNX models) give symbolic dimension NAME the size
                        N, a positive integer; may be repeated
  --input-shape NAME=D0,D1,...
                        (ONNX models) give input NAME the shape D0,D1,...,
                        non-negative integers; may be repeated
  --onnx-literal        (ONNX models) import every node as written: no
                        decomposed LayerNorm or GELU becomes one op
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
  --cache-dir DIR       keep the compiled LLVM objects in DIR and reuse them
                        in later runs (overrides HGC_CACHE_DIR; DIR must be
                        the user's alone; docs/cache.md)

  --help                print this text

FILE may be '-' for stdin.
Exit status: 0 on success, 1 on any error (bad input, bad flags, check FAIL).
Errors in the input file are reported as FILE:LINE:COL: error: MESSAGE.
)";
}

}  // namespace hgc
