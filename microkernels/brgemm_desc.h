// BrgemmDesc: the plain description of one batch-reduce GEMM microkernel.
//
//   C[M x N] (= or +=) sum_{i < batch} A_i[M x K] * B_i[K x N]
//
// Every size is fixed when the kernel is generated; only the pointers and the
// batch count arrive at call time. A is row-major with leading dimension lda
// (in elements). B is pre-packed (see pack.h) in the layout named by
// `b_layout`; ldb is the packed row width in columns (>= N), or with
// `b_panel_bytes` the width of each column panel, or for a transposed B
// (kTransposed: N rows of K, read as given) the stride of its rows in
// elements (>= K). C is row-major
// with leading dimension ldc. The descriptor is a value type: compare, hash
// and print it; the kernel cache keys on it.
#ifndef HGC_MICROKERNELS_BRGEMM_DESC_H_
#define HGC_MICROKERNELS_BRGEMM_DESC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {

// The element types of A, B and C, as one enum: only these four combinations
// exist.
enum class BrgemmDataType : uint8_t {
  kF32,   // f32 * f32 -> f32
  kBf16,  // bf16 * bf16 -> f32
  kU8S8,  // u8 * s8 -> s32
  kS8S8,  // s8 * s8 -> s32
};

// "f32f32f32", "bf16bf16f32", "u8s8s32", "s8s8s32".
const char* DataTypeName(BrgemmDataType dt);
// Bytes per element of A (and of B): 4, 2, 1, 1.
int64_t InputElementSize(BrgemmDataType dt);
// K elements interleaved per packed B group: 1 (f32), 2 (bf16), 4 (int8).
int64_t VnniGranularity(BrgemmDataType dt);

// How B is laid out in memory. With g = the layout's group size (1, 2, 4),
// element B[k][n] lives at offset ((k / g) * ldb + n) * g + k % g elements.
// Rows past K inside the last group are zero (pack.h guarantees it). s8s8
// B on the VNNI kernels is stored biased (PackedBIsBiased).
enum class BLayout : uint8_t {
  kPlain,  // f32 rows: B[k][n] at k * ldb + n.
  kVnni2,  // bf16 pairs along K interleaved per column.
  kVnni4,  // int8 groups of four along K interleaved per column.
  // f32 given transposed, as N rows of K: B[k][n] at n * ldb + k (ldb >= K).
  // A row of keys of attention's K is one such row. Only for one row of A
  // on AVX2 (brgemm_avx2_dot.h), whose products are dot products along K:
  // a decoder step's Q·Kᵀ reads K as it is stored, with no transposing copy.
  kTransposed,
};

// The layout each data type requires (f32 may also be kTransposed, where a
// kernel takes it).
BLayout RequiredBLayout(BrgemmDataType dt);
const char* BLayoutName(BLayout layout);

// How the kernel finds the i-th A and B block at call time.
enum class BatchKind : uint8_t {
  kPointerList,  // A_i = a_ptrs[i], B_i = b_ptrs[i].
  kStrided,      // A_i = a + i * stride_a bytes, B_i = b + i * stride_b bytes.
};

// The largest M, N, K and leading dimension a kernel takes: every
// displacement the generators fold into an instruction then fits in 32
// bits. Lowerings check their shapes against it before building kernels.
inline constexpr int64_t kMaxBrgemmDim = int64_t{1} << 20;

// See the file comment. All sizes are elements unless named *_bytes.
struct BrgemmDesc {
  // The instruction family the kernel is generated for. kAvx2 runs every
  // data type on YMM registers (brgemm_avx2.h: bf16 widened to f32, int8
  // widened to s16 for vpmaddwd). For bf16,
  // kAvx512Core selects the kernel that widens bf16 to f32 and uses FMA and
  // kAvx512CoreBf16 (or higher, below AMX) the vdpbf16ps kernel;
  // kAvx512CoreAmx selects the tile kernels for bf16 and int8.
  Isa isa = Isa::kAvx512Core;
  BrgemmDataType dtype = BrgemmDataType::kF32;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t lda = 0;  // >= K
  int64_t ldb = 0;  // >= N (or the panel width), packed columns per K group
  int64_t ldc = 0;  // >= N
  // false: C = sum (beta = 0). true: C += sum (beta = 1).
  bool accumulate = false;
  BatchKind batch_kind = BatchKind::kPointerList;
  int64_t stride_a_bytes = 0;  // kStrided only
  int64_t stride_b_bytes = 0;  // kStrided only
  BLayout b_layout = BLayout::kPlain;
  // 0: B is one block of ldb-wide rows. Otherwise (f32 only) B is stored as
  // column panels ldb columns wide, panel p (columns [p * ldb, (p + 1) *
  // ldb)) a K x ldb row-major block starting p * b_panel_bytes bytes after
  // panel 0 (PackedBIndex). A kernel's panels are exactly as wide as its
  // register tiles' columns (BlockColumns in brgemm_blocking.h), so each
  // tile reads its B rows from one contiguous block: rows far apart in a
  // plain B (a value matrix's, say) share few L1 sets and evict each
  // other between the M tiles that reuse them.
  int64_t b_panel_bytes = 0;
  // Post-ops on the finished C block (f32 only), in this order: multiply
  // by the call's scalar (scale: BrgemmCallArgs::scale, one float), add
  // the call's bias row (BrgemmCallArgs::bias, N floats) to every row
  // (with both, one fused multiply-add: C * scale + bias rounded once),
  // clamp at zero (relu: x > 0 ? x : +0, NaN stays NaN), and fold the
  // results into running row maxima (row_max, below). They apply after
  // the accumulation into C, so a K reduction split over several calls
  // asks for them on its last call only.
  bool scale = false;
  bool bias = false;
  bool relu = false;
  // BrgemmCallArgs::row_max holds 16 floats per row of C: lane l of row m
  // becomes vmaxps(its old value, C[m][n]) for every column n with
  // n % 16 == l, so the max of a row's 16 lanes is a running max of its
  // values (as x86's vmaxps takes it: a NaN need not survive). Attention's
  // score rows: their softmax max without another pass over them.
  bool row_max = false;
  // The other post-op, alone: row m of C multiplied by 1 / d[m] (the
  // reciprocal rounded to f32, then the product), d the call's
  // BrgemmCallArgs::row_divisors (M floats); attention's O / sum written
  // straight into the output.
  bool divide_rows = false;
  // 64-byte lines from BrgemmCallArgs::prefetch on that the call prefetches
  // into L2 (prefetcht1), spread evenly over the K-loop trips of its
  // register tiles: data a later call reads from memory (attention's next
  // head), fetched while this call computes instead of in a burst between
  // calls. 0: none. f32 only; a kernel whose K loop runs fewer than two
  // trips (K < 16) has nothing to spread them over and prefetches none.
  int64_t prefetch_lines = 0;

  // "brgemm:avx512_core_bf16:bf16bf16f32:M32N64K512:lda512:ldb64:ldc64:
  //  beta1:list:vnni2" (one line). Strided batches print as
  //  "stride(<a bytes>,<b bytes>)"; B panels add ":panels<bytes>" after
  //  the layout; post-ops add ":scale", ":bias", ":relu", ":rowmax" and
  //  ":divrows", a prefetch ":pf<lines>".
  std::string ToString() const;

  friend bool operator==(const BrgemmDesc& x, const BrgemmDesc& y);
  friend bool operator!=(const BrgemmDesc& x, const BrgemmDesc& y) {
    return !(x == y);
  }
  template <typename H>
  friend H AbslHashValue(H h, const BrgemmDesc& d) {
    return H::combine(
        std::move(h), static_cast<int>(d.isa), static_cast<int>(d.dtype), d.m,
        d.n, d.k, d.lda, d.ldb, d.ldc, d.accumulate,
        static_cast<int>(d.batch_kind), d.stride_a_bytes, d.stride_b_bytes,
        static_cast<int>(d.b_layout), d.b_panel_bytes, d.scale, d.bias, d.relu,
        d.row_max, d.divide_rows, d.prefetch_lines);
  }
};

// Fills a descriptor with tight leading dimensions (lda = K, ldb = ldc = N),
// the layout `dtype` requires, beta 0 and a pointer-list batch.
BrgemmDesc MakeBrgemmDesc(Isa isa, BrgemmDataType dtype, int64_t m,
                          int64_t n, int64_t k);

// Checks a descriptor before generation: sizes >= 1, leading dimensions
// large enough, the layout matching the data type, the ISA able to run the
// data type, strides only for strided batches. InvalidArgument says which
// field is wrong; Unimplemented for valid but unsupported combinations
// (f32 on AMX, post-ops on other than f32).
absl::Status ValidateBrgemmDesc(const BrgemmDesc& desc);

// The part of ValidateBrgemmDesc that packing B needs (PackB, UnpackB):
// N and K >= 1, ldb >= N or column panels of ldb columns that hold K rows
// each (f32 only: Unimplemented otherwise), and the layout the data type
// requires (or f32 transposed, with ldb >= K and no panels). InvalidArgument
// says which is wrong.
absl::Status ValidateBLayout(const BrgemmDesc& desc);

// Bytes a packed B block of this descriptor occupies: ceil(K / g) * ldb * g
// elements, and with panels b_panel_bytes for each panel before the last.
// Packing writes exactly this many bytes.
int64_t PackedBBytes(const BrgemmDesc& desc);

// Whether B is stored in more than one column panel (b_panel_bytes set and
// N wider than a panel); one panel is laid out as plain rows.
bool HasBPanels(const BrgemmDesc& desc);

// The element index of B[k][n] in a packed B block: with g the layout's
// group size, ((k / g) * ldb + n) * g + k % g, where with panels n is the
// column within its panel, after (n / ldb) * b_panel_bytes bytes; n * ldb
// + k for kTransposed.
int64_t PackedBIndex(const BrgemmDesc& desc, int64_t k, int64_t n);

// Whether packed B holds B + 128 as u8 (each byte's sign bit flipped)
// instead of s8 B: s8s8 on the VNNI kernels. vpdpbusd multiplies u8 by s8,
// so the VNNI kernel (brgemm_avx512_int8.h) takes the biased B as its
// unsigned operand and A as the signed one; AMX has tdpbssd and AVX2
// widens both operands with their own signs, so both read s8 B.
// Padding then holds 0x80 (B = 0). PackB, UnpackB and ReferenceBrgemm all
// follow this.
bool PackedBIsBiased(const BrgemmDesc& desc);
// The same for s8s8 kernels of family `isa`: whether they read B biased.
bool S8s8ReadsBiasedB(Isa isa);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_DESC_H_
