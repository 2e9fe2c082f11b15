// hgc.Model: a compiled graph called from Python with numpy arrays.
#ifndef HGC_PYTHON_MODEL_H_
#define HGC_PYTHON_MODEL_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hgc/hgc.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"

namespace hgc {
namespace python {

class Model {
 public:
  // `names[i]` is how errors and input_names call parameter i (an ONNX
  // model's own input names; the .graph names otherwise).
  Model(std::unique_ptr<CompiledGraph> compiled,
        std::vector<std::string> names);

  // Binds the const parameters: `constants` by parameter name (or by the
  // name in `names`), every const parameter needs one. Copies the data.
  void SetConstants(const std::map<std::string, Tensor>& constants);

  // model(*inputs, out=None): one array per non-const parameter, in order.
  // Returns the result (a tuple when the graph has several), written into
  // `out` (an array, or a sequence of them) when given. The GIL is
  // released while the graph runs, so Python threads calling one model run
  // at once.
  pybind11::object Call(const pybind11::args& inputs, pybind11::object out);

  std::vector<std::string> input_names() const;
  std::vector<std::string> input_types() const;   // "f32[2, 3]", ...
  std::vector<std::string> output_types() const;
  int num_threads() const { return compiled_->num_threads(); }

  // What the last call did, for tests: how many inputs it copied (a wrong
  // dtype or a non-contiguous array), and whether the graph ran without
  // the GIL.
  int last_call_input_copies() const { return last_input_copies_; }
  bool last_call_released_gil() const { return last_released_gil_; }

 private:
  std::unique_ptr<CompiledGraph> compiled_;
  std::vector<std::string> names_;
  std::vector<int> inputs_;  // the non-const parameters
  std::atomic<int> last_input_copies_{0};
  std::atomic<bool> last_released_gil_{false};
};

}  // namespace python
}  // namespace hgc

#endif  // HGC_PYTHON_MODEL_H_
