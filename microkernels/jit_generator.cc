#include "microkernels/jit_generator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "support/perf_map.h"

namespace hgc {
namespace microkernels {
namespace {

// AutoGrow starts with this many bytes and doubles: most kernels fit.
constexpr size_t kInitialCodeBytes = 16 * 1024;

const Xbyak::Reg64 kCalleeSaved[] = {Xbyak::util::rbx, Xbyak::util::rbp,
                                     Xbyak::util::r12, Xbyak::util::r13,
                                     Xbyak::util::r14, Xbyak::util::r15};

}  // namespace

JitGenerator::JitGenerator(std::string name)
    : Xbyak::CodeGenerator(kInitialCodeBytes, Xbyak::AutoGrow),
      name_(std::move(name)) {}

absl::Status JitGenerator::Create() {
  // The allocation in the constructor may already have failed; Xbyak keeps
  // the first error, so check before clearing.
  if (Xbyak::GetError() != 0 && getCode() == nullptr) {
    return absl::InternalError(absl::StrCat(
        "xbyak: ", Xbyak::ConvertErrorToString(Xbyak::GetError()), " in ",
        name_));
  }
  Xbyak::ClearError();
  absl::Status status = Generate();
  if (!status.ok()) {
    Xbyak::ClearError();
    return status;
  }
  readyRE();
  const int err = Xbyak::GetError();
  Xbyak::ClearError();
  if (err != 0) {
    return absl::InternalError(absl::StrCat(
        "xbyak: ", Xbyak::ConvertErrorToString(err), " in ", name_));
  }
  if (PerfMap* perf_map = PerfMap::FromEnvironment()) {
    perf_map->Record(getCode(), getSize(), name_);
  }
  return absl::OkStatus();
}

void JitGenerator::Preamble() {
  for (const Xbyak::Reg64& r : kCalleeSaved) push(r);
}

void JitGenerator::Postamble() {
  for (int i = static_cast<int>(sizeof(kCalleeSaved) / sizeof(kCalleeSaved[0])) - 1;
       i >= 0; --i) {
    pop(kCalleeSaved[i]);
  }
  vzeroupper();
  ret();
}

void JitGenerator::AddImm(const Xbyak::Reg64& reg, int64_t imm,
                          const Xbyak::Reg64& scratch) {
  if (imm == 0) return;
  if (imm >= INT32_MIN && imm <= INT32_MAX) {
    add(reg, static_cast<int32_t>(imm));
  } else {
    mov(scratch, imm);
    add(reg, scratch);
  }
}

// The table: 8 dwords of all ones, then 8 of zeros; the 8 dwords from
// 8 - count on have exactly their first `count` set.
void JitGenerator::LoadLaneMask(const Xbyak::Ymm& dst, int count,
                                const Xbyak::Reg64& scratch) {
  lea(scratch, ptr[rip + lane_mask_table_]);
  vmovdqu(dst, ptr[scratch + (8 - count) * 4]);
}

void JitGenerator::EmitLaneMaskTable() {
  align(32);
  L(lane_mask_table_);
  for (int i = 0; i < 16; ++i) dd(i < 8 ? 0xffffffffu : 0u);
}

}  // namespace microkernels
}  // namespace hgc
