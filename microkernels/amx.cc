#include "microkernels/amx.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "microkernels/jit_generator.h"
#include "support/check.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {
namespace {

// From <asm/prctl.h> and the kernel's xstate numbering; spelled out because
// older headers lack them.
constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

absl::Status Request() {
  if (!AmxSupported()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "AMX not available on this CPU (", DescribeCpu(), ")"));
  }
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("AMX not available: arch_prctl(ARCH_REQ_XCOMP_PERM) "
                     "failed: ",
                     std::strerror(errno)));
  }
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0 ||
      (bitmask & (1ul << kXfeatureXtiledata)) == 0) {
    return absl::FailedPreconditionError(
        "AMX not available: the kernel did not grant tile data permission");
  }
  return absl::OkStatus();
}

// Three leaf functions: store_config(void* dst), load_config(const void*),
// release().
class TileStubs : public JitGenerator {
 public:
  TileStubs() : JitGenerator("amx_tile_stubs") {}
  void (*store)(void*) = nullptr;
  void (*load)(const void*) = nullptr;
  void (*release)() = nullptr;

 protected:
  absl::Status Generate() override {
    using namespace Xbyak::util;  // NOLINT
    sttilecfg(ptr[rdi]);
    ret();
    align(16);
    L(load_label_);
    ldtilecfg(ptr[rdi]);
    ret();
    align(16);
    L(release_label_);
    tilerelease();
    ret();
    return absl::OkStatus();
  }

 public:
  void Resolve() {
    store = reinterpret_cast<void (*)(void*)>(const_cast<uint8_t*>(getCode()));
    load = reinterpret_cast<void (*)(const void*)>(
        const_cast<uint8_t*>(load_label_.getAddress()));
    release = reinterpret_cast<void (*)()>(
        const_cast<uint8_t*>(release_label_.getAddress()));
  }

 private:
  Xbyak::Label load_label_, release_label_;
};

const TileStubs& Stubs() {
  static const TileStubs* stubs = [] {
    HGC_CHECK(RequestAmxPermission().ok());
    auto* s = new TileStubs();
    HGC_CHECK(s->Create().ok());
    s->Resolve();
    return s;
  }();
  return *stubs;
}

}  // namespace

std::array<uint8_t, 64> CurrentTileConfig() {
  alignas(64) std::array<uint8_t, 64> bytes{};
  Stubs().store(bytes.data());
  return bytes;
}

void LoadTileConfig(const TileConfig& config) {
  alignas(64) const std::array<uint8_t, 64> bytes = config.ToBytes();
  Stubs().load(bytes.data());
}

void ReleaseTiles() { Stubs().release(); }

void TileConfig::Set(int t, int rows_, int colsb_) {
  HGC_CHECK(t >= 0 && t < kAmxTiles);
  HGC_CHECK(rows_ >= 0 && rows_ <= kAmxMaxRows);
  HGC_CHECK(colsb_ >= 0 && colsb_ <= kAmxMaxColsBytes);
  rows[t] = static_cast<uint8_t>(rows_);
  colsb[t] = static_cast<uint16_t>(colsb_);
}

std::array<uint8_t, 64> TileConfig::ToBytes() const {
  std::array<uint8_t, 64> bytes{};
  bytes[0] = palette;
  bytes[1] = start_row;
  for (int t = 0; t < kAmxTiles; ++t) {
    bytes[16 + 2 * t] = static_cast<uint8_t>(colsb[t] & 0xff);
    bytes[17 + 2 * t] = static_cast<uint8_t>(colsb[t] >> 8);
    bytes[48 + t] = rows[t];
  }
  return bytes;
}

std::string TileConfig::ToString() const {
  std::string s;
  for (int t = 0; t < kAmxTiles; ++t) {
    if (rows[t] == 0) continue;
    absl::StrAppend(&s, s.empty() ? "" : " ", "t", t, "=", rows[t], "x",
                    colsb[t]);
  }
  return s;
}

bool AmxSupported() { return IsaAvailable(Isa::kAvx512CoreAmx); }

absl::Status RequestAmxPermission() {
  // The cap may change between calls (tests lower it); only a granted
  // permission is remembered.
  if (!AmxSupported()) return Request();
  static const absl::Status* granted = new absl::Status(Request());
  return *granted;
}

}  // namespace microkernels
}  // namespace hgc
