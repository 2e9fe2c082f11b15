// The portable matmul: batched, with numpy broadcasting of the leading dims and
// the transpose flags swapping the last two dims of an operand.
//
// Floating point (f32, bf16, f16): products and sums in f32, k ascending,
// one rounding of the f32 sum to the result dtype at the end. A denormal
// bf16 operand is read as a zero of its sign (hgc's bf16 matmul semantics:
// the AVX512_BF16 and AMX dot products do that in hardware, and hgc's other
// bf16 kernels do the same), so inf * 1e-40 is NaN in a bf16 matmul; f32
// and f16 operands are read exactly. Integer
// (u8/s8 pairs): exact products, sums modulo 2^32, i.e. exactly what an s32
// accumulator with wrapping adds (VNNI) gives; results never wrap for
// realistic K (|a*b| <= 255*128, so K < 65794 cannot overflow).
//
// Loop order is i-k-j over a row-major [K, N] copy of B, so the inner loop is
// a contiguous axpy the compiler vectorizes: 1024^3 takes well under a second
// at -O2.
#include <cstring>

#include "runtime/portable/kernels.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

// The geometry of one matmul.
struct Dims {
  int64_t m, k, n;
  bool ta, tb;
  // Element offset of A(i, p) / B(p, j) inside one batch matrix.
  int64_t a_index(int64_t i, int64_t p) const {
    return ta ? p * m + i : i * k + p;
  }
  int64_t b_index(int64_t p, int64_t j) const {
    return tb ? j * k + p : p * n + j;
  }
};

// A matrix element as f32, for the float path (bf16 denormals read as 0).
float LoadF32(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32: return t.data<float>()[i];
    case DType::kBF16: return Bf16ToFloatDaz(t.data<uint16_t>()[i]);
    case DType::kF16: return HalfToFloat(t.data<uint16_t>()[i]);
    default: return static_cast<float>(t.GetDouble(i));
  }
}

void StoreF32Row(Tensor& out, int64_t base, const float* row, int64_t n) {
  switch (out.dtype()) {
    case DType::kF32:
      std::memcpy(out.mutable_data<float>() + base, row, n * sizeof(float));
      break;
    case DType::kBF16: {
      uint16_t* o = out.mutable_data<uint16_t>() + base;
      for (int64_t j = 0; j < n; ++j) o[j] = FloatToBf16(row[j]);
      break;
    }
    default: {
      uint16_t* o = out.mutable_data<uint16_t>() + base;
      for (int64_t j = 0; j < n; ++j) o[j] = FloatToHalf(row[j]);
      break;
    }
  }
}

}  // namespace

absl::StatusOr<Tensor> EvalMatmul(const KernelArgs& args) {
  const Tensor& a = args.operand(0);
  const Tensor& b = args.operand(1);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  if (out.num_elements() == 0) return out;
  // A non-empty result implies every batch dim of a and b is >= 1, so the
  // matrix sizes below are bounded by the operands' element counts.
  const int64_t ra = a.shape().size();
  const int64_t rb = b.shape().size();
  Dims d;
  d.ta = args.GetBool("transpose_a", false);
  d.tb = args.GetBool("transpose_b", false);
  d.m = a.shape()[ra - (d.ta ? 1 : 2)];
  d.k = a.shape()[ra - (d.ta ? 2 : 1)];
  d.n = b.shape()[rb - (d.tb ? 2 : 1)];
  const int64_t a_matrix = d.m * d.k, b_matrix = d.k * d.n;
  const int64_t c_matrix = d.m * d.n;

  const Shape& out_shape = out.shape();
  absl::Span<const int64_t> out_batch(out_shape.data(), out_shape.size() - 2);
  StridedWalker w(out_batch);
  w.AddOperand(BroadcastStrides(
      absl::Span<const int64_t>(a.shape().data(), ra - 2), out_batch));
  w.AddOperand(BroadcastStrides(
      absl::Span<const int64_t>(b.shape().data(), rb - 2), out_batch));
  const int64_t batches = out.num_elements() / c_matrix;

  if (IsFloat(out.dtype())) {
    // B as row-major [K, N] f32; f32 without transpose is read in place.
    const bool b_direct = b.dtype() == DType::kF32 && !d.tb;
    std::unique_ptr<float[]> b_copy;
    if (!b_direct) {
      HGC_ASSIGN_OR_RETURN(b_copy, AllocScratch<float>(b_matrix,
                                                       args.max_bytes));
    }
    HGC_ASSIGN_OR_RETURN(std::unique_ptr<float[]> row,
                         AllocScratch<float>(d.n, args.max_bytes));
    for (int64_t batch = 0; batch < batches; ++batch, w.Next()) {
      const int64_t a_base = w.offset(0) * a_matrix;
      const int64_t b_base = w.offset(1) * b_matrix;
      const float* bkn;
      if (b_direct) {
        bkn = b.data<float>() + b_base;
      } else {
        for (int64_t p = 0; p < d.k; ++p) {
          for (int64_t j = 0; j < d.n; ++j) {
            b_copy[p * d.n + j] = LoadF32(b, b_base + d.b_index(p, j));
          }
        }
        bkn = b_copy.get();
      }
      for (int64_t i = 0; i < d.m; ++i) {
        float* c = row.get();
        for (int64_t j = 0; j < d.n; ++j) c[j] = 0.0f;
        for (int64_t p = 0; p < d.k; ++p) {
          const float aip = LoadF32(a, a_base + d.a_index(i, p));
          const float* brow = bkn + p * d.n;
          for (int64_t j = 0; j < d.n; ++j) c[j] += aip * brow[j];
        }
        StoreF32Row(out, batch * c_matrix + i * d.n, c, d.n);
      }
    }
    return out;
  }

  // u8/s8 x u8/s8 -> s32.
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<int32_t[]> b_copy,
                       AllocScratch<int32_t>(b_matrix, args.max_bytes));
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<uint32_t[]> row,
                       AllocScratch<uint32_t>(d.n, args.max_bytes));
  int32_t* o = out.mutable_data<int32_t>();
  for (int64_t batch = 0; batch < batches; ++batch, w.Next()) {
    const int64_t a_base = w.offset(0) * a_matrix;
    const int64_t b_base = w.offset(1) * b_matrix;
    for (int64_t p = 0; p < d.k; ++p) {
      for (int64_t j = 0; j < d.n; ++j) {
        b_copy[p * d.n + j] =
            static_cast<int32_t>(LoadInt(b, b_base + d.b_index(p, j)));
      }
    }
    for (int64_t i = 0; i < d.m; ++i) {
      uint32_t* c = row.get();
      for (int64_t j = 0; j < d.n; ++j) c[j] = 0;
      for (int64_t p = 0; p < d.k; ++p) {
        const int32_t aip =
            static_cast<int32_t>(LoadInt(a, a_base + d.a_index(i, p)));
        const int32_t* brow = b_copy.get() + p * d.n;
        // |aip * brow[j]| <= 255 * 128: exact in int32; sums wrap mod 2^32.
        for (int64_t j = 0; j < d.n; ++j) {
          c[j] += static_cast<uint32_t>(aip * brow[j]);
        }
      }
      for (int64_t j = 0; j < d.n; ++j) {
        o[batch * c_matrix + i * d.n + j] = static_cast<int32_t>(c[j]);
      }
    }
  }
  return out;
}

}  // namespace portable
}  // namespace hgc
