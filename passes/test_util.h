// Test helpers for passes/*_test.cc: parse `.graph` text, run a pipeline,
// and check that a pipeline preserves what the reference interpreter
// computes.
#ifndef HGC_PASSES_TEST_UTIL_H_
#define HGC_PASSES_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "reference/reference_interpreter.h"
#include "support/diagnostics.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace pass_test {

// Parses `text`, which must be a valid module.
inline Module Parse(const std::string& text) {
  SourceManager sm;
  absl::StatusOr<Module> m = ParseModule(text, "test.graph", sm);
  if (!m.ok()) {
    ADD_FAILURE() << FormatError(m.status(), sm) << text;
    return Module();
  }
  return *std::move(m);
}

// Runs `pipeline` (a pipeline string) over `module`, verifying after each
// pass.
inline absl::Status RunPipeline(Module& module, const std::string& pipeline,
                                PassManagerOptions options = {}) {
  PassManager pm(std::move(options));
  absl::Status s = AddPipeline(pipeline, GlobalPassRegistry(), pm);
  if (!s.ok()) return s;
  return pm.Run(module);
}

// Parses `text`, runs `pipeline`, and returns the printed result (with a
// test failure on any error).
inline std::string Optimize(const std::string& text,
                            const std::string& pipeline) {
  Module m = Parse(text);
  absl::Status s = RunPipeline(m, pipeline);
  EXPECT_TRUE(s.ok()) << s;
  return PrintModule(m);
}

// The number of ops of `kind` in `graph`.
inline int CountOps(const Graph& graph, const std::string& kind) {
  int n = 0;
  for (const auto& op : graph.ops()) n += op->kind() == kind;
  return n;
}

// The outputs of the first graph of `text` before and after `pipeline`,
// run by the interpreter on the same seeded random inputs. Check
// HasFatalFailure() after it.
inline void RunBeforeAndAfter(const std::string& text,
                              const std::string& pipeline, uint64_t seed,
                              std::vector<Tensor>& expected,
                              std::vector<Tensor>& actual) {
  Module original = Parse(text);
  Module optimized = CloneModule(original);
  absl::Status s = RunPipeline(optimized, pipeline);
  ASSERT_TRUE(s.ok()) << s;
  const Graph& before = *original.graphs().front();
  const Graph& after = *optimized.FindGraph(before.name());
  std::vector<Tensor> inputs;
  for (int i = 0; i < before.num_params(); ++i) {
    absl::StatusOr<Tensor> t =
        RandomTensor(before.param(i)->type(), seed, before.param(i)->name());
    ASSERT_TRUE(t.ok()) << t.status();
    inputs.push_back(*t);
  }
  absl::StatusOr<std::vector<Tensor>> e = Interpret(before, inputs);
  absl::StatusOr<std::vector<Tensor>> a = Interpret(after, inputs);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(e->size(), a->size());
  expected = *std::move(e);
  actual = *std::move(a);
}

// Runs the first graph of `text` before and after `pipeline` on seeded
// random inputs and expects the same outputs within dtype tolerances.
inline void ExpectSameNumbers(const std::string& text,
                              const std::string& pipeline, uint64_t seed = 1) {
  std::vector<Tensor> expected, actual;
  RunBeforeAndAfter(text, pipeline, seed, expected, actual);
  if (::testing::Test::HasFatalFailure()) return;
  for (size_t i = 0; i < actual.size(); ++i) {
    absl::StatusOr<CompareResult> r = CompareTensors(actual[i], expected[i]);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->ok()) << "output " << i << ": " << r->Summary();
  }
}

// The same, expecting bit-identical outputs (a rewrite that only
// relabels).
inline void ExpectBitIdentical(const std::string& text,
                               const std::string& pipeline,
                               uint64_t seed = 1) {
  std::vector<Tensor> expected, actual;
  RunBeforeAndAfter(text, pipeline, seed, expected, actual);
  if (::testing::Test::HasFatalFailure()) return;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].type(), expected[i].type());
    EXPECT_EQ(std::memcmp(actual[i].raw(), expected[i].raw(),
                          actual[i].size_in_bytes()),
              0)
        << "output " << i;
  }
}

}  // namespace pass_test
}  // namespace hgc

#endif  // HGC_PASSES_TEST_UTIL_H_
