// The primitive baseline against the reference interpreter on the
// differential fuzzer's random graphs (fuzz/graph_generator.h): every graph
// the interpreter computes, the baseline computes within --check's judgement
// (the output dtype's tolerance plus the reference's error bound), or
// refuses by name. `hgc --bench` checks each run as well (a disagreement
// there fails the bench); this keeps the baseline right on graphs no golden
// names.
//
// Elements whose reference value is NaN or infinite are not compared:
// oneDNN follows its own conventions there (binary max and min return the
// number where one operand is NaN, rsqrt(-0) is +inf, gelu(-inf) is NaN),
// which --bench reports as a disagreement when a graph meets them. The count
// of such elements is printed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "baseline/primitive_executor.h"
#include "fuzz/graph_generator.h"
#include "gtest/gtest.h"
#include "ir/dtype.h"
#include "ir/printer.h"
#include "ir/tensor.h"
#include "reference/check.h"
#include "reference/error_bound.h"
#include "tensor_util/random_inputs.h"

namespace hgc {
namespace {

// What one seed did: "" when the baseline agreed or refused the graph,
// otherwise what went wrong.
struct SeedOutcome {
  bool refused = false;
  int64_t non_finite = 0;  // elements left out (see above)
  std::string failure;
};

// Sets the elements of `outputs` and of `reference` whose reference value
// is not finite to 0 in both; returns how many there were.
int64_t ZeroNonFinite(BoundedResults& reference, std::vector<Tensor>& outputs) {
  int64_t count = 0;
  for (size_t i = 0; i < outputs.size() && i < reference.values.size(); ++i) {
    Tensor& expected = reference.values[i];
    if (!IsFloat(expected.dtype())) continue;
    for (int64_t e = 0; e < expected.num_elements(); ++e) {
      if (std::isfinite(expected.GetDouble(e))) continue;
      expected.SetDouble(e, 0);
      outputs[i].SetDouble(e, 0);
      ++count;
    }
  }
  return count;
}

SeedOutcome RunSeed(uint64_t seed, GraphKind kind, int threads) {
  SeedOutcome outcome;
  GenerateOptions gen;
  gen.fixed_kind = true;
  gen.kind = kind;
  absl::StatusOr<GeneratedGraph> generated = GenerateGraph(seed, gen);
  if (!generated.ok()) {
    outcome.failure = absl::StrCat("generator: ", generated.status().message());
    return outcome;
  }
  const Graph& graph = *generated->module.graphs().front();
  absl::StatusOr<std::vector<Tensor>> inputs = RandomInputs(graph, seed);
  if (!inputs.ok()) {
    outcome.failure = absl::StrCat("inputs: ", inputs.status().message());
    return outcome;
  }
  absl::StatusOr<BoundedResults> reference =
      InterpretWithErrorBounds(graph, *inputs);
  // A graph the interpreter refuses (an input it cannot take) says nothing
  // about the baseline.
  if (!reference.ok()) return outcome;

  PrimitiveExecutor::Options options;
  options.num_threads = threads;
  absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> base =
      PrimitiveExecutor::Create(graph, options);
  if (!base.ok()) {
    // A refusal must name the op it stopped at.
    outcome.refused = true;
    if (base.status().message().find("primitive executor: ") ==
        std::string::npos) {
      outcome.failure = absl::StrCat("refused without naming the op: ",
                                     base.status().ToString());
    }
    return outcome;
  }
  absl::Status status = (*base)->SetConstants(*inputs);
  absl::StatusOr<std::vector<Tensor>> outputs =
      status.ok() ? (*base)->Run(*inputs)
                  : absl::StatusOr<std::vector<Tensor>>(status);
  if (!outputs.ok()) {
    outcome.failure = absl::StrCat("run: ", outputs.status().ToString());
    return outcome;
  }
  for (Tensor& t : reference->values) t = t.Clone();
  outcome.non_finite = ZeroNonFinite(*reference, *outputs);
  absl::StatusOr<std::vector<CompareResult>> judged =
      CompareWithReference(*reference, *outputs);
  if (!judged.ok()) {
    outcome.failure = absl::StrCat("compare: ", judged.status().ToString());
    return outcome;
  }
  for (size_t i = 0; i < judged->size(); ++i) {
    if (!(*judged)[i].ok()) {
      absl::StrAppend(&outcome.failure, "out", i, ": ", (*judged)[i].Summary(),
                      "\n");
    }
  }
  if (!outcome.failure.empty()) {
    absl::StrAppend(&outcome.failure, "baseline steps:\n", (*base)->Summary(),
                    "\ngraph:\n", PrintModule(generated->module));
  }
  return outcome;
}

class BaselineDifferentialTest : public ::testing::TestWithParam<GraphKind> {};

TEST_P(BaselineDifferentialTest, AgreesWithTheReferenceOrRefusesByName) {
  constexpr uint64_t kFirstSeed = 1;
  constexpr int kSeeds = 40;
  int refused = 0;
  int64_t non_finite = 0;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kSeeds; ++seed) {
    for (int threads : {1, 2}) {
      SeedOutcome outcome = RunSeed(seed, GetParam(), threads);
      EXPECT_EQ(outcome.failure, "")
          << "seed " << seed << ", " << threads << " thread(s)";
      refused += outcome.refused;
      non_finite += outcome.non_finite;
    }
  }
  std::printf("%s: %d refusals, %lld non-finite reference elements left out\n",
              std::string(GraphKindName(GetParam())).c_str(), refused,
              static_cast<long long>(non_finite));
  // Refusals are allowed (an op oneDNN has no primitive for runs on the
  // interpreter, which is not a refusal); most graphs must run.
  EXPECT_LT(refused, kSeeds) << GraphKindName(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kinds, BaselineDifferentialTest,
                         ::testing::ValuesIn(kAllGraphKinds),
                         [](const ::testing::TestParamInfo<GraphKind>& info) {
                           return std::string(GraphKindName(info.param));
                         });

}  // namespace
}  // namespace hgc
