#include "microkernels/pack.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace hgc {
namespace microkernels {
namespace {

// Copies element-by-element as raw bytes of size `es`; one template-free loop
// serves every data type.
void PackBytes(const BrgemmDesc& desc, const BSource& src, char* dst) {
  const int64_t es = InputElementSize(desc.dtype);
  const bool biased = PackedBIsBiased(desc);
  std::memset(dst, biased ? 0x80 : 0, PackedBBytes(desc));
  const char* s = static_cast<const char*>(src.data);
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
