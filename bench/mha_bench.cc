// The paper's MHA workloads (oneDNN Graph Compiler, arXiv 2301.01333) in
// f32: hgc against the oneDNN primitive-per-op baseline.
//
//   bazel run -c opt //bench:mha -- [--threads=N] [--short] [--csv=FILE]
//       [--png=FILE] [--iters=N]
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
// The graph is the textbook attention block as frameworks export it:
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
// geomean, CSV default mha.csv, chart default mha.png) as in bench:mlp, see
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

absl::StatusOr<const Graph*> BuildMha(Module& module, const Mha& mha,
                                      int64_t batch) {
  const int64_t b = batch, h = mha.heads, s = mha.seq, d = mha.head_size;
  Graph* g = module.AddGraph(
      absl::StrCat("mha_b", b, "_h", h, "_s", s, "_d", d));
  Builder builder(g);
  const TensorType qkv(DType::kF32, {b, h, s, d});
  Value* q = g->AddParam("q", qkv);
  Value* k = g->AddParam("k", qkv);
  Value* v = g->AddParam("v", qkv);
  Value* mask = g->AddParam("mask", TensorType(DType::kF32, {b, 1, 1, s}));
  absl::StatusOr<Value*> scale = builder.Splat(
      1.0 / std::sqrt(static_cast<double>(d)), TensorType(DType::kF32));
  if (!scale.ok()) return scale.status();
  absl::StatusOr<Value*> x = builder.Matmul(q, k, false, true);
  if (x.ok()) x = builder.Binary("mul", *x, *scale);
  if (x.ok()) x = builder.Binary("add", *x, mask);
  if (x.ok()) {
    x = builder.Create("softmax", {*x}, {{"axis", Attribute::Int(-1)}});
  }
  if (x.ok()) x = builder.Matmul(*x, v);
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
  spec.chart_title = "f32 MHA";
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
      c.build = [mha, batch](Module& module) {
        return BuildMha(module, mha, batch);
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
