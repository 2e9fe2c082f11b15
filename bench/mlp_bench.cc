// The paper's MLP workloads (oneDNN Graph Compiler, arXiv 2301.01333) in
// f32, bf16 or int8: hgc against the oneDNN primitive-per-op baseline of
// the same precision.
//
//   bazel run -c opt //bench:mlp -- [--threads=N] [--dtype=f32|bf16|int8]
//       [--short] [--csv=FILE] [--png=FILE] [--iters=N]
//
// Workloads: MLP-1 = DLRM bottom MLP 13 -> 512 -> 256 -> 128, MLP-2 = DLRM
// top MLP 479 -> 1024 -> 1024 -> 512 -> 256 -> 1, matmul + bias + ReLU per
// layer, weights and biases `const`, batch 32, 64, 128, 256, 512 (--short:
// 32 and 512 with fewer runs, for CI: well under a minute). bf16: every
// tensor bf16. int8: the QDQ form (BuildInt8Mlp: u8 activations with one
// scale, s8 weights with one scale per column, hidden layers requantized
// to u8), which the baseline runs as oneDNN int8 matmuls with scales, zero
// points and post-ops.
//
// Each row comes from bench/compare.h's BenchGraph (same process, same
// threads, same seeded inputs; constants bound outside the timed loops;
// medians; outputs checked against each other). FLOPs are 2*M*N*K per
// matmul (bias and ReLU not counted). "% of peak" compares GFLOP/s with
// the machine's peak for this thread count of the instruction the dtype's
// kernels use (bench/sweep.h: f32 FMA, vdpbf16ps or vpdpbusd, AMX where
// present, f32 FMA where the CPU has none of them), measured here: one
// throughput loop per thread, all threads at once, summed; sampled after
// every round of every case, each round's rate over the peak after it, the
// median over the rounds (bench/sweep.h, shared with bench:mha).
// --threading=openmp runs hgc's parallel steps on OpenMP (libgomp, the
// runtime the baseline's oneDNN uses) instead of hgc's own pool.
//
// Output: a table on stdout, the geomean speedup, a CSV (default mlp.csv,
// mlp_bf16.csv, mlp_int8.csv; under `bazel run` relative paths are the
// directory Bazel ran in), and a PNG chart drawn with gnuplot (default:
// the CSV's name with .png): speedup per batch for both MLPs and hgc's %
// of peak. Without gnuplot the chart is skipped with a note. Exit 1 when
// any workload's outputs disagree or something fails to compile or run.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/sweep.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace hgc {
namespace {

struct Mlp {
  std::string name;
  std::vector<int64_t> widths;
};

// @name: x[batch, widths[0]] -> [batch, widths.back()], matmul + bias +
// relu per layer, weights and biases const, all f32 or all bf16.
absl::StatusOr<const Graph*> BuildFloatMlp(Module& module, const Mlp& mlp,
                                           int64_t batch, DType dtype) {
  Graph* g = module.AddGraph(absl::StrCat("mlp_", batch));
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(dtype, {batch, mlp.widths[0]}));
  for (size_t i = 1; i < mlp.widths.size(); ++i) {
    Value* w = g->AddParam(
        absl::StrCat("w", i - 1),
        TensorType(dtype, {mlp.widths[i - 1], mlp.widths[i]}), true);
    Value* bias = g->AddParam(absl::StrCat("b", i - 1),
                              TensorType(dtype, {mlp.widths[i]}), true);
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

// The int8 MLP in the QDQ form ONNX exports: u8 activations with one scale
// (the input with zero point 32, the harness's u8 values being [0, 64]),
// s8 weights with one scale per output column, f32 bias and relu, and each
// hidden layer's output quantized to u8 (scale 4/255, zero point 0) and
// dequantized by the next; the last layer's output stays f32. The scales
// keep every layer's values around [-1, 4]: the harness's s8 weights are
// [-32, 32], so column j's scale is (1 + j % 4) / (50 * sqrt(K)).
absl::StatusOr<const Graph*> BuildInt8Mlp(Module& module, const Mlp& mlp,
                                          int64_t batch) {
  Graph* g = module.AddGraph(absl::StrCat("mlp_", batch));
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kU8, {batch, mlp.widths[0]}));
  double x_scale = 1.0 / 32, x_zero_point = 32;
  const double hidden_scale = 4.0 / 255;
  absl::StatusOr<Value*> y = x;
  for (size_t i = 1; i < mlp.widths.size() && y.ok(); ++i) {
    const int64_t k = mlp.widths[i - 1], n = mlp.widths[i];
    Value* w = g->AddParam(absl::StrCat("w", i - 1),
                           TensorType(DType::kS8, {k, n}), true);
    Value* bias = g->AddParam(absl::StrCat("b", i - 1),
                              TensorType(DType::kF32, {n}), true);
    std::vector<double> column_scales;
    for (int64_t j = 0; j < n; ++j) {
      column_scales.push_back((1 + j % 4) / (50 * std::sqrt(double(k))));
    }
    absl::StatusOr<Value*> xd = b.Create(
        "dequantize", {*y},
        {{"scale", Attribute::Float(x_scale)},
         {"zero_point", Attribute::Int(static_cast<int64_t>(x_zero_point))}});
    absl::StatusOr<Value*> wd =
        b.Create("dequantize", {w},
                 {{"scale", Attribute::FloatList(column_scales)},
                  {"axis", Attribute::Int(1)}});
    if (!xd.ok() || !wd.ok()) return xd.ok() ? wd.status() : xd.status();
    y = b.Matmul(*xd, *wd);
    if (y.ok()) y = b.Binary("add", *y, bias);
    if (y.ok()) y = b.Unary("relu", *y);
    if (y.ok() && i + 1 < mlp.widths.size()) {
      y = b.Create("quantize", {*y},
                   {{"scale", Attribute::Float(hidden_scale)},
                    {"zero_point", Attribute::Int(0)},
                    {"to", Attribute::Type(DType::kU8)}});
      x_scale = hidden_scale;
      x_zero_point = 0;
    }
  }
  if (!y.ok()) return y.status();
  g->SetResults({*y});
  g->SetDeclaredResultTypes({(*y)->type()});
  return g;
}

absl::StatusOr<const Graph*> BuildMlp(Module& module, const Mlp& mlp,
                                      int64_t batch, bench::SweepDtype dtype) {
  switch (dtype) {
    case bench::SweepDtype::kF32:
      return BuildFloatMlp(module, mlp, batch, DType::kF32);
    case bench::SweepDtype::kBf16:
      return BuildFloatMlp(module, mlp, batch, DType::kBF16);
    case bench::SweepDtype::kInt8:
      return BuildInt8Mlp(module, mlp, batch);
  }
  return absl::InvalidArgumentError("unknown dtype");
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
  spec.chart_title = absl::StrCat(bench::SweepDtypeName(args->dtype), " MLPs");
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
      c.build = [mlp, batch, dtype = args->dtype](Module& module) {
        return BuildMlp(module, mlp, batch, dtype);
      };
      cases.push_back(std::move(c));
    }
  }
  return bench::RunSweep(spec, *args, cases);
}

}  // namespace
}  // namespace hgc

int main(int argc, char** argv) { return hgc::Main(argc, argv); }
