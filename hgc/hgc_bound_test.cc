// A compiled graph in a process whose OpenMP threads are bound (the test
// runs with OMP_PROC_BIND=close OMP_PLACES=cores, as a framework following
// oneDNN's or PyTorch's tuning guides does), on hgc's own pool and on
// OpenMP; results compared with the reference interpreter.
#include <omp.h>

#include <atomic>
#include <vector>

#include "gtest/gtest.h"
#include "hgc/hgc.h"
#include "hgc/test_graphs.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

void ExpectMatches(const Tensor& actual, const Tensor& expected) {
  absl::StatusOr<CompareResult> r = CompareTensors(actual, expected);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->Summary();
}

class BoundCompiledGraphTest : public ::testing::TestWithParam<Threading> {};

TEST_P(BoundCompiledGraphTest, MatchesTheReferenceAfterAnOpenMPRegion) {
  ASSERT_NE(omp_get_proc_bind(), omp_proc_bind_false)
      << "the test expects OMP_PROC_BIND in its environment";
  // The framework's own OpenMP work, which binds its threads.
  std::atomic<int> omp_threads{0};
#pragma omp parallel num_threads(2)
  omp_threads.fetch_add(1);
  ASSERT_GE(omp_threads.load(), 1);

  for (int64_t batch : {32, 128}) {
    Module module;
    const Graph* graph = BuildMlp(module, "mlp", batch, {13, 512, 256, 128});
    Options options;
    options.num_threads = 2;
    options.threading = GetParam();
    absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
        Compile(module, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    std::vector<Tensor> params;
    for (int i = 0; i < graph->num_params(); ++i) {
      params.push_back(*RandomTensor(graph->param(i)->type(), 7, i));
    }
    ASSERT_TRUE((*compiled)->SetConstants(params).ok());
    absl::StatusOr<std::vector<Tensor>> expected = Interpret(*graph, params);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int rep = 0; rep < 20; ++rep) {
      absl::StatusOr<std::vector<Tensor>> out = (*compiled)->Execute(params);
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectMatches((*out)[0], (*expected)[0]);
    }
    // Called from inside the framework's parallel region: with OpenMP the
    // nested region may get a smaller team, which must give the same result.
    std::vector<absl::StatusOr<std::vector<Tensor>>> nested(
        2, std::vector<Tensor>());
#pragma omp parallel num_threads(2)
    nested[omp_get_thread_num()] = (*compiled)->Execute(params);
    for (const auto& out : nested) {
      if (out.ok() && out->empty()) continue;  // that thread did not exist
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectMatches((*out)[0], (*expected)[0]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threading, BoundCompiledGraphTest,
                         ::testing::Values(Threading::kOwnPool,
                                           Threading::kOpenMP),
                         [](const auto& info) {
                           return std::string(ThreadingName(info.param));
                         });

}  // namespace
}  // namespace hgc
