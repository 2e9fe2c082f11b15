// The paper's MHA workloads (oneDNN Graph Compiler, arXiv 2301.01333) in
// f32, bf16 or int8: hgc against the oneDNN primitive-per-op baseline of
// the same precision.
//
//   bazel run -c opt //bench:mha -- [--threads=N] [--dtype=f32|bf16|int8]
//       [--short] [--csv=FILE] [--png=FILE] [--iters=N]
//
// Workloads (heads x head size = hidden):
//   MHA-1       seq 128, 8 heads of 96 (hidden 768)
//   MHA-2       seq 128, 12 heads of 64 (hidden 768)
//   MHA-3       seq 384, 8 heads of 128 (hidden 1024)
//   MHA-4       seq 512, 16 heads of 64 (hidden 1024)
// at batch 1, 8, 32, 64, and
//   bert-large  seq 384, 16 heads of 64, at batch 1 and 8.
// --short (for CI, well under a minute on 2 cores): MHA-1 and MHA-2 at
// batch 1, MHA-2 at batch 8, bert-large at batch 1, with fewer runs.
//
// The f32 graph is the textbook attention block as frameworks export it
// (bf16: every tensor bf16; int8: the QDQ form, see BuildMha):
// q, k, v: f32[B, H, S, D] and mask: f32[B, 1, 1, S] inputs,
//   s = matmul(q, k) {transpose_b = true}; t = mul(s, 1/sqrt(D) constant);
//   m = add(t, mask); p = softmax(m) {axis = -1}; o = matmul(p, v);
//   transpose(o) {perm = [0, 2, 1, 3]}; reshape to [B, S, H*D].
// The inputs are the harness's seeded uniform [-1, 1) values (support/
// random_fill.h), the mask included: the scaled scores have a standard
// deviation of about 1/3 before the mask, so softmax is far from
// saturating and the check compares real probabilities.
//
// The baseline (baseline/primitive_executor.h) runs it as a framework does:
// one matmul primitive with the scale and the mask as binary post-ops, the
// softmax primitive, the second matmul, and a reorder for the transpose
// (the reshape is free); its steps and oneDNN implementations are printed
// before the table.
//
// FLOPs: the two matmuls, 2*2*B*H*S^2*D per run. The rest (peak, table,
// geomean, CSV default mha.csv or mha_DTYPE.csv, chart beside it) as in
// bench:mlp, see
// bench/sweep.h; "compile ms" is hgc's compile time for the block (median
// of three). Exit 1 when any workload's outputs disagree or something fails
// to compile or run.
#include <cmath>
#include <cstdint>
#include <cstdio>
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

struct Mha {
  std::string name;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_size = 0;
  std::vector<int64_t> batches;
  std::vector<int64_t> short_batches;  // --short
};

// `x` dequantized: (x - zero_point) / 32, so that the harness's u8 values
// [0, 64] (zero point 32) and s8 values [-32, 32] (zero point 0) become
// [-1, 1], the f32 workload's range.
absl::StatusOr<Value*> Dequantize(Builder& builder, Value* x,
                                  int64_t zero_point) {
  return builder.Create("dequantize", {x},
                        {{"scale", Attribute::Float(1.0 / 32)},
                         {"zero_point", Attribute::Int(zero_point)}});
}

// The attention block in `dtype`: f32 or bf16 throughout (mask included),
// or int8 in the QDQ form (u8 q with zero point 32, s8 k and v, dequantized
// before the matmuls; the probabilities quantized to u8 with scale 1/255
// and dequantized before P.V; an f32 mask and output).
absl::StatusOr<const Graph*> BuildMha(Module& module, const Mha& mha,
                                      int64_t batch, bench::SweepDtype dtype) {
  const int64_t b = batch, h = mha.heads, s = mha.seq, d = mha.head_size;
  Graph* g = module.AddGraph(
      absl::StrCat("mha_b", b, "_h", h, "_s", s, "_d", d));
  Builder builder(g);
  const bool int8 = dtype == bench::SweepDtype::kInt8;
  const DType float_type =
      dtype == bench::SweepDtype::kBf16 ? DType::kBF16 : DType::kF32;
  const Shape qkv = {b, h, s, d};
  absl::StatusOr<Value*> q =
      g->AddParam("q", TensorType(int8 ? DType::kU8 : float_type, qkv));
  absl::StatusOr<Value*> k =
      g->AddParam("k", TensorType(int8 ? DType::kS8 : float_type, qkv));
  absl::StatusOr<Value*> v =
      g->AddParam("v", TensorType(int8 ? DType::kS8 : float_type, qkv));
  Value* mask = g->AddParam("mask", TensorType(float_type, {b, 1, 1, s}));
  if (int8) {
    q = Dequantize(builder, *q, 32);
    if (q.ok()) k = Dequantize(builder, *k, 0);
    if (k.ok()) v = Dequantize(builder, *v, 0);
    if (!v.ok()) return v.status();
  }
  absl::StatusOr<Value*> scale = builder.Splat(
      1.0 / std::sqrt(static_cast<double>(d)), TensorType(float_type));
  if (!scale.ok()) return scale.status();
  absl::StatusOr<Value*> x = builder.Matmul(*q, *k, false, true);
  if (x.ok()) x = builder.Binary("mul", *x, *scale);
  if (x.ok()) x = builder.Binary("add", *x, mask);
  if (x.ok()) {
    x = builder.Create("softmax", {*x}, {{"axis", Attribute::Int(-1)}});
  }
  if (x.ok() && int8) {
    const AttrMap probs = {{"scale", Attribute::Float(1.0 / 255)},
                           {"zero_point", Attribute::Int(0)}};
    AttrMap to_u8 = probs;
    to_u8["to"] = Attribute::Type(DType::kU8);
    x = builder.Create("quantize", {*x}, to_u8);
    if (x.ok()) x = builder.Create("dequantize", {*x}, probs);
  }
  if (x.ok()) x = builder.Matmul(*x, *v);
  if (x.ok()) {
    x = builder.Create("transpose", {*x},
                       {{"perm", Attribute::IntList({0, 2, 1, 3})}});
  }
  if (x.ok()) {
    x = builder.Create("reshape", {*x},
                       {{"shape", Attribute::IntList({b, s, h * d})}});
  }
  if (!x.ok()) return x.status();
  g->SetResults({*x});
  g->SetDeclaredResultTypes({(*x)->type()});
  return g;
}

int Main(int argc, char** argv) {
  absl::StatusOr<bench::SweepArgs> args =
      bench::ParseSweepArgs(argc, argv, "mha");
  if (!args.ok()) return 1;
  const std::vector<int64_t> all = {1, 8, 32, 64};
  const std::vector<Mha> workloads = {
      {"MHA-1", 128, 8, 96, all, {1}},
      {"MHA-2", 128, 12, 64, all, {1, 8}},
      {"MHA-3", 384, 8, 128, all, {}},
      {"MHA-4", 512, 16, 64, all, {}},
      {"bert-large", 384, 16, 64, {1, 8}, {1}},
  };

  bench::SweepSpec spec;
  spec.name = "mha";
  spec.chart_title = absl::StrCat(bench::SweepDtypeName(args->dtype), " MHA");
  spec.chart_batches = all;
  spec.keys = {{"workload", "workload", 10, true},
               {"batch", "batch", 5, false},
               {"heads", "heads", 5, false},
               {"seq", "seq", 5, false},
               {"head_size", "head", 4, false}};
  spec.warmup = args->short_run ? 3 : 5;
  spec.target_seconds = args->short_run ? 0.1 : 0.5;
  std::vector<bench::SweepCase> cases;
  for (const Mha& mha : workloads) {
    spec.workloads.push_back(mha.name);
    for (int64_t batch : args->short_run ? mha.short_batches : mha.batches) {
      bench::SweepCase c;
      c.workload = mha.name;
      c.batch = batch;
      c.keys = {mha.name, absl::StrCat(batch), absl::StrCat(mha.heads),
                absl::StrCat(mha.seq), absl::StrCat(mha.head_size)};
      c.build = [mha, batch, dtype = args->dtype](Module& module) {
        return BuildMha(module, mha, batch, dtype);
      };
      cases.push_back(std::move(c));
    }
  }
  // The baseline's steps, once per distinct chain.
  std::string last_steps;
  return bench::RunSweep(spec, *args, cases, [&](const bench::SweepRow& row) {
    if (row.result.baseline_steps == last_steps) return;
    last_steps = row.result.baseline_steps;
    std::printf("baseline from %s batch %lld: %s\n",
                row.sweep_case->workload.c_str(),
                static_cast<long long>(row.sweep_case->batch),
                last_steps.c_str());
  });
}

}  // namespace
}  // namespace hgc

int main(int argc, char** argv) { return hgc::Main(argc, argv); }
