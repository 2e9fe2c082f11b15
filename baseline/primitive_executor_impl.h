// Internal to the primitive-based executor (baseline/primitive_executor.h):
// the executor's state, shared by the two files that split it. Not a public
// API: only baseline/primitive_executor.cc and
// baseline/primitive_executor_plan.cc include this header.
//
//   primitive_executor_plan.cc  Create: slots for every value, one step per
//                               op (a oneDNN primitive from primitives/, a
//                               reference fallback, or a result copy),
//                               buffers and memory bindings
//   primitive_executor.cc       SetConstants, Run / RunInto (binding the
//                               inputs and outputs, running the steps) and
//                               the step reports (Describe, Summary)
#ifndef HGC_BASELINE_PRIMITIVE_EXECUTOR_IMPL_H_
#define HGC_BASELINE_PRIMITIVE_EXECUTOR_IMPL_H_

#include <omp.h>

#include <memory>
#include <utility>
#include <vector>

#include "baseline/primitive_executor.h"
#include "baseline/primitives/common.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace hgc {
namespace primitive_internal {

// Sets the calling thread's OpenMP thread count (which oneDNN's OpenMP
// runtime reads when creating and executing primitives) for a scope.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(n);
  }
  ~OmpThreads() { omp_set_num_threads(previous_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace primitive_internal

struct PrimitiveExecutor::Impl {
  const Graph* graph = nullptr;
  dnnl::engine engine;
  dnnl::stream stream;
  std::vector<primitive_internal::Slot> slots;
  std::vector<int> param_slot;  // parameter index -> slot
  std::vector<std::pair<dnnl::memory, int>> bindings;
  // Indices into `bindings` of memories over slots not owned here
  // (inputs, const parameters, outputs): rebound on every run.
  std::vector<int> dynamic_bindings;
  std::vector<std::unique_ptr<primitive_internal::Step>> steps;
  std::vector<Tensor> const_inputs;  // by parameter index
  bool has_const_params = false;
  bool constants_ready = false;
  std::vector<Tensor> outputs;  // Run's output buffers
  primitive_internal::RunState state;
};

}  // namespace hgc

#endif  // HGC_BASELINE_PRIMITIVE_EXECUTOR_IMPL_H_
