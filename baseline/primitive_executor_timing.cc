// Quick timing of the primitive-based baseline on the DLRM MLPs and an MHA
// block (graphs built with hgc::Builder), to sanity-check its GFLOP/s:
//
//   bazel run -c opt //baseline:primitive_executor_timing -- [--threads=1,2]
//       [--iters=N] [--dtype=f32|bf16] [--no-fusion] [--verbose]
//
// Each configuration: SetConstants once, 20 warm-up runs, then --iters runs
// timed one by one (RunInto into preallocated outputs); prints the median
// and minimum ms per run and GFLOP/s (matmul flops only) at the median.
// bench/ holds the real Google Benchmark sweeps; this is a smoke check.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "baseline/primitive_executor.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "tensor_util/random_fill.h"

namespace hgc {
namespace {

struct Workload {
  std::string name;
  Graph* graph;
  double flops;
};

absl::StatusOr<Workload> Mlp(Module& module, const std::string& name,
                             const std::vector<int64_t>& widths, int64_t batch,
                             DType dtype) {
  Graph* g = module.AddGraph(name);
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(dtype, {batch, widths[0]}));
  double flops = 0;
  for (size_t i = 1; i < widths.size(); ++i) {
    Value* w = g->AddParam(absl::StrCat("w", i),
                           TensorType(dtype, {widths[i - 1], widths[i]}), true);
    Value* bias =
        g->AddParam(absl::StrCat("b", i), TensorType(dtype, {widths[i]}), true);
    absl::StatusOr<Value*> v = b.Matmul(x, w);
    if (v.ok()) v = b.Binary("add", *v, bias);
    if (v.ok()) v = b.Unary("relu", *v);
    if (!v.ok()) return v.status();
    x = *v;
    flops += 2.0 * batch * widths[i - 1] * widths[i];
  }
  g->SetResults({x});
  return Workload{name, g, flops};
}

absl::StatusOr<Workload> Mha(Module& module, int64_t batch, int64_t heads,
                             int64_t seq, int64_t head_dim, DType dtype) {
  Graph* g = module.AddGraph("mha");
  Builder b(g);
  TensorType t(dtype, {batch, heads, seq, head_dim});
  Value* q = g->AddParam("q", t);
  Value* k = g->AddParam("k", t);
  Value* v = g->AddParam("v", t);
  Value* mask = g->AddParam("mask", TensorType(dtype, {batch, 1, 1, seq}));
  absl::StatusOr<Value*> s = b.Matmul(q, k, false, true);
  TensorType scalar_type;  // f32[] by default
  scalar_type.dtype = dtype;
  absl::StatusOr<Value*> c = b.Splat(0.125, scalar_type);
  if (!s.ok() || !c.ok()) return absl::InternalError("mha");
  absl::StatusOr<Value*> x = b.Binary("mul", *s, *c);
  if (x.ok()) x = b.Binary("add", *x, mask);
  if (x.ok()) x = b.Create("softmax", {*x});
  if (x.ok()) x = b.Matmul(*x, v);
  if (!x.ok()) return x.status();
  g->SetResults({*x});
  return Workload{"mha", g, 4.0 * batch * heads * seq * seq * head_dim};
}

int Main(int argc, char** argv) {
  std::vector<int> thread_counts = {1, 2};
  int iters = 300;
  bool fusion = true, verbose = false;
  DType dtype = DType::kF32;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (absl::StartsWith(arg, "--threads=")) {
      thread_counts.clear();
      for (absl::string_view t : absl::StrSplit(arg.substr(10), ',')) {
        int n = 0;
        if (!absl::SimpleAtoi(t, &n) || n < 1) {
          std::fprintf(stderr, "bad --threads\n");
          return 1;
        }
        thread_counts.push_back(n);
      }
    } else if (absl::StartsWith(arg, "--iters=")) {
      if (!absl::SimpleAtoi(arg.substr(8), &iters) || iters < 1) {
        std::fprintf(stderr, "bad --iters\n");
        return 1;
      }
    } else if (arg == "--dtype=bf16") {
      dtype = DType::kBF16;
    } else if (arg == "--dtype=f32") {
      dtype = DType::kF32;
    } else if (arg == "--no-fusion") {
      fusion = false;
    } else if (arg == "--verbose") {
      verbose = true;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return 1;
    }
  }

  Module module;
  std::vector<Workload> workloads;
  for (auto w :
       {Mlp(module, "mlp_bottom", {13, 512, 256, 128}, 128, dtype),
        Mlp(module, "mlp_top", {479, 1024, 1024, 512, 256, 1}, 128, dtype),
        Mha(module, 1, 16, 384, 64, dtype)}) {
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
      return 1;
    }
    workloads.push_back(*w);
  }

  std::printf("%-11s %4s %7s %10s %10s %9s\n", "graph", "dt", "threads",
              "median_ms", "min_ms", "GFLOP/s");
  for (const Workload& w : workloads) {
    std::vector<Tensor> inputs;
    for (const auto& p : w.graph->params()) {
      absl::StatusOr<Tensor> t = RandomTensor(p->type(), 1, p->name());
      if (!t.ok()) return 1;
      inputs.push_back(*t);
    }
    for (int threads : thread_counts) {
      PrimitiveExecutor::Options options;
      options.num_threads = threads;
      options.fuse_post_ops = fusion;
      absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> exec =
          PrimitiveExecutor::Create(*w.graph, options);
      if (!exec.ok()) {
        std::fprintf(stderr, "%s\n", exec.status().ToString().c_str());
        return 1;
      }
      if (absl::Status s = (*exec)->SetConstants(inputs); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      std::vector<Tensor> outputs;
      for (const Value* r : w.graph->results()) {
        outputs.push_back(*Tensor::Create(r->type()));
      }
      std::vector<double> ms;
      for (int i = 0; i < 20 + iters; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        absl::Status s = (*exec)->RunInto(inputs, absl::MakeSpan(outputs));
        auto t1 = std::chrono::steady_clock::now();
        if (!s.ok()) {
          std::fprintf(stderr, "%s\n", s.ToString().c_str());
          return 1;
        }
        if (i >= 20) {
          ms.push_back(
              std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
      }
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2];
      std::printf("%-11s %4s %7d %10.4f %10.4f %9.1f\n", w.name.c_str(),
                  std::string(DTypeName(dtype)).c_str(), threads, median, ms[0],
                  w.flops / (median * 1e-3) / 1e9);
      if (verbose) std::printf("%s", (*exec)->Summary().c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace hgc

int main(int argc, char** argv) { return hgc::Main(argc, argv); }
