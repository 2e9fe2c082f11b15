#include "microkernels/brgemm_amx.h"

#include <utility>

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {
namespace {

using namespace Xbyak::util;  // NOLINT

// Register roles. The loop counters live on the stack: an AMX block does
// hundreds of cycles of tile work per counter update, and tileloadd needs
// its strides in registers.
const Xbyak::Reg64 reg_args = rdi;
const Xbyak::Reg64 reg_c = rsi;        // C block
const Xbyak::Reg64 reg_c_n = rdx;      // C at the N block, row 0
const Xbyak::Reg64 reg_aoff = rcx;     // M block offset in A (bytes)
const Xbyak::Reg64 reg_boff = r8;      // N block offset in B (bytes)
const Xbyak::Reg64 reg_a = r9;
const Xbyak::Reg64 reg_b = r10;
const Xbyak::Reg64 reg_iter_a = r11;
const Xbyak::Reg64 reg_iter_b = rax;
const Xbyak::Reg64 reg_batch = rbx;
const Xbyak::Reg64 reg_lda = r12;      // A row stride (bytes)
const Xbyak::Reg64 reg_ldb = r13;      // packed B row stride (bytes)
const Xbyak::Reg64 reg_ldc = rbp;      // C row stride (bytes)
const Xbyak::Reg64 reg_64 = r14;       // staging stride
const Xbyak::Reg64 reg_tmp = r15;

// Stack frame above the 64-byte aligned scratch.
constexpr int kSavedRsp = kAmxStageBytes;
constexpr int kNCount = kAmxStageBytes + 8;
constexpr int kMCount = kAmxStageBytes + 16;
constexpr int kKCount = kAmxStageBytes + 24;
constexpr int kCfgReadback = kAmxStageBytes + 64;  // 64 bytes, aligned
constexpr int kFrameBytes = kAmxStageBytes + 128;

// Blocks prefetch the next block's C (EmitBlock) when they have at least
// kPrefetchCMinChunks full K chunks (shorter blocks would spend more on the
// 64 prefetches than their tile work hides) and C rows at least
// kPrefetchCMinLdcBytes apart (a wide C, likely past L2). Measured with
// bench/brgemm_bench.cc, hgc/oneDNN with / without the prefetch: 1024^3
// bf16 1.17 / 0.90-0.96, u8s8 1.04-1.13 / 0.83-0.99; 512^3 (ldc 2 KB)
// equal or better; 256^3 (ldc 1 KB, C in L2) bf16 1.06 / 1.16 and u8s8
// 1.16 / 1.32, hence the ldc bound.
constexpr int64_t kPrefetchCMinChunks = 4;
constexpr int64_t kPrefetchCMinLdcBytes = 2048;

}  // namespace

BrgemmAmx::BrgemmAmx(const BrgemmDesc& desc, AmxPlan plan)
    : JitGenerator(desc.ToString()), desc_(desc), plan_(std::move(plan)) {
  // The first (M kind, N kind) block the kernel runs: its configuration is
  // the one the kernel needs on entry and, for single-config plans, the one
  // it leaves behind.
  for (int ni = 0; ni < 2 && entry_kind_ < 0; ++ni) {
    for (int mi = 0; mi < 2 && entry_kind_ < 0; ++mi) {
      if (plan_.m_count[mi] != 0 && plan_.n_count[ni] != 0) {
        entry_kind_ = mi * 2 + ni;
      }
    }
  }
}

const TileConfig& BrgemmAmx::entry_config() const {
  return plan_.kinds[entry_kind_ / 2][entry_kind_ % 2].config;
}

absl::Status BrgemmAmx::Generate() {
  const int64_t es = InputElementSize(desc_.dtype);
  const int64_t g = VnniGranularity(desc_.dtype);
  Preamble();
  mov(reg_tmp, rsp);
  sub(rsp, kFrameBytes + 64);
  and_(rsp, -64);
  mov(ptr[rsp + kSavedRsp], reg_tmp);
  mov(reg_lda, desc_.lda * es);
  mov(reg_ldb, desc_.ldb * g * es);
  mov(reg_ldc, desc_.ldc * 4);
  mov(reg_64, 64);
  if (plan_.tail_k != 0) {
    // The staging scratch starts zeroed: padding rows and bytes must be
    // zero, not stack garbage (an Inf there times a zero would be NaN).
    vpxord(zmm0, zmm0, zmm0);
    for (int off = 0; off < kAmxStageBytes; off += 64) {
      vmovdqu8(ptr[rsp + off], zmm0);
    }
  }
  mov(reg_c_n, ptr[reg_args + kArgC]);
  xor_(reg_boff, reg_boff);
  if (plan_.single_config) {
    // The thread's tiles may already hold this configuration (the last
    // kernel of the same shape left them so): read it back and skip the
    // ldtilecfg, which costs ~12x the check and zeroes the tiles.
    const Xbyak::Label& cfg = configs_[entry_kind_ / 2][entry_kind_ % 2];
    Xbyak::Label configured;
    sttilecfg(ptr[rsp + kCfgReadback]);
    vmovdqu64(zmm0, ptr[rsp + kCfgReadback]);
    vpcmpeqq(k1, zmm0, ptr[rip + cfg]);
    kortestb(k1, k1);
    jc(configured, T_NEAR);  // CF: all eight qwords equal
    ldtilecfg(ptr[rip + cfg]);
    L(configured);
  }
  for (int ni = 0; ni < 2; ++ni) {
    if (plan_.n_count[ni] == 0) continue;
    Xbyak::Label n_loop;
    mov(qword[rsp + kNCount], plan_.n_count[ni]);
    L(n_loop);
    mov(reg_c, reg_c_n);
    xor_(reg_aoff, reg_aoff);
    for (int mi = 0; mi < 2; ++mi) {
      if (plan_.m_count[mi] == 0) continue;
      if (!plan_.single_config) ldtilecfg(ptr[rip + configs_[mi][ni]]);
      Xbyak::Label m_loop;
      mov(qword[rsp + kMCount], plan_.m_count[mi]);
      L(m_loop);
      EmitBlock(plan_.kinds[mi][ni], mi == 1 || plan_.m_count[1] == 0);
      AddImm(reg_c, kAmxBlock * desc_.ldc * 4, reg_tmp);
      AddImm(reg_aoff, kAmxBlock * desc_.lda * es, reg_tmp);
      dec(qword[rsp + kMCount]);
      jnz(m_loop, T_NEAR);
    }
    add(reg_c_n, kAmxBlock * 4);
    add(reg_boff, kAmxBlock * g * es);
    dec(qword[rsp + kNCount]);
    jnz(n_loop, T_NEAR);
  }
  // No tilerelease: the configuration stays for the next call (amx.h).
  mov(rsp, ptr[rsp + kSavedRsp]);
  Postamble();
  // The configurations, read by ldtilecfg through rip-relative addresses.
  align(64);
  for (int mi = 0; mi < 2; ++mi) {
    for (int ni = 0; ni < 2; ++ni) {
      L(configs_[mi][ni]);
      for (uint8_t byte : plan_.kinds[mi][ni].config.ToBytes()) db(byte);
    }
  }
  return absl::OkStatus();
}

void BrgemmAmx::EmitBlock(const AmxBlockKind& kind, bool last_m_loop) {
  if (plan_.full_chunks >= kPrefetchCMinChunks &&
      desc_.ldc * 4 >= kPrefetchCMinLdcBytes) {
    // Prefetch, for writing, the C block the kernel stores next: the next
    // M block, or after the last one the next N block's first (which for
    // the last N block is where a GEMM's next panel call starts, C + N).
    // At 1024^3 C is 4 MB, far past L2, and without this every tilestored
    // row waits for its line's read-for-ownership (the 16 rows of a tile
    // share one L1 set at ldc = 4 KB). reg_a / reg_b are free until the
    // batch loop.
    mov(reg_a, reg_c);
    AddImm(reg_a, kAmxBlock * desc_.ldc * 4, reg_tmp);
    if (last_m_loop) {
      lea(reg_b, ptr[reg_c_n + kAmxBlock * 4]);
      cmp(qword[rsp + kMCount], 1);
      cmove(reg_a, reg_b);
    }
    for (int row = 0; row < kAmxBlock; ++row) {
      for (int c = 0; c < kind.col_tiles; ++c) {
        prefetchw(ptr[reg_a + row * desc_.ldc * 4 + c * 64]);
      }
    }
  }
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int c = 0; c < kind.col_tiles; ++c) {
      const Xbyak::Tmm t(AmxCTile(r, c));
      if (desc_.accumulate) {
        tileloadd(t, ptr[reg_c + reg_ldc + r * 16 * desc_.ldc * 4 + c * 64]);
      } else {
        tilezero(t);
      }
    }
  }
  Xbyak::Label batch_loop, store;
  mov(reg_iter_a, ptr[reg_args + kArgA]);
  mov(reg_iter_b, ptr[reg_args + kArgB]);
  mov(reg_batch, ptr[reg_args + kArgBatch]);
  test(reg_batch, reg_batch);
  jle(store, T_NEAR);
  L(batch_loop);
  if (desc_.batch_kind == BatchKind::kPointerList) {
    mov(reg_a, ptr[reg_iter_a]);
    mov(reg_b, ptr[reg_iter_b]);
    add(reg_iter_a, 8);
    add(reg_iter_b, 8);
  } else {
    mov(reg_a, reg_iter_a);
    mov(reg_b, reg_iter_b);
    AddImm(reg_iter_a, desc_.stride_a_bytes, reg_tmp);
    AddImm(reg_iter_b, desc_.stride_b_bytes, reg_tmp);
  }
  add(reg_a, reg_aoff);
  add(reg_b, reg_boff);
  if (plan_.full_chunks > 0) {
    Xbyak::Label k_loop;
    mov(qword[rsp + kKCount], plan_.full_chunks);
    L(k_loop);
    EmitChunk(kind, false);
    add(reg_a, 64);
    AddImm(reg_b, 16 * desc_.ldb * 4, reg_tmp);
    dec(qword[rsp + kKCount]);
    jnz(k_loop, T_NEAR);
  }
  if (plan_.tail_k != 0) {
    EmitStage(kind);
    EmitChunk(kind, true);
  }
  dec(reg_batch);
  jnz(batch_loop, T_NEAR);
  L(store);
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int c = 0; c < kind.col_tiles; ++c) {
      tilestored(ptr[reg_c + reg_ldc + r * 16 * desc_.ldc * 4 + c * 64],
                 Xbyak::Tmm(AmxCTile(r, c)));
    }
  }
}

void BrgemmAmx::EmitChunk(const AmxBlockKind& kind, bool staged) {
  for (const AmxOp& op : kind.chunk_ops) {
    const Xbyak::Tmm t(op.tile);
    switch (op.kind) {
      case AmxOp::kLoadA:
        if (staged) {
          tileloadd(t, ptr[rsp + reg_64 + op.index * 1024]);
        } else {
          tileloadd(t, ptr[reg_a + reg_lda + op.index * 16 * desc_.lda *
                                                  InputElementSize(desc_.dtype)]);
        }
        break;
      case AmxOp::kLoadB:
        if (staged) {
          tileloadd(t, ptr[rsp + reg_64 + kAmxStageBOffset + op.index * 1024]);
        } else {
          tileloadd(t, ptr[reg_b + reg_ldb + op.index * 64]);
        }
        break;
      case AmxOp::kDot:
        switch (desc_.dtype) {
          case BrgemmDataType::kBf16:
            tdpbf16ps(t, Xbyak::Tmm(op.a), Xbyak::Tmm(op.b));
            break;
          case BrgemmDataType::kU8S8:
            tdpbusd(t, Xbyak::Tmm(op.a), Xbyak::Tmm(op.b));
            break;
          case BrgemmDataType::kS8S8:
            tdpbssd(t, Xbyak::Tmm(op.a), Xbyak::Tmm(op.b));
            break;
          case BrgemmDataType::kF32:
            break;  // rejected by ValidateBrgemmDesc
        }
        break;
    }
  }
}

void BrgemmAmx::EmitStage(const AmxBlockKind& kind) {
  const int64_t es = InputElementSize(desc_.dtype);
  const int64_t g = VnniGranularity(desc_.dtype);
  const int64_t tail_bytes = plan_.tail_k * es;
  const int64_t tail_rows = (plan_.tail_k + g - 1) / g;
  // After the K loop reg_a / reg_b point at the tail chunk. k2: the A
  // row's valid bytes; k3: the B row's valid columns (4 bytes each).
  mov(reg_tmp, (uint64_t{1} << tail_bytes) - 1);
  kmovq(k2, reg_tmp);
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int row = 0; row < kind.rows[r]; ++row) {
      vmovdqu8(zmm0 | k2 | T_z,
               ptr[reg_a + (r * 16 + row) * desc_.lda * es]);
      vmovdqu8(ptr[rsp + r * 1024 + row * 64], zmm0);
    }
  }
  for (int c = 0; c < kind.col_tiles; ++c) {
    const int bytes = kind.cols[c] * 4;
    mov(reg_tmp, bytes == 64 ? ~uint64_t{0} : (uint64_t{1} << bytes) - 1);
    kmovq(k3, reg_tmp);
    for (int64_t kr = 0; kr < tail_rows; ++kr) {
      vmovdqu8(zmm0 | k3 | T_z,
               ptr[reg_b + kr * desc_.ldb * g * es + c * 64]);
      vmovdqu8(ptr[rsp + kAmxStageBOffset + c * 1024 + kr * 64], zmm0);
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
