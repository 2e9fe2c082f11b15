#include "python/model.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "python/arrays.h"
#include "python/errors.h"

namespace hgc {
namespace python {

namespace py = pybind11;

Model::Model(std::unique_ptr<CompiledGraph> compiled,
             std::vector<std::string> names)
    : compiled_(std::move(compiled)), names_(std::move(names)) {
  for (int i = 0; i < compiled_->num_params(); ++i) {
    if (!compiled_->param_is_const()[i]) inputs_.push_back(i);
  }
}

void Model::SetConstants(const std::map<std::string, Tensor>& constants) {
  std::vector<Tensor> params(compiled_->num_params());
  std::vector<std::string> missing;
  for (int i = 0; i < compiled_->num_params(); ++i) {
    if (!compiled_->param_is_const()[i]) continue;
    auto it = constants.find(compiled_->param_names()[i]);
    if (it == constants.end()) it = constants.find(names_[i]);
    if (it == constants.end()) {
      missing.push_back(names_[i]);
      continue;
    }
    params[i] = it->second;
  }
  if (!missing.empty()) {
    throw Error(absl::StrCat("constant parameter", missing.size() > 1 ? "s " : " ",
                             absl::StrJoin(missing, ", "),
                             " need values: pass constants={name: array}"));
  }
  if (compiled_->has_constants()) ThrowIfError(compiled_->SetConstants(params));
}

namespace {

// Each output's array and, for bf16, the 16-bit buffer the graph writes.
struct OutputBuffers {
  std::vector<py::array> arrays;
  std::vector<std::vector<uint16_t>> bf16;
  std::vector<void*> pointers;
};

OutputBuffers MakeOutputs(const CompiledGraph& compiled, py::object out) {
  OutputBuffers o;
  const int n = compiled.num_results();
  std::vector<py::handle> given;
  if (!out.is_none()) {
    if (py::isinstance<py::array>(out)) {
      given.push_back(out);
    } else {
      for (py::handle h : out) given.push_back(h);
    }
    if (static_cast<int>(given.size()) != n) {
      throw Error(absl::StrCat("out= has ", given.size(), " arrays, the graph ",
                               n, " results"));
    }
  }
  o.bf16.resize(n);
  for (int i = 0; i < n; ++i) {
    const TensorType& type = compiled.result_types()[i];
    const std::string what = absl::StrCat("output ", i);
    o.arrays.push_back(given.empty()
                           ? py::array(NumpyDtype(type.dtype), NumpyShape(type))
                           : CheckOutputArray(given[i], type, what));
    if (type.dtype == DType::kBF16) {
      o.bf16[i].resize(type.NumElements());
      o.pointers.push_back(o.bf16[i].data());
    } else {
      o.pointers.push_back(o.arrays[i].mutable_data());
    }
  }
  return o;
}

}  // namespace

py::object Model::Call(const py::args& args, py::object out) {
  if (args.size() != inputs_.size()) {
    std::vector<std::string> names;
    for (int p : inputs_) names.push_back(names_[p]);
    throw Error(absl::StrCat("expected ", inputs_.size(), " input",
                             inputs_.size() == 1 ? "" : "s", " (",
                             absl::StrJoin(names, ", "), "), got ",
                             args.size()));
  }
  std::vector<py::array> held;  // keeps every input alive during the call
  std::vector<std::vector<uint16_t>> bf16_inputs;
  std::vector<const void*> in_ptrs(compiled_->num_params(), nullptr);
  int copies = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const int p = inputs_[i];
    const TensorType& type = compiled_->param_types()[p];
    bool copied = false;
    held.push_back(AsInputArray(args[i], type,
                                absl::StrCat("input '", names_[p], "'"),
                                &copied));
    copies += copied;
    if (type.dtype == DType::kBF16 && held.back().itemsize() == 4) {
      bf16_inputs.emplace_back(type.NumElements());
      Bf16FromFloat(static_cast<const float*>(held.back().data()),
                    bf16_inputs.back().data(), type.NumElements());
      in_ptrs[p] = bf16_inputs.back().data();
    } else {
      in_ptrs[p] = held.back().data();
    }
  }
  OutputBuffers o = MakeOutputs(*compiled_, out);
  absl::Status status;
  bool released = false;
  {
    py::gil_scoped_release no_gil;
    released = PyGILState_Check() == 0;
    status = compiled_->Execute(in_ptrs, o.pointers);
  }
  last_input_copies_ = copies;
  last_released_gil_ = released;
  ThrowIfError(status);
  for (size_t i = 0; i < o.arrays.size(); ++i) {
    if (o.bf16[i].empty()) continue;
    FloatFromBf16(o.bf16[i].data(),
                  static_cast<float*>(o.arrays[i].mutable_data()),
                  static_cast<int64_t>(o.bf16[i].size()));
  }
  if (o.arrays.size() == 1) return o.arrays[0];
  py::tuple results(o.arrays.size());
  for (size_t i = 0; i < o.arrays.size(); ++i) results[i] = o.arrays[i];
  return results;
}

std::vector<std::string> Model::input_names() const {
  std::vector<std::string> names;
  for (int p : inputs_) names.push_back(names_[p]);
  return names;
}

std::vector<std::string> Model::input_types() const {
  std::vector<std::string> types;
  for (int p : inputs_) types.push_back(compiled_->param_types()[p].ToString());
  return types;
}

std::vector<std::string> Model::output_types() const {
  std::vector<std::string> types;
  for (const TensorType& t : compiled_->result_types()) {
    types.push_back(t.ToString());
  }
  return types;
}

}  // namespace python
}  // namespace hgc
