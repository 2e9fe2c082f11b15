#include "microkernels/brgemm_desc.h"

#include "absl/strings/str_cat.h"

namespace hgc {
namespace microkernels {

const char* DataTypeName(BrgemmDataType dt) {
  switch (dt) {
    case BrgemmDataType::kF32: return "f32f32f32";
    case BrgemmDataType::kBf16: return "bf16bf16f32";
    case BrgemmDataType::kU8S8: return "u8s8s32";
    case BrgemmDataType::kS8S8: return "s8s8s32";
  }
  return "unknown";
}

int64_t InputElementSize(BrgemmDataType dt) {
  switch (dt) {
    case BrgemmDataType::kF32: return 4;
    case BrgemmDataType::kBf16: return 2;
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8: return 1;
  }
  return 0;
}

int64_t VnniGranularity(BrgemmDataType dt) { return 4 / InputElementSize(dt); }

BLayout RequiredBLayout(BrgemmDataType dt) {
  switch (dt) {
    case BrgemmDataType::kF32: return BLayout::kPlain;
    case BrgemmDataType::kBf16: return BLayout::kVnni2;
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8: return BLayout::kVnni4;
  }
  return BLayout::kPlain;
}

const char* BLayoutName(BLayout layout) {
  switch (layout) {
    case BLayout::kPlain: return "plain";
    case BLayout::kVnni2: return "vnni2";
    case BLayout::kVnni4: return "vnni4";
    case BLayout::kTransposed: return "transposed";
  }
  return "unknown";
}

std::string BrgemmDesc::ToString() const {
  std::string batch =
      batch_kind == BatchKind::kPointerList
          ? std::string("list")
          : absl::StrCat("stride(", stride_a_bytes, ",", stride_b_bytes, ")");
  return absl::StrCat(
      "brgemm:", IsaName(isa), ":", DataTypeName(dtype), ":M", m, "N", n, "K",
      k, ":lda", lda, ":ldb", ldb, ":ldc", ldc, ":beta", accumulate ? 1 : 0,
      ":", batch, ":", BLayoutName(b_layout),
      b_panel_bytes > 0 ? absl::StrCat(":panels", b_panel_bytes)
                        : std::string(),
      scale ? ":scale" : "", bias ? ":bias" : "", relu ? ":relu" : "",
      row_max ? ":rowmax" : "", divide_rows ? ":divrows" : "",
      prefetch_lines > 0 ? absl::StrCat(":pf", prefetch_lines) : std::string());
}

bool operator==(const BrgemmDesc& x, const BrgemmDesc& y) {
  return x.isa == y.isa && x.dtype == y.dtype && x.m == y.m && x.n == y.n &&
         x.k == y.k && x.lda == y.lda && x.ldb == y.ldb && x.ldc == y.ldc &&
         x.accumulate == y.accumulate && x.batch_kind == y.batch_kind &&
         x.stride_a_bytes == y.stride_a_bytes &&
         x.stride_b_bytes == y.stride_b_bytes && x.b_layout == y.b_layout &&
         x.b_panel_bytes == y.b_panel_bytes && x.scale == y.scale &&
         x.bias == y.bias && x.relu == y.relu && x.row_max == y.row_max &&
         x.divide_rows == y.divide_rows && x.prefetch_lines == y.prefetch_lines;
}

BrgemmDesc MakeBrgemmDesc(Isa isa, BrgemmDataType dtype, int64_t m, int64_t n,
                          int64_t k) {
  BrgemmDesc d;
  d.isa = isa;
  d.dtype = dtype;
  d.m = m;
  d.n = n;
  d.k = k;
  d.lda = k;
  d.ldb = n;
  d.ldc = n;
  d.b_layout = RequiredBLayout(dtype);
  return d;
}

namespace {

absl::Status Bad(const BrgemmDesc& d, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad brgemm descriptor (", what, "): ", d.ToString()));
}

}  // namespace

absl::Status ValidateBLayout(const BrgemmDesc& d) {
  if (d.n < 1 || d.k < 1) return Bad(d, "N and K must be >= 1");
  if (d.b_layout == BLayout::kTransposed) {
    if (d.dtype != BrgemmDataType::kF32) {
      return Bad(d, "only f32 B may be transposed");
    }
    if (d.ldb < d.k || d.b_panel_bytes != 0) {
      return Bad(d, "transposed B needs ldb >= K and no panels");
    }
    return absl::OkStatus();
  }
  if (d.ldb < 1 || (d.ldb < d.n && d.b_panel_bytes == 0)) {
    return Bad(d, "leading dimensions must be >= K (lda) and N (ldb, ldc)");
  }
  if (d.b_panel_bytes < 0 || d.b_panel_bytes > (int64_t{1} << 31)) {
    return Bad(d, "b_panel_bytes must be in [0, 2^31]");
  }
  if (d.b_panel_bytes > 0) {
    if (d.dtype != BrgemmDataType::kF32) {
      return absl::UnimplementedError(
          absl::StrCat("B panels only on f32 kernels: ", d.ToString()));
    }
    if (d.b_panel_bytes % 4 != 0 ||
        d.b_panel_bytes < d.k * d.ldb * InputElementSize(d.dtype)) {
      return Bad(d, "B panels must hold K x ldb elements each, 4-byte aligned");
    }
  }
  if (d.b_layout != RequiredBLayout(d.dtype)) {
    return Bad(d, absl::StrCat(DataTypeName(d.dtype), " needs B packed as ",
                               BLayoutName(RequiredBLayout(d.dtype))));
  }
  return absl::OkStatus();
}

absl::Status ValidateBrgemmDesc(const BrgemmDesc& d) {
  constexpr int64_t kMaxDim = kMaxBrgemmDim;
  auto bad = [&](absl::string_view what) { return Bad(d, what); };
  if (d.m < 1 || d.n < 1 || d.k < 1) return bad("M, N and K must be >= 1");
  if (d.m > kMaxDim || d.n > kMaxDim || d.k > kMaxDim) {
    return bad("M, N and K must be <= 2^20");
  }
  if (d.lda < d.k || d.ldc < d.n) {
    return bad("leading dimensions must be >= K (lda) and N (ldb, ldc)");
  }
  if (absl::Status layout = ValidateBLayout(d); !layout.ok()) return layout;
  if (d.lda > kMaxDim || d.ldb > kMaxDim || d.ldc > kMaxDim) {
    return bad("leading dimensions must be <= 2^20");
  }
  if (d.m * d.lda * InputElementSize(d.dtype) > (int64_t{1} << 31) ||
      d.m * d.ldc * 4 > (int64_t{1} << 31) ||
      PackedBBytes(d) > (int64_t{1} << 31)) {
    return bad("a block must stay below 2 GiB");
  }
  if (d.batch_kind == BatchKind::kPointerList &&
      (d.stride_a_bytes != 0 || d.stride_b_bytes != 0)) {
    return bad("strides are only for strided batches");
  }
  if (d.batch_kind == BatchKind::kStrided &&
      (d.stride_a_bytes < 0 || d.stride_b_bytes < 0 ||
       d.stride_a_bytes > (int64_t{1} << 40) ||
       d.stride_b_bytes > (int64_t{1} << 40))) {
    return bad("strides must be in [0, 2^40]");
  }
  switch (d.isa) {
    case Isa::kNone:
      return bad("no ISA");
    case Isa::kAvx2:
      break;
    case Isa::kAvx512Core:
      if (d.dtype == BrgemmDataType::kU8S8 || d.dtype == BrgemmDataType::kS8S8) {
        return bad("int8 needs avx512_core_vnni or higher");
      }
      break;
    case Isa::kAvx512CoreVnni:
      break;
    case Isa::kAvx512CoreBf16:
    case Isa::kAvx512CoreFp16:
      break;
    case Isa::kAvx512CoreAmx:
      if (d.dtype == BrgemmDataType::kF32) {
        return absl::UnimplementedError(
            absl::StrCat("AMX has no f32 tile product: ", d.ToString()));
      }
      break;
  }
  if (d.dtype == BrgemmDataType::kBf16 && d.isa == Isa::kAvx512CoreVnni) {
    return bad("bf16 runs on avx512_core (widening) or avx512_core_bf16");
  }
  const bool other_post_ops = d.scale || d.bias || d.relu || d.row_max;
  if ((other_post_ops || d.divide_rows) && d.dtype != BrgemmDataType::kF32) {
    return absl::UnimplementedError(
        absl::StrCat("post-ops only on f32 kernels: ", d.ToString()));
  }
  if (d.prefetch_lines < 0) return bad("prefetch_lines < 0");
  if (d.prefetch_lines > 0 && d.dtype != BrgemmDataType::kF32) {
    return absl::UnimplementedError(
        absl::StrCat("prefetch only on f32 kernels: ", d.ToString()));
  }
  if (d.divide_rows && other_post_ops) {
    return absl::UnimplementedError(
        absl::StrCat("divide_rows takes no other post-op: ", d.ToString()));
  }
  if (d.b_layout == BLayout::kTransposed &&
      (d.isa != Isa::kAvx2 || d.m != 1 || d.relu || d.row_max ||
       d.divide_rows || d.prefetch_lines > 0)) {
    return absl::UnimplementedError(absl::StrCat(
        "transposed B only on AVX2, for one row of A, with scale and bias "
        "the only post-ops: ",
        d.ToString()));
  }
  return absl::OkStatus();
}

int64_t PackedBBytes(const BrgemmDesc& d) {
  if (d.b_layout == BLayout::kTransposed) {
    return ((d.n - 1) * d.ldb + d.k) * InputElementSize(d.dtype);
  }
  const int64_t g = VnniGranularity(d.dtype);
  const int64_t panel =
      (d.k + g - 1) / g * d.ldb * g * InputElementSize(d.dtype);
  if (d.b_panel_bytes <= 0 || d.ldb < 1) return panel;
  return (d.n - 1) / d.ldb * d.b_panel_bytes + panel;
}

bool HasBPanels(const BrgemmDesc& d) {
  return d.b_panel_bytes > 0 && d.n > d.ldb;
}

int64_t PackedBIndex(const BrgemmDesc& d, int64_t k, int64_t n) {
  if (d.b_layout == BLayout::kTransposed) return n * d.ldb + k;
  const int64_t g = VnniGranularity(d.dtype);
  int64_t panel_start = 0;
  if (d.b_panel_bytes > 0) {
    panel_start = n / d.ldb * (d.b_panel_bytes / InputElementSize(d.dtype));
    n %= d.ldb;
  }
  return panel_start + ((k / g) * d.ldb + n) * g + k % g;
}

bool S8s8ReadsBiasedB(Isa isa) {
  return isa != Isa::kAvx512CoreAmx && isa != Isa::kAvx2;
}

bool PackedBIsBiased(const BrgemmDesc& d) {
  return d.dtype == BrgemmDataType::kS8S8 && S8s8ReadsBiasedB(d.isa);
}

}  // namespace microkernels
}  // namespace hgc
