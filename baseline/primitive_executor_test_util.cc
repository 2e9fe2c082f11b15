#include "baseline/primitive_executor_test_util.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "reference/reference_interpreter.h"

namespace hgc {
namespace executor_test {

bool HasReferenceStep(const PrimitiveExecutor& e, const std::string& kind) {
  for (const std::string& step : e.Describe()) {
    if (step == "ref:" + kind) return true;
  }
  return false;
}

std::vector<Tensor> RandomInputs(const Graph& g, uint64_t seed,
                                 const RandomFillOptions& fill) {
  std::vector<Tensor> inputs;
  for (const auto& p : g.params()) {
    inputs.push_back(Get(RandomTensor(p->type(), seed, p->name(), fill)));
  }
  return inputs;
}

std::unique_ptr<PrimitiveExecutor> Check(const Graph& g, int threads,
                                         PrimitiveExecutor::Options options,
                                         const RandomFillOptions& fill,
                                         uint64_t seed,
                                         std::optional<Tolerance> tolerance) {
  options.num_threads = threads;
  absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> exec =
      PrimitiveExecutor::Create(g, options);
  EXPECT_TRUE(exec.ok()) << exec.status();
  if (!exec.ok()) return nullptr;
  // Two input sets through the same executor: buffers are reused, and
  // constants are bound once per SetConstants.
  for (uint64_t s : {seed, seed + 1}) {
    std::vector<Tensor> inputs = RandomInputs(g, s, fill);
    absl::StatusOr<std::vector<Tensor>> expected = Interpret(g, inputs);
    EXPECT_TRUE(expected.ok()) << expected.status();
    if (!expected.ok()) return nullptr;
    absl::Status set = (*exec)->SetConstants(inputs);
    EXPECT_TRUE(set.ok()) << set;
    absl::StatusOr<std::vector<Tensor>> actual = (*exec)->Run(inputs);
    EXPECT_TRUE(actual.ok()) << actual.status();
    if (!actual.ok()) return nullptr;
    EXPECT_EQ(actual->size(), expected->size());
    for (size_t i = 0; i < actual->size() && i < expected->size(); ++i) {
      absl::StatusOr<CompareResult> cmp =
          CompareTensors((*actual)[i], (*expected)[i], tolerance);
      EXPECT_TRUE(cmp.ok()) << cmp.status();
      if (!cmp.ok()) return nullptr;
      EXPECT_TRUE(cmp->ok()) << "output " << i << ": " << cmp->Summary() << "\n"
                             << (*exec)->Summary();
    }
  }
  return *std::move(exec);
}

std::string Joined(const PrimitiveExecutor& e) {
  return absl::StrJoin(e.Describe(), " | ");
}

}  // namespace executor_test
}  // namespace hgc
