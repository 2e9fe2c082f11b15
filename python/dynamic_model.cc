#include "python/dynamic_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "python/errors.h"

namespace hgc {
namespace python {

namespace py = pybind11;

DynamicModel::DynamicModel(Compiler compiler, std::vector<SymbolicDim> dims,
                           std::vector<std::string> input_names,
                           size_t capacity)
    : compiler_(std::move(compiler)),
      dims_(std::move(dims)),
      input_names_(std::move(input_names)),
      capacity_(capacity) {}

DynamicModel::Dims DynamicModel::DimsOf(const py::args& inputs) const {
  if (inputs.size() != input_names_.size()) {
    throw Error(absl::StrCat("expected ", input_names_.size(), " inputs, got ",
                             inputs.size()));
  }
  py::module_ numpy = py::module_::import("numpy");
  Dims dims;
  for (const SymbolicDim& d : dims_) {
    py::tuple shape = numpy.attr("shape")(inputs[d.input]);
    const std::string& input = input_names_[d.input];
    if (d.axis >= static_cast<int>(shape.size())) {
      throw Error(absl::StrCat("input '", input, "' has ", shape.size(),
                               " dimensions; dimension ", d.axis, " is '",
                               d.name, "'"));
    }
    const int64_t value = shape[d.axis].cast<int64_t>();
    auto [it, inserted] = dims.emplace(d.name, value);
    if (!inserted && it->second != value) {
      throw Error(absl::StrCat("dimension '", d.name, "' is ", it->second,
                               " in one input and ", value, " in input '",
                               input, "'"));
    }
  }
  return dims;
}

std::shared_ptr<Model> DynamicModel::ModelFor(const Dims& dims) {
  // Compiles hold the lock (one compile per shape, however many threads
  // ask for it at once); the caller has released the GIL.
  absl::MutexLock lock(&mu_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first == dims) {
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front().second;
    }
  }
  std::shared_ptr<Model> model = compiler_(dims);
  ++compiles_;
  cache_.emplace_front(dims, model);
  if (cache_.size() > capacity_) cache_.pop_back();
  return model;
}

py::object DynamicModel::Call(const py::args& inputs, py::object out) {
  const Dims dims = DimsOf(inputs);
  std::shared_ptr<Model> model;
  {
    py::gil_scoped_release no_gil;
    model = ModelFor(dims);
  }
  return model->Call(inputs, std::move(out));
}

int DynamicModel::cached_shapes() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(cache_.size());
}

int DynamicModel::compiles() const {
  absl::MutexLock lock(&mu_);
  return compiles_;
}

}  // namespace python
}  // namespace hgc
