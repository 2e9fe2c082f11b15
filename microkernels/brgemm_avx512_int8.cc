#include "microkernels/brgemm_avx512_int8.h"

#include <algorithm>

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

namespace {

// Calls with at most this many rows compute every row's correction once,
// up front, into a stack array (4 bytes a row); taller ones per tile.
constexpr int64_t kMaxUpfrontRows = 1024;
// Rows whose sums one vector holds in order (two reduced vectors of eight).
constexpr int kRowSumGroup = 16;

// Lane of tile row `row` in the reduced vector row / 8 after RowSums'
// transposed reduction: 128-bit chunk row % 4, qword (row / 4) % 2.
int RowLane(int row) { return 4 * (row % 4) + 2 * ((row / 4) % 2); }

}  // namespace

int64_t BrgemmAvx512Int8::FrameBytes() const {
  const int64_t rows = Upfront() ? desc().m : blocking().rows;
  return 64 + (rows + kRowSumGroup - 1) / kRowSumGroup * 64;
}

bool BrgemmAvx512Int8::Upfront() const { return desc().m <= kMaxUpfrontRows; }

// Reserved registers: 0 = broadcast A; 1.. = B vectors.
void BrgemmAvx512Int8::InitConstants() {
  if (!signed_a()) return;
  // The vpermd indices that put RowSums' 16 rows in order, beside the code.
  Xbyak::Label skip;
  jmp(skip, T_NEAR);
  align(64);
  L(order_);
  for (int i = 0; i < 16; ++i) dd(16 * (i / 8) + RowLane(i % 8));
  L(skip);
  const int64_t tail = desc().k % 64;
  if (tail != 0) {
    // k2 selects the bytes of a row's last partial 64-byte chunk.
    mov(reg_tmp_, (uint64_t{1} << tail) - 1);
    kmovq(k2, reg_tmp_);
  }
}

int BrgemmAvx512Int8::RowSums(int rows) {
  // Row r's partial sums live in zmm r; zmm30/31 are temporaries.
  auto part = [](int r) { return Xbyak::Zmm(r); };
  const Xbyak::Zmm t0(30), t1(31);
  // 1. 128 * sum_k A[r][k] over every batch element, 16 dword lanes per
  //    row: vpdpbusd of 0x80 bytes (u8 128) by 64 bytes of A (s8) at a time.
  for (int r = 0; r < rows; ++r) vpxord(part(r), part(r), part(r));
  mov(reg_tmp_.cvt32(), 0x80808080u);
  vpbroadcastd(t1, reg_tmp_.cvt32());
  const int64_t chunks = desc().k / 64;
  const bool tail = desc().k % 64 != 0;
  EmitBatchLoop([&] {
    for (int64_t c = 0; c < chunks; ++c) {
      for (int r = 0; r < rows; ++r) {
        vpdpbusd(part(r), t1, ptr[reg_a_ + r * desc().lda + c * 64]);
      }
    }
    if (tail) {
      for (int r = 0; r < rows; ++r) {
        // Masked loads never touch (or fault on) the bytes past K.
        vmovdqu8(t0 | k2 | T_z, ptr[reg_a_ + r * desc().lda + chunks * 64]);
        vpdpbusd(part(r), t1, t0);
      }
    }
  });
  // 2. Transposed reduction: each level halves the lanes per row and packs
  //    twice as many rows per vector, output j into zmm j (its inputs are
  //    zmm 2j and 2j + 1, so nothing is overwritten before it is read). An
  //    odd count pairs the last vector with itself.
  auto level = [&](int count, auto&& combine) {
    const int out = (count + 1) / 2;
    for (int j = 0; j < out; ++j) {
      combine(part(2 * j), part(std::min(2 * j + 1, count - 1)));
      vpaddd(part(j), t0, t1);
    }
    return out;
  };
  int count = rows;
  // 16 -> 8 lanes per row: 256-bit halves (row 2j, row 2j + 1).
  count = level(count, [&](const Xbyak::Zmm& a, const Xbyak::Zmm& b) {
    vshufi64x2(t0, a, b, 0x44);
    vshufi64x2(t1, a, b, 0xee);
  });
  // 8 -> 4: 128-bit chunk c holds row 4j + c.
  count = level(count, [&](const Xbyak::Zmm& a, const Xbyak::Zmm& b) {
    vshufi32x4(t0, a, b, 0x88);
    vshufi32x4(t1, a, b, 0xdd);
  });
  // 4 -> 2: chunk c, qword h holds row 8j + 4h + c.
  count = level(count, [&](const Xbyak::Zmm& a, const Xbyak::Zmm& b) {
    vpunpcklqdq(t0, a, b);
    vpunpckhqdq(t1, a, b);
  });
  // 2 -> 1, negated, into zmm(29 - j): lane RowLane(r) of vector r / 8 is
  // -128 * (row r's sum).
  vpxord(t1, t1, t1);
  for (int j = 0; j < count; ++j) {
    vpshufd(t0, part(j), 0xb1);
    vpaddd(part(j), part(j), t0);
    vpsubd(Xbyak::Zmm(29 - j), t1, part(j));
  }
  return count;
}

void BrgemmAvx512Int8::StoreRowSums(int rows, const Xbyak::RegExp& at) {
  const int count = RowSums(rows);
  const Xbyak::Zmm index(31);
  vmovdqu32(index, ptr[rip + order_]);
  for (int p = 0; 2 * p < count; ++p) {
    // Rows 16p .. 16p + 15 in order; the frame has room for whole vectors.
    const Xbyak::Zmm out(29 - 2 * p);
    if (2 * p + 1 < count) {
      vpermt2d(out, index, Xbyak::Zmm(28 - 2 * p));
    } else {
      vpermd(out, index, out);
    }
    vmovdqu32(ptr[at + 64 * p], out);
  }
}

void BrgemmAvx512Int8::CallPrologue() {
  if (!signed_a()) return;
  // Frame: [rsp] = where the current tile's corrections start, [rsp + 64 +
  // 4 r] = row r's correction (of the call, or of the tile when not
  // Upfront()).
  sub(rsp, FrameBytes());
  if (!Upfront()) return;
  xor_(reg_aoff_, reg_aoff_);
  lea(reg_c_, ptr[rsp + 64]);
  const int64_t full = desc().m / kRowSumGroup;
  auto group = [&](int rows) {
    StoreRowSums(rows, reg_c_);
    add(reg_c_, 64);
    AddImm(reg_aoff_, kRowSumGroup * desc().lda, reg_tmp_);
  };
  if (full > 0) {
    Xbyak::Label loop;
    mov(reg_m_, full);
    L(loop);
    group(kRowSumGroup);
    dec(reg_m_);
    jnz(loop, T_NEAR);
  }
  if (desc().m % kRowSumGroup != 0) {
    group(static_cast<int>(desc().m % kRowSumGroup));
  }
}

void BrgemmAvx512Int8::CallEpilogue() {
  if (signed_a()) add(rsp, FrameBytes());
}

void BrgemmAvx512Int8::NBlockPrologue() {
  if (!signed_a() || !Upfront()) return;
  lea(reg_tmp_, ptr[rsp + 64]);
  mov(ptr[rsp], reg_tmp_);
}

void BrgemmAvx512Int8::InitAccumulators(int rows, int nvecs) {
  if (signed_a() && !Upfront()) {
    // The tile's own rows (reg_aoff_), before its accumulators are live.
    StoreRowSums(rows, rsp + 64);
    lea(reg_tmp_, ptr[rsp + 64]);
    mov(ptr[rsp], reg_tmp_);
  }
  BrgemmAvx512Base::InitAccumulators(rows, nvecs);
}

void BrgemmAvx512Int8::FinishAccumulators(int rows, int nvecs) {
  if (!signed_a()) return;
  // Added last rather than loaded as the starting values: nothing in the K
  // loop waits for the row sums (or for a load that may sit behind the
  // previous tile's C stores), and the loads of the embedded broadcasts run
  // early.
  mov(reg_tmp_, ptr[rsp]);
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < nvecs; ++j) {
      vpaddd(Acc(r, j, nvecs), Acc(r, j, nvecs), ptr_b[reg_tmp_ + 4 * r]);
    }
  }
  add(qword[rsp], 4 * rows);
}

void BrgemmAvx512Int8::ComputeGroup(int rows, int nvecs, bool masked,
                                    int64_t a_off, int64_t b_off, int valid) {
  const Xbyak::Zmm bcast = Reserved(0);
  LoadBVectors(nvecs, masked, b_off, /*float_domain=*/false);
  for (int i = 0; i < rows; ++i) {
    // One broadcast load per row feeds every vector: an embedded-broadcast
    // operand per instruction would need rows * nvecs loads per group and
    // saturate the load ports before the VNNI ports.
    if (valid != 4) {
      BroadcastPartialGroup(bcast, i, a_off, valid);
    } else {
      vpbroadcastd(bcast, AAddr(i, a_off));
    }
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm b = Reserved(1 + j);
      if (signed_a()) {
        // B is packed as u8 B + 128: the unsigned operand. A's bytes past K
        // in the tail group are zero, so B's padding adds nothing.
        vpdpbusd(Acc(i, j, nvecs), b, bcast);
      } else {
        vpdpbusd(Acc(i, j, nvecs), bcast, b);
      }
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
