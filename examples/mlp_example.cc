// Example: the DLRM bottom MLP (13 -> 512 -> 256 -> 128, ReLU after every
// layer, batch 128) built in C++ with hgc::Builder, compiled through the
// public API (hgc/hgc.h), run on caller-owned buffers and checked against
// the reference interpreter. No driver, no `.graph` file.
//
//   bazel run -c opt //examples:mlp_example [-- --threads=N]
//
// Prints one line, e.g.
//   mlp_example: @dlrm_bottom f32[128, 128] on 2 threads: PASS (max_abs_err=...)
// and exits 0 on PASS, 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "hgc/hgc.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace {

// Adds @name: x[batch, widths[0]] -> [batch, widths.back()], one
// matmul + bias + relu per layer, weights and biases `const`.
absl::StatusOr<hgc::Graph*> BuildMlp(hgc::Module& module, const char* name,
                                     int64_t batch,
                                     const std::vector<int64_t>& widths) {
  using hgc::DType;
  using hgc::TensorType;
  hgc::Graph* g = module.AddGraph(name);
  hgc::Builder b(g);
  hgc::Value* x = g->AddParam("x", TensorType(DType::kF32, {batch, widths[0]}));
  for (size_t i = 1; i < widths.size(); ++i) {
    hgc::Value* w = g->AddParam(
        absl::StrCat("w", i - 1),
        TensorType(DType::kF32, {widths[i - 1], widths[i]}), /*is_const=*/true);
    hgc::Value* bias = g->AddParam(absl::StrCat("b", i - 1),
                                   TensorType(DType::kF32, {widths[i]}), true);
    absl::StatusOr<hgc::Value*> y = b.Matmul(x, w);
    if (y.ok()) y = b.Binary("add", *y, bias);
    if (y.ok()) y = b.Unary("relu", *y);
    if (!y.ok()) return y.status();
    x = *y;
  }
  g->SetResults({x});
  g->SetDeclaredResultTypes({x->type()});
  return g;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "mlp_example: error: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  hgc::Options options;
  options.num_threads = 2;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, "--threads=") ||
        !absl::SimpleAtoi(arg, &options.num_threads) ||
        options.num_threads < 1) {
      std::fprintf(stderr, "usage: mlp_example [--threads=N]\n");
      return 1;
    }
  }

  // 1. Build the graph in C++.
  hgc::Module module;
  absl::StatusOr<hgc::Graph*> graph =
      BuildMlp(module, "dlrm_bottom", 128, {13, 512, 256, 128});
  if (!graph.ok()) return Fail(graph.status());

  // 2. Compile it.
  absl::StatusOr<std::unique_ptr<hgc::CompiledGraph>> compiled =
      hgc::Compile(module, options);
  if (!compiled.ok()) return Fail(compiled.status());
  hgc::CompiledGraph& mlp = **compiled;

  // 3. Bind the weights once (random here; a model would load them).
  std::vector<hgc::Tensor> params;
  for (int i = 0; i < mlp.num_params(); ++i) {
    absl::StatusOr<hgc::Tensor> t =
        hgc::RandomTensor(mlp.param_types()[i], /*seed=*/42, mlp.param_names()[i]);
    if (!t.ok()) return Fail(t.status());
    params.push_back(std::move(*t));
  }
  if (absl::Status s = mlp.SetConstants(params); !s.ok()) return Fail(s);

  // 4. Execute on caller-owned buffers: one pointer per parameter (const
  //    entries are ignored), one per result.
  absl::StatusOr<hgc::Tensor> out = hgc::Tensor::Create(mlp.result_types()[0]);
  if (!out.ok()) return Fail(out.status());
  std::vector<const void*> inputs(mlp.num_params(), nullptr);
  inputs[0] = params[0].raw();
  std::vector<void*> outputs = {out->mutable_raw()};
  if (absl::Status s = mlp.Execute(inputs, outputs); !s.ok()) return Fail(s);

  // 5. Check against the reference interpreter.
  absl::StatusOr<std::vector<hgc::Tensor>> expected =
      hgc::Interpret(**graph, params);
  if (!expected.ok()) return Fail(expected.status());
  absl::StatusOr<hgc::CompareResult> cmp =
      hgc::CompareTensors(*out, (*expected)[0]);
  if (!cmp.ok()) return Fail(cmp.status());
  std::printf("mlp_example: @%s %s on %d threads: %s (max_abs_err=%.3g)\n",
              mlp.name().c_str(), mlp.result_types()[0].ToString().c_str(),
              mlp.num_threads(), cmp->ok() ? "PASS" : "FAIL",
              cmp->max_abs_error);
  if (!cmp->ok()) std::printf("%s\n", cmp->Summary().c_str());
  return cmp->ok() ? 0 : 1;
}
