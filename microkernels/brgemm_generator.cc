#include "microkernels/brgemm_generator.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

BrgemmGenerator::BrgemmGenerator(const BrgemmDesc& desc,
                                 const BrgemmBlocking& blocking, int lanes)
    : JitGenerator(desc.ToString()),
      desc_(desc),
      blocking_(blocking),
      lanes_(lanes) {}

void BrgemmGenerator::EmitTiles() {
  const int full_cols = blocking_.nvecs * lanes_;
  EmitNBlocks(desc_.n / full_cols, full_cols);
  if (desc_.n % full_cols != 0) {
    EmitNBlocks(1, static_cast<int>(desc_.n % full_cols));
  }
}

void BrgemmGenerator::EmitNBlocks(int64_t count, int cols) {
  if (count == 0) return;
  // Only the last N block can be partial.
  if (cols % lanes_ != 0) BeforeNTail(cols);
  Xbyak::Label loop;
  if (count > 1) mov(reg_n_, count);
  L(loop);
  mov(reg_c_, reg_c_n_);
  xor_(reg_aoff_, reg_aoff_);
  NBlockPrologue();
  const int rows = blocking_.rows;
  EmitMBlocks(desc_.m / rows, rows, cols);
  if (desc_.m % rows != 0) {
    EmitMBlocks(1, static_cast<int>(desc_.m % rows), cols);
  }
  add(reg_c_n_, cols * 4);
  // The next N block: the next panel, or the next columns of B's rows.
  AddImm(reg_boff_,
         HasBPanels(desc_) ? desc_.b_panel_bytes
                           : cols * group() * a_elem_bytes(),
         reg_tmp_);
  if (count > 1) {
    dec(reg_n_);
    jnz(loop, T_NEAR);
  }
}

void BrgemmGenerator::EmitMBlocks(int64_t count, int rows, int cols) {
  if (count == 0) return;
  Xbyak::Label loop;
  if (count > 1) mov(reg_m_, count);
  L(loop);
  EmitTile(rows, cols);
  MBlockEpilogue(rows);
  AddImm(reg_c_, rows * desc_.ldc * 4, reg_tmp_);
  AddImm(reg_aoff_, rows * desc_.lda * a_elem_bytes(), reg_tmp_);
  if (count > 1) {
    dec(reg_m_);
    jnz(loop, T_NEAR);
  }
}

void BrgemmGenerator::EmitBatchLoop(const std::function<void()>& body) {
  Xbyak::Label batch_loop, done;
  mov(reg_iter_a_, ptr[reg_args_ + kArgA]);
  mov(reg_iter_b_, ptr[reg_args_ + kArgB]);
  mov(reg_batch_, ptr[reg_args_ + kArgBatch]);
  test(reg_batch_, reg_batch_);
  jle(done, T_NEAR);
  L(batch_loop);
  if (desc_.batch_kind == BatchKind::kPointerList) {
    mov(reg_a_, ptr[reg_iter_a_]);
    mov(reg_b_, ptr[reg_iter_b_]);
    add(reg_iter_a_, 8);
    add(reg_iter_b_, 8);
  } else {
    mov(reg_a_, reg_iter_a_);
    mov(reg_b_, reg_iter_b_);
    AddImm(reg_iter_a_, desc_.stride_a_bytes, reg_tmp_);
    AddImm(reg_iter_b_, desc_.stride_b_bytes, reg_tmp_);
  }
  add(reg_a_, reg_aoff_);
  add(reg_b_, reg_boff_);
  body();
  dec(reg_batch_);
  jnz(batch_loop, T_NEAR);
  L(done);
}

void BrgemmGenerator::LoadPartialGroup(int row, int64_t a_off, int valid) {
  const int64_t disp = row * desc_.lda * a_elem_bytes() + a_off;
  const int bytes = valid * static_cast<int>(a_elem_bytes());
  switch (bytes) {
    case 1:
      movzx(reg_tmp_.cvt32(), byte[reg_a_ + disp]);
      break;
    case 2:
      movzx(reg_tmp_.cvt32(), word[reg_a_ + disp]);
      break;
    default:  // 3 bytes: int8 with K % 4 == 3.
      movzx(reg_tmp_.cvt32(), word[reg_a_ + disp]);
      movzx(reg_tmp2_.cvt32(), byte[reg_a_ + disp + 2]);
      shl(reg_tmp2_.cvt32(), 16);
      or_(reg_tmp_.cvt32(), reg_tmp2_.cvt32());
      break;
  }
}

int64_t BrgemmGenerator::RegisterTiles() const {
  const int full_cols = blocking_.nvecs * lanes_;
  return ((desc_.n + full_cols - 1) / full_cols) *
         ((desc_.m + blocking_.rows - 1) / blocking_.rows);
}

int64_t BrgemmGenerator::RegionLinesPerTrip() const {
  const int64_t trips = desc_.k / blocking_.k_unroll;
  if (desc_.prefetch_lines <= 0 || trips < 2) return 0;
  const int64_t total_trips = RegisterTiles() * trips;
  return (desc_.prefetch_lines + total_trips - 1) / total_trips;
}

void BrgemmGenerator::EmitPrefetchTrip(int64_t lines,
                                       const Xbyak::Address* region_end) {
  for (int64_t i = 0; i < lines; ++i) prefetcht1(ptr[reg_tmp2_ + i * 64]);
  add(reg_tmp2_, static_cast<int>(lines * 64));
  if (region_end != nullptr) {
    cmp(reg_tmp2_, *region_end);
    cmova(reg_tmp2_, *region_end);
  }
}

void BrgemmGenerator::EnterDaz() {
  constexpr uint32_t kMxcsrDaz = 1u << 6;
  stmxcsr(ptr[rsp]);
  mov(reg_tmp_.cvt32(), ptr[rsp]);
  or_(reg_tmp_.cvt32(), kMxcsrDaz);
  mov(ptr[rsp + 4], reg_tmp_.cvt32());
  ldmxcsr(ptr[rsp + 4]);
}

void BrgemmGenerator::RestoreMxcsr() { ldmxcsr(ptr[rsp]); }

void BrgemmGenerator::EmitKLoop(int rows, int nvecs, bool masked) {
  const int64_t g = group();
  const int64_t full_groups = desc_.k / g;
  const int tail = static_cast<int>(desc_.k % g);
  const int64_t a_step = g * a_elem_bytes();              // one group of A
  const int64_t b_step = desc_.ldb * g * a_elem_bytes();  // one packed row
  const int unroll = blocking_.k_unroll;
  const int64_t trips = full_groups / unroll;
  // A loop only when it runs more than once; a single trip is straight code.
  if (trips > 1) {
    Xbyak::Label loop;
    mov(reg_k_, trips);
    L(loop);
    for (int u = 0; u < unroll; ++u) {
      ComputeGroup(rows, nvecs, masked, u * a_step, u * b_step,
                   static_cast<int>(g));
    }
    KLoopTrip();
    add(reg_a_, unroll * a_step);
    AddImm(reg_b_, unroll * b_step, reg_tmp_);
    dec(reg_k_);
    jnz(loop, T_NEAR);
  }
  const int64_t straight = trips > 1 ? full_groups % unroll : full_groups;
  for (int64_t u = 0; u < straight; ++u) {
    ComputeGroup(rows, nvecs, masked, u * a_step, u * b_step,
                 static_cast<int>(g));
  }
  if (tail != 0) {
    ComputeGroup(rows, nvecs, masked, straight * a_step, straight * b_step,
                 tail);
  }
}

}  // namespace microkernels
}  // namespace hgc
