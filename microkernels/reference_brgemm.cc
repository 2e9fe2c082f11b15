#include "microkernels/reference_brgemm.h"

#include <cmath>
#include <cstring>

#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

// Element (k, n) of a packed B block.
template <typename T>
T PackedB(const BrgemmDesc& desc, const void* b, int64_t k, int64_t n) {
  return static_cast<const T*>(b)[PackedBIndex(desc, k, n)];
}

double LoadA(BrgemmDataType dt, const void* a, int64_t i) {
  switch (dt) {
    case BrgemmDataType::kF32: return static_cast<const float*>(a)[i];
    case BrgemmDataType::kBf16:
      return Bf16ToFloatDaz(static_cast<const uint16_t*>(a)[i]);
    case BrgemmDataType::kU8S8: return static_cast<const uint8_t*>(a)[i];
    case BrgemmDataType::kS8S8: return static_cast<const int8_t*>(a)[i];
  }
  return 0;
}

}  // namespace

absl::Status ReferenceBrgemm(const BrgemmDesc& desc, const void* const* a_ptrs,
                             const void* const* b_ptrs, int64_t batch, void* c,
                             const float* bias, const float* row_divisors,
                             const float* scale, float* row_max) {
  BrgemmDesc plain = desc;
  plain.batch_kind = BatchKind::kPointerList;
  plain.stride_a_bytes = plain.stride_b_bytes = 0;
  absl::Status valid = ValidateBrgemmDesc(plain);
  // The oracle runs every data type whatever the ISA says.
  if (!valid.ok() && valid.code() != absl::StatusCode::kUnimplemented &&
      desc.isa != Isa::kNone) {
    return valid;
  }
  if (batch < 0) return absl::InvalidArgumentError("batch must be >= 0");
  if (desc.bias && bias == nullptr) {
    return absl::InvalidArgumentError("the descriptor adds a bias; none given");
  }
  if (desc.divide_rows && row_divisors == nullptr) {
    return absl::InvalidArgumentError(
        "the descriptor divides rows; no divisors given");
  }
  if (desc.scale && scale == nullptr) {
    return absl::InvalidArgumentError("the descriptor scales; no scale given");
  }
  if (desc.row_max && row_max == nullptr) {
    return absl::InvalidArgumentError(
        "the descriptor takes row maxima; no row_max given");
  }
  // s8s8 B packed for the VNNI kernels holds B + 128 (PackedBIsBiased).
  const int b_bias = PackedBIsBiased(desc) ? 0x80 : 0;
  const bool is_int = desc.dtype == BrgemmDataType::kU8S8 ||
                      desc.dtype == BrgemmDataType::kS8S8;
  for (int64_t m = 0; m < desc.m; ++m) {
    for (int64_t n = 0; n < desc.n; ++n) {
      double acc = 0;
      uint32_t iacc = 0;  // int32 arithmetic wraps like vpdpbusd's.
      for (int64_t i = 0; i < batch; ++i) {
        const void* a = a_ptrs[i];
        for (int64_t k = 0; k < desc.k; ++k) {
          const double av = LoadA(desc.dtype, a, m * desc.lda + k);
          switch (desc.dtype) {
            case BrgemmDataType::kF32:
              acc += av * PackedB<float>(desc, b_ptrs[i], k, n);
              break;
            case BrgemmDataType::kBf16:
              acc +=
                  av * Bf16ToFloatDaz(PackedB<uint16_t>(desc, b_ptrs[i], k, n));
              break;
            case BrgemmDataType::kU8S8:
            case BrgemmDataType::kS8S8:
              iacc += static_cast<uint32_t>(
                  static_cast<int32_t>(av) *
                  static_cast<int8_t>(PackedB<uint8_t>(desc, b_ptrs[i], k, n) ^
                                      b_bias));
              break;
          }
        }
      }
      const int64_t ci = m * desc.ldc + n;
      if (is_int) {
        int32_t* cp = static_cast<int32_t*>(c) + ci;
        uint32_t prev = desc.accumulate ? static_cast<uint32_t>(*cp) : 0u;
        *cp = static_cast<int32_t>(prev + iacc);
      } else {
        float* cp = static_cast<float*>(c) + ci;
        float v = static_cast<float>(desc.accumulate ? *cp + acc : acc);
        if (desc.divide_rows) v *= 1.0f / row_divisors[m];
        if (desc.scale && desc.bias) {
          v = std::fma(v, *scale, bias[n]);
        } else if (desc.scale) {
          v *= *scale;
        } else if (desc.bias) {
          v += bias[n];
        }
        if (desc.relu) v = v > 0 || std::isnan(v) ? v : 0.0f;
        *cp = v;
        if (desc.row_max) {
          // vmaxps(lane, v): the lane when it is greater, else v.
          float& lane = row_max[m * 16 + n % 16];
          lane = lane > v ? lane : v;
        }
      }
    }
  }
  return absl::OkStatus();
}

std::vector<const void*> StridedBatchPointers(const void* base,
                                              int64_t stride_bytes,
                                              int64_t batch) {
  std::vector<const void*> ptrs(batch);
  for (int64_t i = 0; i < batch; ++i) {
    ptrs[i] = static_cast<const char*>(base) + i * stride_bytes;
  }
  return ptrs;
}

double BrgemmTolerance(const BrgemmDesc& desc, int64_t batch, double abs_sum) {
  if (desc.dtype == BrgemmDataType::kU8S8 ||
      desc.dtype == BrgemmDataType::kS8S8) {
    return 0;  // integer arithmetic is exact.
  }
  // f32 accumulation of K * batch products: each add rounds by at most
  // 2^-24 of the running magnitude (bounded by abs_sum); the FMA/dpbf16
  // trees may add in any order, so use the linear bound with a margin.
  const double terms = static_cast<double>(desc.k * batch) + 2;
  return abs_sum * terms * 6e-8 + 1e-30;
}

}  // namespace microkernels
}  // namespace hgc
