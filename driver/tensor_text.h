// How --run prints an output tensor: numpy-like nested brackets when it is
// small (up to kMaxPrintedElements), its min, max and mean otherwise.
#ifndef HGC_DRIVER_TENSOR_TEXT_H_
#define HGC_DRIVER_TENSOR_TEXT_H_

#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace hgc {

// Tensors up to this many elements are printed in full.
inline constexpr int64_t kMaxPrintedElements = 64;

// "[[1, 2], [3, 4]]", "[]" for an empty tensor, or "min m, max M, mean a".
std::string DescribeTensor(const Tensor& t);

}  // namespace hgc

#endif  // HGC_DRIVER_TENSOR_TEXT_H_
