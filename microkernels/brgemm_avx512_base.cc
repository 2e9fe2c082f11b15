#include "microkernels/brgemm_avx512_base.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

BrgemmAvx512Base::BrgemmAvx512Base(const BrgemmDesc& desc,
                                   const BrgemmBlocking& blocking)
    : JitGenerator(desc.ToString()), desc_(desc), blocking_(blocking) {}

Xbyak::Address BrgemmAvx512Base::AAddr(int row, int64_t a_off) {
  return ptr[reg_a_ + row * desc_.lda * a_elem_bytes() + a_off];
}

Xbyak::Address BrgemmAvx512Base::BAddr(int vec, int64_t b_off) {
  return ptr[reg_b_ + b_off + vec * 64];
}

void BrgemmAvx512Base::LoadBVectors(int nvecs, bool masked, int64_t b_off,
                                    bool float_domain) {
  LoadVectors(reg_b_, nvecs, masked, b_off, float_domain);
}

void BrgemmAvx512Base::LoadVectors(const Xbyak::Reg64& base, int nvecs,
                                   bool masked, int64_t off,
                                   bool float_domain) {
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Zmm v = Reserved(1 + j);
    const Xbyak::Zmm dst = masked && j == nvecs - 1 ? v | k1 | T_z : v;
    const Xbyak::Address src = ptr[base + off + j * 64];
    if (float_domain) {
      vmovups(dst, src);
    } else {
      vmovdqu32(dst, src);
    }
  }
}

void BrgemmAvx512Base::BroadcastPartialGroup(const Xbyak::Zmm& dst, int row,
                                             int64_t a_off, int valid) {
  // Assemble the group's bytes in a GPR: a full-width load could cross the
  // end of the buffer (the last row of A ends at K).
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
  vpbroadcastd(dst, reg_tmp_.cvt32());
}

absl::Status BrgemmAvx512Base::Generate() {
  Preamble();
  InitConstants();
  mov(reg_c_n_, ptr[reg_args_ + kArgC]);
  xor_(reg_boff_, reg_boff_);
  CallPrologue();
  const int full_cols = blocking_.nvecs * 16;
  EmitNBlocks(desc_.n / full_cols, full_cols);
  if (desc_.n % full_cols != 0)
    EmitNBlocks(1, static_cast<int>(desc_.n % full_cols));
  CallEpilogue();
  Postamble();
  return absl::OkStatus();
}

void BrgemmAvx512Base::EmitNBlocks(int64_t count, int cols) {
  if (count == 0) return;
  if (cols % 16 != 0) {
    // The N tail mask; only the last N block can be partial, so k1 is set
    // once, before it.
    mov(reg_tmp_.cvt32(), (1u << (cols % 16)) - 1);
    kmovw(k1, reg_tmp_.cvt32());
  }
  Xbyak::Label loop;
  if (count > 1) mov(reg_n_, count);
  L(loop);
  mov(reg_c_, reg_c_n_);
  xor_(reg_aoff_, reg_aoff_);
  NBlockPrologue();
  const int rows = blocking_.rows;
  EmitMBlocks(desc_.m / rows, rows, cols);
  if (desc_.m % rows != 0)
    EmitMBlocks(1, static_cast<int>(desc_.m % rows), cols);
  add(reg_c_n_, cols * 4);
  add(reg_boff_, cols * group() * a_elem_bytes());
  if (count > 1) {
    dec(reg_n_);
    jnz(loop, T_NEAR);
  }
}

void BrgemmAvx512Base::EmitMBlocks(int64_t count, int rows, int cols) {
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

void BrgemmAvx512Base::InitAccumulators(int rows, int nvecs) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm acc = Acc(i, j, nvecs);
      vpxord(acc, acc, acc);
    }
  }
}

void BrgemmAvx512Base::EmitBatchLoop(const std::function<void()>& body) {
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

void BrgemmAvx512Base::EmitTile(int rows, int cols) {
  const int nvecs = (cols + 15) / 16;
  const bool masked = cols % 16 != 0;
  InitAccumulators(rows, nvecs);
  EmitBatchLoop([&] { EmitKLoop(rows, nvecs, masked); });
  FinishAccumulators(rows, nvecs);
  StoreAcc(rows, nvecs, masked);
}

void BrgemmAvx512Base::EmitKLoop(int rows, int nvecs, bool masked) {
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
      ComputeGroup(rows, nvecs, masked, u * a_step, u * b_step, g);
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

void BrgemmAvx512Base::StoreAcc(int rows, int nvecs, bool masked) {
  PreparePostOps(nvecs, masked);
  for (int i = 0; i < rows; ++i) {
    PrepareRowPostOps(i);
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm acc = Acc(i, j, nvecs);
      const bool tail = masked && j == nvecs - 1;
      const Xbyak::Address c = ptr[reg_c_ + i * desc_.ldc * 4 + j * 64];
      if (desc_.accumulate) {
        // Masked, zeroing loads never touch the lanes past N.
        const Xbyak::Zmm dst = tail ? acc | k1 | T_z : acc;
        if (IsInt()) {
          vpaddd(dst, acc, c);
        } else {
          vaddps(dst, acc, c);
        }
      }
      ApplyPostOps(acc, j);
      if (tail) {
        vmovups(c | k1, acc);
      } else {
        vmovups(c, acc);
      }
    }
    FinishRowPostOps(i, nvecs, masked);
  }
}

}  // namespace microkernels
}  // namespace hgc
