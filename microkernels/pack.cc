#include "microkernels/pack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hgc {
namespace microkernels {
namespace {

// Copies one element of ES bytes; `biased` (s8 read as u8, ES == 1)
// flips its sign bit.
template <int ES>
inline void CopyElement(char* to, const char* from, bool biased) {
  std::memcpy(to, from, ES);
  if (ES == 1 && biased) to[0] ^= 0x80;
}

// The VNNI layouts (PackedBIndex without the per-element calls): column n
// of the packed panel starts at panel_start + (n % ldb) * g, and element k
// of it lies (k / g) * ldb * g + k % g further. The source is walked along
// its contiguous dimension: k for a transposed source, n otherwise.
template <int ES>
void PackVnni(const BrgemmDesc& d, const BSource& src, bool biased, char* dst) {
  const int64_t g = VnniGranularity(d.dtype);
  const int64_t panel_elems = d.b_panel_bytes > 0 ? d.b_panel_bytes / ES : 0;
  const char* s = static_cast<const char*>(src.data);
  auto column = [&](int64_t n) {
    const int64_t panel_start = panel_elems > 0 ? n / d.ldb * panel_elems : 0;
    const int64_t col = panel_elems > 0 ? n % d.ldb : n;
    return dst + (panel_start + col * g) * ES;
  };
  auto offset = [&](int64_t k) { return ((k / g) * d.ldb * g + k % g) * ES; };
  if (src.transposed) {
    // The g elements of a K group are contiguous on both sides.
    for (int64_t n = 0; n < d.n; ++n) {
      char* out = column(n);
      const char* in = s + n * src.ld * ES;
      for (int64_t k = 0; k < d.k; k += g) {
        const int64_t bytes = std::min(g, d.k - k) * ES;
        char* to = out + offset(k);
        std::memcpy(to, in + k * ES, bytes);
        if (ES == 1 && biased) {
          for (int64_t i = 0; i < bytes; ++i) to[i] ^= 0x80;
        }
      }
    }
    return;
  }
  // Each column's start once (column() divides); the bounds in locals,
  // which the byte stores cannot alias.
  const int64_t n_count = d.n, k_count = d.k, ld = src.ld;
  std::vector<char*> columns(n_count);
  for (int64_t n = 0; n < n_count; ++n) columns[n] = column(n);
  int64_t k = 0;
  if (ES == 1 && g == 4) {
    // int8: a whole K group at once, one 32-bit word a column.
    const uint32_t flip = biased ? 0x80808080u : 0;
    for (; k + 4 <= k_count; k += 4) {
      const int64_t k_offset = offset(k);
      const auto* r0 = reinterpret_cast<const uint8_t*>(s + k * ld);
      const uint8_t *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
      for (int64_t n = 0; n < n_count; ++n) {
        const uint32_t word = (r0[n] | r1[n] << 8 | r2[n] << 16 |
                               static_cast<uint32_t>(r3[n]) << 24) ^
                              flip;
        std::memcpy(columns[n] + k_offset, &word, 4);
      }
    }
  }
  for (; k < k_count; ++k) {
    const int64_t k_offset = offset(k);
    const char* in = s + k * ld * ES;
    for (int64_t n = 0; n < n_count; ++n) {
      CopyElement<ES>(columns[n] + k_offset, in + n * ES, biased);
    }
  }
}

// Copies element-by-element as raw bytes of size `es` into a buffer set to
// the bias of zero (padding keeps it): the VNNI layouts through PackVnni,
// any other through PackedBIndex.
void PackBytes(const BrgemmDesc& desc, const BSource& src, char* dst) {
  const int64_t es = InputElementSize(desc.dtype);
  const bool biased = PackedBIsBiased(desc);
  const int64_t bytes = PackedBBytes(desc);
  std::memset(dst, biased ? 0x80 : 0, bytes);
  const char* s = static_cast<const char*>(src.data);
  if (desc.b_layout != BLayout::kTransposed && es <= 4 && es != 3) {
    switch (es) {
      case 1:
        PackVnni<1>(desc, src, biased, dst);
        break;
      case 2:
        PackVnni<2>(desc, src, biased, dst);
        break;
      case 4:
        PackVnni<4>(desc, src, biased, dst);
        break;
    }
    return;
  }
  for (int64_t k = 0; k < desc.k; ++k) {
    for (int64_t n = 0; n < desc.n; ++n) {
      const int64_t from = src.transposed ? n * src.ld + k : k * src.ld + n;
      const int64_t to = PackedBIndex(desc, k, n);
      std::memcpy(dst + to * es, s + from * es, es);
      if (biased) dst[to] ^= 0x80;  // es == 1
    }
  }
}

}  // namespace

absl::Status PackB(const BrgemmDesc& desc, const BSource& src, void* dst) {
  absl::Status ok = ValidateBLayout(desc);
  if (!ok.ok()) return ok;
  if (src.data == nullptr || dst == nullptr) {
    return absl::InvalidArgumentError("PackB: null buffer");
  }
  if (src.ld < (src.transposed ? desc.k : desc.n)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PackB: source leading dimension ", src.ld, " is too small"));
  }
  PackBytes(desc, src, static_cast<char*>(dst));
  return absl::OkStatus();
}

absl::Status UnpackB(const BrgemmDesc& desc, const void* packed, int64_t ld,
                     void* dst) {
  absl::Status ok = ValidateBLayout(desc);
  if (!ok.ok()) return ok;
  if (ld < desc.n) {
    return absl::InvalidArgumentError("UnpackB: ld must be >= N");
  }
  const int64_t es = InputElementSize(desc.dtype);
  const bool biased = PackedBIsBiased(desc);
  const char* p = static_cast<const char*>(packed);
  char* d = static_cast<char*>(dst);
  for (int64_t k = 0; k < desc.k; ++k) {
    for (int64_t n = 0; n < desc.n; ++n) {
      const int64_t from = PackedBIndex(desc, k, n);
      std::memcpy(d + (k * ld + n) * es, p + from * es, es);
      if (biased) d[k * ld + n] ^= 0x80;  // es == 1
    }
  }
  return absl::OkStatus();
}

}  // namespace microkernels
}  // namespace hgc
