// hgc.DynamicModel: an ONNX model with symbolic dimensions (dim_param)
// left unbound at hgc.compile, compiled once per set of dimension values
// the calls bring and cached.
#ifndef HGC_PYTHON_DYNAMIC_MODEL_H_
#define HGC_PYTHON_DYNAMIC_MODEL_H_

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "pybind11/pybind11.h"
#include "python/model.h"

namespace hgc {
namespace python {

// Dimension `axis` of model input `input` is the symbolic `name`.
struct SymbolicDim {
  int input = 0;
  int axis = 0;
  std::string name;
};

class DynamicModel {
 public:
  // Compiles the model for the given dimension values; runs without the
  // GIL (it must not touch Python objects).
  using Dims = std::map<std::string, int64_t, std::less<>>;
  using Compiler = std::function<std::unique_ptr<Model>(const Dims& dims)>;

  DynamicModel(Compiler compiler, std::vector<SymbolicDim> dims,
               std::vector<std::string> input_names, size_t capacity = 16);

  // model(*inputs, out=None), as Model's: the inputs' shapes give the
  // symbolic dimensions' values (the same name must get the same value
  // everywhere), and the model compiled for them runs.
  pybind11::object Call(const pybind11::args& inputs, pybind11::object out);

  const std::vector<std::string>& input_names() const { return input_names_; }
  // Dimension values compiled so far (at most `capacity`, least recently
  // used dropped first), and how many compiles there were.
  int cached_shapes() const;
  int compiles() const;

 private:
  Dims DimsOf(const pybind11::args& inputs) const;
  std::shared_ptr<Model> ModelFor(const Dims& dims);

  Compiler compiler_;
  std::vector<SymbolicDim> dims_;
  std::vector<std::string> input_names_;
  size_t capacity_;
  mutable absl::Mutex mu_;
  // Most recently used first.
  std::list<std::pair<Dims, std::shared_ptr<Model>>> cache_
      ABSL_GUARDED_BY(mu_);
  int compiles_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace python
}  // namespace hgc

#endif  // HGC_PYTHON_DYNAMIC_MODEL_H_
