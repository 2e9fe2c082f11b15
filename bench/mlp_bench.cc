// The paper's MLP workloads (oneDNN Graph Compiler, arXiv 2301.01333) in
// f32: hgc against the oneDNN primitive-per-op baseline.
//
//   bazel run -c opt //bench:mlp -- [--threads=N] [--short] [--csv=FILE]
//       [--png=FILE] [--iters=N]
//
// Workloads: MLP-1 = DLRM bottom MLP 13 -> 512 -> 256 -> 128, MLP-2 = DLRM
// top MLP 479 -> 1024 -> 1024 -> 512 -> 256 -> 1, matmul + bias + ReLU per
// layer, weights and biases `const`, batch 32, 64, 128, 256, 512 (--short:
// 32 and 512 with fewer runs, for CI: well under a minute).
//
// Each row comes from bench/compare.h's BenchGraph (same process, same
// threads, same seeded inputs; constants bound outside the timed loops;
// medians; outputs checked against each other). FLOPs are 2*M*N*K per
// matmul (bias and ReLU not counted). "% of peak" compares GFLOP/s with
// the machine's f32 FMA peak for this thread count, measured here: one
// vfmadd231ps throughput loop (bench/isa_peak.h; YMM without AVX-512) per
// thread, all threads at once, summed; sampled after every round of every
// case, each round's rate over the peak after it, the median over the
// rounds (bench/sweep.h, shared with bench:mha). --threading=openmp runs hgc's
// parallel steps on OpenMP (libgomp, the runtime the baseline's oneDNN
// uses) instead of hgc's own pool.
//
// Output: a table on stdout, the geomean speedup, a CSV (default mlp.csv;
// under `bazel run` relative paths are the directory Bazel ran in), and a
// PNG chart drawn with gnuplot (default: the CSV's name with .png): speedup
// per batch for both MLPs and hgc's % of peak. Without gnuplot the chart is
// skipped with a note. Exit 1 when any workload's outputs disagree or
// something fails to compile or run.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/sweep.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace hgc {
namespace {

struct Mlp {
  std::string name;
  std::vector<int64_t> widths;
};

// @name: x[batch, widths[0]] -> [batch, widths.back()], matmul + bias +
// relu per layer, weights and biases const.
absl::StatusOr<const Graph*> BuildMlp(Module& module, const Mlp& mlp,
                                      int64_t batch) {
  Graph* g = module.AddGraph(absl::StrCat("mlp_", batch));
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kF32, {batch, mlp.widths[0]}));
  for (size_t i = 1; i < mlp.widths.size(); ++i) {
    Value* w = g->AddParam(
        absl::StrCat("w", i - 1),
        TensorType(DType::kF32, {mlp.widths[i - 1], mlp.widths[i]}), true);
    Value* bias = g->AddParam(absl::StrCat("b", i - 1),
                              TensorType(DType::kF32, {mlp.widths[i]}), true);
    absl::StatusOr<Value*> y = b.Matmul(x, w);
    if (y.ok()) y = b.Binary("add", *y, bias);
    if (y.ok()) y = b.Unary("relu", *y);
    if (!y.ok()) return y.status();
    x = *y;
  }
  g->SetResults({x});
  g->SetDeclaredResultTypes({x->type()});
  return g;
}

int Main(int argc, char** argv) {
  absl::StatusOr<bench::SweepArgs> args =
      bench::ParseSweepArgs(argc, argv, "mlp");
  if (!args.ok()) return 1;
  const std::vector<Mlp> mlps = {{"MLP-1", {13, 512, 256, 128}},
                                 {"MLP-2", {479, 1024, 1024, 512, 256, 1}}};
  const std::vector<int64_t> batches =
      args->short_run ? std::vector<int64_t>{32, 512}
                      : std::vector<int64_t>{32, 64, 128, 256, 512};

  bench::SweepSpec spec;
  spec.name = "mlp";
  spec.chart_title = "f32 MLPs";
  spec.chart_batches = {32, 64, 128, 256, 512};
  spec.keys = {{"mlp", "mlp", 6, true}, {"batch", "batch", 6, false}};
  spec.warmup = args->short_run ? 5 : 20;
  spec.target_seconds = args->short_run ? 0.1 : 0.5;
  std::vector<bench::SweepCase> cases;
  for (const Mlp& mlp : mlps) {
    spec.workloads.push_back(mlp.name);
    for (int64_t batch : batches) {
      bench::SweepCase c;
      c.workload = mlp.name;
      c.batch = batch;
      c.keys = {mlp.name, absl::StrCat(batch)};
      c.build = [mlp, batch](Module& module) {
        return BuildMlp(module, mlp, batch);
      };
      cases.push_back(std::move(c));
    }
  }
  return bench::RunSweep(spec, *args, cases);
}

}  // namespace
}  // namespace hgc

int main(int argc, char** argv) { return hgc::Main(argc, argv); }
