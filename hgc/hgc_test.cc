// Tests of the public API (hgc/hgc.h): text, file and builder input,
// constants, repeated and concurrent execution, and error reporting. Every
// numeric result is compared with the reference interpreter (hgc::Interpret)
// on the graph as written.
#include "hgc/hgc.h"

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "hgc/test_graphs.h"
#include "reference/check.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

constexpr char kMlpText[] = R"(// a two-layer MLP
graph @mlp(%x: f32[8, 13],
           %w0: f32[13, 64] const, %b0: f32[64] const,
           %w1: f32[64, 32] const, %b1: f32[32] const) -> f32[8, 32] {
  %0 = matmul(%x, %w0)
  %1 = add(%0, %b0)
  %2 = relu(%1)
  %3 = matmul(%2, %w1)
  %4 = add(%3, %b1)
  %5 = relu(%4)
  return %5
}
)";

// One random tensor per parameter of `types`, seeded by `seed`.
std::vector<Tensor> RandomParams(const std::vector<TensorType>& types,
                                 uint64_t seed) {
  std::vector<Tensor> params;
  for (size_t i = 0; i < types.size(); ++i) {
    params.push_back(*RandomTensor(types[i], seed, static_cast<int64_t>(i)));
  }
  return params;
}

// Expects `actual` to match the interpreter on `graph` with `params`.
void ExpectMatchesReference(const Graph& graph,
                            const std::vector<Tensor>& params,
                            const std::vector<Tensor>& actual) {
  // The model of `hgc --check` (reference/check.h).
  absl::StatusOr<std::vector<CompareResult>> results =
      CompareWithReference(graph, params, actual);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(actual.size(), results->size());
  for (size_t i = 0; i < results->size(); ++i) {
    EXPECT_TRUE((*results)[i].ok())
        << "output " << i << ": " << (*results)[i].Summary();
  }
}

TEST(HgcApiTest, CompileTextSetConstantsExecute) {
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
      CompileText(kMlpText, Options());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  CompiledGraph& cg = **compiled;
  EXPECT_EQ(cg.name(), "mlp");
  ASSERT_EQ(cg.num_params(), 5);
  EXPECT_EQ(cg.param_names()[0], "x");
  EXPECT_FALSE(cg.param_is_const()[0]);
  EXPECT_TRUE(cg.param_is_const()[1]);
  EXPECT_TRUE(cg.has_constants());
  ASSERT_EQ(cg.num_results(), 1);
  EXPECT_EQ(cg.result_types()[0], TensorType(DType::kF32, {8, 32}));

  std::vector<Tensor> params = RandomParams(cg.param_types(), 1);
  ASSERT_TRUE(cg.SetConstants(params).ok());
  // Caller-owned buffers: pointers in, pointers out.
  Tensor out = *Tensor::Create(cg.result_types()[0]);
  std::vector<const void*> in = {params[0].raw(), nullptr, nullptr, nullptr,
                                 nullptr};
  std::vector<void*> outs = {out.mutable_raw()};
  ASSERT_TRUE(cg.Execute(in, outs).ok());

  SourceManager sm;
  Module module = *ParseModule(kMlpText, "mlp.graph", sm);
  ExpectMatchesReference(*module.graphs()[0], params, {out});
}

TEST(HgcApiTest, BuilderGraphCompiles) {
  Module module;
  const Graph* g = BuildMlp(module, "built_mlp", 16, {13, 48, 24, 8});
  Options options;
  options.num_threads = 2;
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
      Compile(module, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ((*compiled)->num_threads(), 2);
  std::vector<Tensor> params = RandomParams((*compiled)->param_types(), 7);
  ASSERT_TRUE((*compiled)->SetConstants(params).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*compiled)->Execute(params);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectMatchesReference(*g, params, *out);
}

TEST(HgcApiTest, ConstantsRebindAndPointerForm) {
  Module module;
  const Graph* g = BuildMlp(module, "built_mlp", 4, {13, 32, 16});
  std::unique_ptr<CompiledGraph> cg = *Compile(module, Options());
  // The module is not needed by the compiled graph; keep it for the oracle.
  for (uint64_t seed : {11, 12}) {
    std::vector<Tensor> params = RandomParams(cg->param_types(), seed);
    std::vector<const void*> ptrs;
    for (const Tensor& t : params) ptrs.push_back(t.raw());
    ASSERT_TRUE(cg->SetConstants(ptrs).ok());
    absl::StatusOr<std::vector<Tensor>> out = cg->Execute(params);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectMatchesReference(*g, params, *out);
  }
}

TEST(HgcApiTest, RepeatedExecutionIsDeterministic) {
  Module module;
  const Graph* g = BuildMlp(module, "built_mlp", 32, {13, 64, 32});
  std::unique_ptr<CompiledGraph> cg = *Compile(module, Options());
  std::vector<Tensor> params = RandomParams(cg->param_types(), 3);
  ASSERT_TRUE(cg->SetConstants(params).ok());
  std::vector<Tensor> first = *cg->Execute(params);
  ExpectMatchesReference(*g, params, first);
  Tensor out = *Tensor::Create(cg->result_types()[0]);
  for (int i = 0; i < 20; ++i) {
    std::vector<const void*> in(cg->num_params(), nullptr);
    in[0] = params[0].raw();
    std::vector<void*> outs = {out.mutable_raw()};
    ASSERT_TRUE(cg->Execute(in, outs).ok());
    absl::StatusOr<CompareResult> r =
        CompareTensors(out, first[0], Tolerance{0, 0});
    ASSERT_TRUE(r.ok() && r->ok()) << "run " << i;
  }
}

TEST(HgcApiTest, ConcurrentExecuteFromFourThreads) {
  Module module;
  const Graph* g = BuildMlp(module, "built_mlp", 64, {13, 128, 64, 32});
  Options options;
  options.num_threads = 2;
  std::unique_ptr<CompiledGraph> cg = *Compile(module, options);
  std::vector<Tensor> params = RandomParams(cg->param_types(), 5);
  ASSERT_TRUE(cg->SetConstants(params).ok());

  constexpr int kThreads = 4, kRunsPerThread = 8;
  // Each (thread, run) gets its own input; its expected output comes from
  // the interpreter beforehand.
  std::vector<std::vector<Tensor>> inputs;
  for (int i = 0; i < kThreads * kRunsPerThread; ++i) {
    std::vector<Tensor> p = params;
    p[0] = *RandomTensor(cg->param_types()[0], 100 + i, "x");
    inputs.push_back(std::move(p));
  }
  std::vector<std::vector<Tensor>> actual(inputs.size());
  std::vector<absl::Status> status(inputs.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        int i = t * kRunsPerThread + r;
        actual[i].push_back(*Tensor::Create(cg->result_types()[0]));
        std::vector<const void*> in(cg->num_params(), nullptr);
        in[0] = inputs[i][0].raw();
        std::vector<void*> outs = {actual[i][0].mutable_raw()};
        status[i] = cg->Execute(in, outs);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(status[i].ok()) << status[i];
    ExpectMatchesReference(*g, inputs[i], actual[i]);
  }
}

TEST(HgcApiTest, SyntaxErrorIsFormattedWithFileLineCol) {
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled = CompileText(
      "graph @g(%x: f32[4]) -> f32[4] {\n  %y = relux(%x)\n  return %y\n}\n",
      Options(), "bad.graph");
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(compiled.status().message());
  EXPECT_TRUE(absl::StartsWith(message, "bad.graph:2:")) << message;
  EXPECT_TRUE(absl::StrContains(message, ": error: ")) << message;
  EXPECT_TRUE(absl::StrContains(message, "relux(%x)")) << message;  // line
  EXPECT_TRUE(absl::StrContains(message, "^")) << message;          // caret
}

TEST(HgcApiTest, MissingFileAndUnknownGraph) {
  absl::StatusOr<std::unique_ptr<CompiledGraph>> missing =
      CompileFile("no/such/file.graph", Options());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "file.graph"));

  Options options;
  options.graph = "nope";
  absl::StatusOr<std::unique_ptr<CompiledGraph>> unknown =
      CompileText(kMlpText, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "@mlp"))
      << unknown.status();

  options = Options();
  options.num_threads = 0;
  EXPECT_FALSE(CompileText(kMlpText, options).ok());
}

TEST(HgcApiTest, NumThreadsHasAnUpperBound) {
  Options options;
  for (int n : {100000, 1 << 30}) {
    options.num_threads = n;
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg =
        CompileText(kMlpText, options);
    ASSERT_FALSE(cg.ok());
    EXPECT_EQ(cg.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(cg.status().message(),
                                  "Options::num_threads must be in [1, "))
        << cg.status();
  }
}

TEST(HgcApiTest, CompileThreadsGiveTheSameResults) {
  std::vector<Tensor> outputs;
  for (int compile_threads : {0, 1, 3}) {
    Options options;
    options.num_threads = 2;
    options.compile_threads = compile_threads;
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg =
        CompileText(kMlpText, options);
    ASSERT_TRUE(cg.ok()) << cg.status();
    std::vector<Tensor> params = RandomParams((*cg)->param_types(), 5);
    ASSERT_TRUE((*cg)->SetConstants(params).ok());
    absl::StatusOr<std::vector<Tensor>> out = (*cg)->Execute(params);
    ASSERT_TRUE(out.ok()) << out.status();
    outputs.push_back((*out)[0]);
  }
  for (size_t i = 1; i < outputs.size(); ++i) {
    ASSERT_EQ(outputs[i].size_in_bytes(), outputs[0].size_in_bytes());
    EXPECT_EQ(std::memcmp(outputs[i].raw(), outputs[0].raw(),
                          outputs[0].size_in_bytes()),
              0);
  }
  for (int bad : {-1, 65}) {
    Options options;
    options.compile_threads = bad;
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg =
        CompileText(kMlpText, options);
    ASSERT_FALSE(cg.ok());
    EXPECT_EQ(cg.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(HgcApiTest, RefusesAGraphLargerThanTheMachine) {
  // Each output is 4 GiB, under the per-tensor cap; 512 of them are not.
  std::string text = "graph @big(%x: f32[16384, 65536]) -> (";
  std::string body, results;
  for (int i = 0; i < 512; ++i) {
    text += i ? ", f32[16384, 65536]" : "f32[16384, 65536]";
    absl::StrAppend(&body, "  %y", i, " = ", i % 2 ? "neg" : "relu", "(%x)\n");
    absl::StrAppend(&results, i ? ", " : "", "%y", i);
  }
  text += ") {\n" + body + "  return " + results + "\n}\n";
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg =
      CompileText(text, Options(), "big.graph");
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(cg.status().message(), "@big needs 2052.0 GiB"))
      << cg.status();
}

TEST(HgcApiTest, ExecuteArgumentErrors) {
  std::unique_ptr<CompiledGraph> cg = *CompileText(kMlpText, Options());
  Tensor out = *Tensor::Create(cg->result_types()[0]);
  std::vector<Tensor> params = RandomParams(cg->param_types(), 2);
  std::vector<const void*> in = {params[0].raw(), nullptr, nullptr, nullptr,
                                 nullptr};
  std::vector<void*> outs = {out.mutable_raw()};
  // Constants not bound yet.
  EXPECT_EQ(cg->Execute(in, outs).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(cg->SetConstants(params).ok());
  // Wrong counts, null input, null output.
  EXPECT_EQ(cg->Execute(absl::MakeSpan(in).subspan(0, 1), outs).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<const void*> null_in = {nullptr, nullptr, nullptr, nullptr,
                                      nullptr};
  EXPECT_EQ(cg->Execute(null_in, outs).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<void*> null_out = {nullptr};
  EXPECT_EQ(cg->Execute(in, null_out).code(),
            absl::StatusCode::kInvalidArgument);
  // A constant of the wrong type.
  std::vector<Tensor> bad = params;
  bad[1] = *Tensor::Create(TensorType(DType::kF32, {2, 2}));
  absl::Status s = cg->SetConstants(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "%w0")) << s;
  EXPECT_TRUE(cg->Execute(in, outs).ok());
}

}  // namespace
}  // namespace hgc
