// hgc.Error, the exception every failure of the Python module raises, with
// hgc's own message (a subclass of ValueError in Python).
#ifndef HGC_PYTHON_ERRORS_H_
#define HGC_PYTHON_ERRORS_H_

#include <stdexcept>
#include <string>

#include "absl/status/status.h"

namespace hgc {
namespace python {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error with `status`'s message when it is not OK.
inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw Error(std::string(status.message()));
}

}  // namespace python
}  // namespace hgc

#endif  // HGC_PYTHON_ERRORS_H_
