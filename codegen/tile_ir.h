// The tile IR: what one compiled step does, between a fused graph op and
// LLVM IR (docs/compiler.md §4).
//
// A lowering chooses a schedule and returns a Nest: its buffers (where each
// lives: a frame buffer of the step, a per-thread slice of the arena, or a
// stack local), its BRGEMM kernel table, its pack steps, and a loop nest of
// statements over tiles. The parallel split is explicit: a `parallel.for`
// hands each thread an even, static share of its iteration range (or
// balances the shares by claims). Compile verifies each nest
// (tile_verifier.h) and places the scratch, constant slots and per-thread
// slices it declared; one emitter (tile_emitter.h) turns it into an LLVM
// step function; the printer shows it as text (`hgc FILE --emit=loops`).
//
// Index arithmetic is i64 expressions (Expr) over loop and let variables;
// addresses are Views: a buffer, an element offset and the element size.
// Row statements work on one contiguous row of f32 values, 16 lanes at a
// time with a masked last vector.
#ifndef HGC_CODEGEN_TILE_IR_H_
#define HGC_CODEGEN_TILE_IR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "codegen/row_program.h"
#include "ir/tensor.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/brgemm_kernel.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {
namespace tile {

// An i64 index expression. Constant operands fold as expressions are built
// (x + 0, x * 1, 3 * 4), so printed nests show what the loops compute.
class Expr {
 public:
  enum class Kind {
    kConst,
    kVar,
    kThreadId,
    kAdd,
    kSub,
    kMul,
    kDiv,  // unsigned (operands are non-negative)
    kRem,
    kMin,
    kLt,  // 1 if a < b else 0
    kEq,
    kSelect,  // a != 0 ? b : c
  };
  Expr(int64_t value = 0);  // NOLINT: constants convert implicitly
  static Expr Var(int id);
  static Expr ThreadId();
  static Expr Make(Kind kind, std::vector<Expr> operands);

  Kind kind() const;
  bool is_const() const { return kind() == Kind::kConst; }
  // Whether this is the constant `v`.
  bool IsConstant(int64_t v) const { return is_const() && value() == v; }
  int64_t value() const;  // kConst
  int var() const;        // kVar
  const std::vector<Expr>& operands() const;

 private:
  struct Node;
  std::shared_ptr<const Node> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr Min(const Expr& a, const Expr& b);
Expr Lt(const Expr& a, const Expr& b);
Expr Eq(const Expr& a, const Expr& b);
Expr Select(const Expr& cond, const Expr& a, const Expr& b);

// Where a buffer lives.
struct Buffer {
  enum class Kind {
    kFrame,      // a buffer of the step (input, output, constant, arena)
    kPerThread,  // `bytes` per thread, at arena offset + thread_id * stride
                 // (the region is placed by Compile: Nest::PlacePerThread)
    kLocal,      // `bytes` on the stack of each thread
  };
  // What a frame buffer a lowering declared by size needs, until Compile
  // places it once the nest is verified (Nest::PlaceFrameBuffer).
  enum class Pending {
    kPlaced,        // `ref` says where it lives
    kArena,         // `bytes` of arena scratch, shared by the threads
    kConstantSlot,  // a constant-cache slot of `bytes`, filled by an init pack
    kLiteral,       // a constant-cache slot holding `literal`
  };
  Kind kind = Kind::kFrame;
  Pending pending = Pending::kPlaced;
  std::string name;   // printed as %name
  BufferRef ref;      // kFrame, kPerThread (the arena region, once placed)
  int64_t bytes = 0;  // kPerThread, kLocal, a pending frame buffer
  int64_t thread_stride = 0;  // kPerThread: from one thread's slice to the next
  std::shared_ptr<Tensor> literal;  // Pending::kLiteral
  std::string note;                 // what it holds, for the printout
};

// Elements of a buffer from `offset` on.
struct View {
  int buffer = -1;
  Expr offset;
  int64_t elem_bytes = 4;
};

struct Stmt;
using Block = std::vector<Stmt>;

// for var in [begin, end); with `parallel`, each thread runs the
// contiguous share [begin + t * n / T, begin + (t + 1) * n / T), and
// `share_end`, when set, is bound to the end of the running thread's share
// (so that work for the next iteration can stay within the thread's own).
//
// With `claims` (parallel only) the threads balance their shares: each
// thread claims its own share's iterations one at a time, in order, from a
// counter, then claims what is left of the other threads' shares (the next
// thread's first), so that a share whose thread runs slower (a core shared
// with other work, say) is finished by the others. `claims` holds one
// 64-byte counter slot per thread, shared by the threads; thread 0 zeroes
// them and a barrier follows, at the loop's start. `share_end` is then the
// end of the share an iteration came from.
struct For {
  int var = -1;
  Expr begin, end;
  bool parallel = false;
  int share_end = -1;
  std::optional<View> claims;
  Block body;
};

struct Let {
  int var = -1;
  Expr value;
};

// var = value, for a variable made by Nest::NewMutableVar: unlike a Let's,
// its value lives in a stack slot of each thread and may change, so a use
// reads what the last Assign the thread ran stored (state carried from one
// iteration to the next, such as which head a thread last packed).
struct Assign {
  int var = -1;
  Expr value;
};

// A call of kernel `kernel` (an index into the nest's kernel table) on C at
// `c`, reducing `batch` strided (A, B) blocks starting at `a` and `b`.
struct Brgemm {
  Expr kernel;
  View a, b, c;
  Expr batch = 1;
  std::optional<View> bias;  // the bias row of a kernel with `bias`
  // The M divisors of a kernel with `divide_rows`.
  std::optional<View> row_divisors;
  std::optional<View> scale;    // the scalar of a kernel with `scale`
  std::optional<View> row_max;  // M x 16 running maxima (`row_max`)
  // The first line of a kernel with `prefetch_lines` (data a later call
  // reads, fetched into L2 while this one computes).
  std::optional<View> prefetch;
};

// The nest's elementwise program `program` (row_program.h's RowProgram)
// over columns [col_begin, col_end) of flat row `row` of its iteration
// space. `out_row`, when set, replaces the row's place in the program's
// output buffer, and `in_row` that of its inputs marked `from_in_row`:
// both address the element at column col_begin (a tile of the row).
//
// `max_out`, when set, also receives the max of the values written, taken
// as x86's vmaxps takes it (a NaN need not survive). Only softmax uses it:
// its exp pass turns a NaN score into a NaN row by itself.
struct RowMap {
  int program = -1;
  Expr row, col_begin, col_end;
  std::optional<View> out_row;
  std::optional<View> in_row;
  std::optional<View> max_out;
  // The segment is a few vectors (a C tile's row): its loop is unrolled
  // where their count is a constant (every tile's, unless the layer has an
  // N tail), so the column arithmetic folds into the addresses.
  bool unroll = false;
};

// acc (one f32) = reduction of the f32 row x = src[0, len): its max, sum,
// mean, or the mean of (x - *center)^2, for which acc is a double (an
// 8-byte view): the squares are summed in f32, and once more in double
// where that sum overflows (a deviation above 2^64), so any f32 row has a
// finite variance. With `shift`, x - src[0] takes x's place (the mean of a
// constant row is then exactly 0). With `accumulate` (max and sum only),
// the row's value is combined with acc's own: a running reduction.
// kSoftmaxMax is the max as x86's vmaxps takes it (a NaN need not survive,
// as for RowMap's max_out): softmax's exp pass turns a NaN score into a
// NaN row by itself.
struct RowReduce {
  enum class Op { kMax, kSoftmaxMax, kSum, kMean, kMeanSquaredDeviation };
  Op op = Op::kSum;
  View src;
  Expr len;
  View acc;
  bool accumulate = false;
  std::optional<View> center;
  bool shift = false;
};

// dst[i] = exp(src[i] - *max) for i < len, where *max is the row's max;
// *sum += the sum of them.
struct RowExp {
  View src, dst;
  Expr len;
  View max, sum;
};

// dst[i] = f(src[i]) for i < len (src f32): src[i] * *factor,
// src[i] * (1 / *factor) with `reciprocal`, src[i] / *factor with
// `divide`, or src[i] itself without a factor; the value is then rounded
// to each of `round_to` in turn (bf16 / f16 casts) and stored as
// `dst_type` (f32, or bf16 / f16: rounded to nearest even as stored, so a
// last rounding to dst_type need not be in round_to);
// with `denormals_as_zero`, denormal results are stored as zeros of their
// sign (a bf16 matmul operand, as the matmul reads it).
struct RowScale {
  View src, dst;
  Expr len;
  std::optional<View> factor;
  bool reciprocal = false;
  bool divide = false;
  std::vector<DType> round_to;
  DType dst_type = DType::kF32;
  bool denormals_as_zero = false;
};

// dst[i] = (x[i] - *mean) * (1 / sqrt(*var + epsilon)) * gamma[i] + beta[i]
// with x = src, or src - src[0] with `shift` (as RowReduce's); *var is a
// double, and 1 / sqrt(*var + epsilon) is computed in double and rounded
// once to f32. gamma and beta hold `params_type` (f32, or bf16 / f16
// widened as they are read); dst holds `dst_type`, each result rounded to
// it once.
struct RowNormalize {
  View src, dst;
  Expr len;
  View mean, var;
  float epsilon = 0;
  View gamma, beta;
  bool shift = false;
  DType params_type = DType::kF32;
  DType dst_type = DType::kF32;
};

// One step of an online softmax over a row of scores streamed in blocks
// (attention): with the running max *max and sum *sum of the blocks before,
//   m = max(*max, *block_max);  u = (m == -inf ? 0 : m)
//   s[i] = exp(s[i] - u);  a = exp(*max - u)
//   *sum = *sum * a + sum(s);  o[0, o_len) *= a;  *max = m
// Start with *max = -inf, *sum = 0 and o = 0. A row whose scores so far are
// all -inf keeps s = 0 and o = 0 instead of NaN, so a later block with a
// finite score gives what one softmax over the whole row gives.
// `block_max` holds max(s[0, len)) already (taken by the pass before: a
// RowMap's max_out or a softmax_max RowReduce).
struct OnlineSoftmax {
  View s;
  Expr len;
  View max, sum;
  View o;
  Expr o_len;
  View block_max;
};

// dst[r * dst_row + c * dst_col] = src[r * src_row + c * src_col] for
// r < rows, c < cols: a copy or transpose of f32 elements (packing a K
// block). The inner loop runs over c. A bf16 / f16 `src_type` is widened
// to f32 as it is copied (rows contiguous on both sides only), with
// `denormals_as_zero` as a bf16 matmul reads its operands; a u8 / s8 one
// is dequantized, f32(x - zero_point) * scale (rows contiguous too). A
// bf16 / f16 `dst_type` narrows f32 elements (rows contiguous in the
// source only), rounding to nearest even.
struct Copy {
  View src;
  Expr src_row, src_col;
  View dst;
  Expr dst_row, dst_col;
  Expr rows, cols;
  DType src_type = DType::kF32;
  bool denormals_as_zero = false;
  DType dst_type = DType::kF32;
  float scale = 1;  // a u8 / s8 src_type's dequantization
  int32_t zero_point = 0;
};

// dst[0, count) = value (f32).
struct Fill {
  View dst;
  Expr count;
  float value = 0;
};

// Every thread of the step waits until all have arrived.
struct Barrier {};

// A hint that `rows` rows of `row_bytes` bytes, `row_stride` elements
// apart from `src`, are read (or, with `write`, written) soon: each of
// their cache lines is prefetched into L2 (prefetcht1 / prefetchw), or
// into L1 with `to_l1` (prefetcht0: about to be read).
// Prefetches never fault, and the addresses are computed without inbounds,
// so a hint may reach past a buffer.
struct Prefetch {
  View src;
  Expr rows, row_stride;
  int64_t row_bytes = 0;
  bool write = false;
  bool to_l1 = false;
};

// A call of runtime helper `helper` (runtime_helpers.h) for work that no
// statement above expresses (attention's int8 packing and conversions):
// each argument, in order, a pointer to a view's first element, an i64, an
// f32 or an i32; `regions` are the elements it reads and writes (rows of
// `cols` elements, strided as a Copy's), for the verifier.
struct Call {
  using Arg = std::variant<View, Expr, float, int32_t>;
  struct Region {
    const char* role = "";
    View view;
    Expr rows = 1, row_stride = 0, cols = 1, col_stride = 1;
    bool write = false;
  };
  std::string helper;
  std::vector<Arg> args;
  std::vector<Region> regions;
};

struct Stmt {
  std::variant<For, Let, Assign, Brgemm, RowMap, RowReduce, RowExp, RowScale,
               RowNormalize, OnlineSoftmax, Copy, Fill, Barrier, Prefetch, Call>
      node;
};

// A kernel of the nest's table.
struct Kernel {
  microkernels::BrgemmDesc desc;
  std::shared_ptr<const microkernels::BrgemmKernel> code;
};

// The kernel table entries of one BRGEMM call site, one per shape of the
// block it is called on: whole, or the tail block of M (the rows), of its
// other tiled dim (N, or the keys of attention's P·V), or of both.
struct KernelsByTail {
  int full = 0;
  int m_tail = 0;
  int n_tail = 0;
  int both_tails = 0;

  // The entry for a block that is (or is not) a tail in each dim.
  int& At(bool m, bool n) {
    return m ? (n ? both_tails : m_tail) : (n ? n_tail : full);
  }
  // The kernel index expression choosing the entry by 0 / 1 flags.
  Expr Pick(const Expr& m, const Expr& n) const {
    return Select(m, Select(n, both_tails, m_tail), Select(n, n_tail, full));
  }
};

// Host work the nest needs before its loops: packing a B operand into the
// kernels' blocked layout, or transposing a transpose_a A into rows, once
// (`init`: at SetConstants, for constants) or before every run.
struct Pack {
  std::string text;  // "pack %w -> %w_packed (...)"
  bool init = false;
  Step step;     // its buffers: what it reads; EmitNest appends dst's place
  int dst = -1;  // the frame buffer it writes
};

class Nest {
 public:
  // `name` becomes the step function's name.
  explicit Nest(std::string name);

  const std::string& name() const { return name_; }

  // Buffers; the frame index of a kFrame buffer is its place among the
  // step's buffers (RowProgram inputs and outputs use it).
  int AddFrameBuffer(const BufferRef& ref, std::string name, std::string note);
  // Frame buffers a lowering declares by size, each its own: arena
  // scratch, a constant slot an init pack fills, a literal. Compile places
  // them once the nest is verified (PlaceFrameBuffer, after TakeLiteral
  // for a literal), so a lowering that fails leaves nothing behind.
  int AddArenaScratch(int64_t bytes, std::string name, std::string note);
  int AddConstantSlot(int64_t bytes, std::string name, std::string note);
  int AddLiteral(Tensor value, std::string name, std::string note);
  void PlaceFrameBuffer(int buffer, const BufferRef& ref);
  Tensor TakeLiteral(int buffer);
  // `bytes` for each thread, its arena region placed later by PlacePerThread.
  int AddPerThread(int64_t bytes, std::string name, std::string note);
  // Places per-thread buffer `buffer`: thread t's bytes start at
  // arena_offset + t * thread_stride (from LowerState::AllocPerThread).
  void PlacePerThread(int buffer, int64_t arena_offset, int64_t thread_stride);
  int AddLocal(int64_t bytes, std::string name, std::string note);
  int FrameIndex(int buffer) const { return frame_index_[buffer]; }
  const std::vector<Buffer>& buffers() const { return buffers_; }
  const std::vector<BufferRef>& frame_refs() const { return frame_refs_; }

  // A table index for the kernel (the same code is listed once).
  int AddKernel(const microkernels::BrgemmDesc& desc,
                std::shared_ptr<const microkernels::BrgemmKernel> code);
  const std::vector<Kernel>& kernels() const { return kernels_; }

  int AddProgram(RowProgram program, std::string name);
  const std::vector<RowProgram>& programs() const { return programs_; }
  const std::vector<std::string>& program_names() const {
    return program_names_;
  }

  void AddPack(Pack pack) { packs_.push_back(std::move(pack)); }
  std::vector<Pack>& packs() { return packs_; }
  const std::vector<Pack>& packs() const { return packs_; }

  // A fresh variable printed as %name (a suffix keeps names unique).
  int NewVar(const std::string& name);
  // The same for a variable set by Assign statements; reading it before
  // the thread's first Assign is undefined.
  int NewMutableVar(const std::string& name);
  bool is_mutable(int var) const { return mutable_[var]; }
  const std::string& var_name(int var) const { return var_names_[var]; }
  int num_vars() const { return static_cast<int>(var_names_.size()); }

  Block& body() { return body_; }
  const Block& body() const { return body_; }

  // Lines worth a reader's attention (the schedule's choices), printed as
  // comments above the body.
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  int AddPendingFrameBuffer(Buffer::Pending pending, int64_t bytes,
                            std::string name, std::string note);

  std::string name_;
  std::vector<Buffer> buffers_;
  std::vector<int> frame_index_;
  std::vector<BufferRef> frame_refs_;
  std::vector<Kernel> kernels_;
  std::vector<RowProgram> programs_;
  std::vector<std::string> program_names_;
  std::vector<Pack> packs_;
  std::vector<std::string> var_names_;
  std::vector<bool> mutable_;  // per variable
  std::vector<std::string> notes_;
  Block body_;
};

// The nest as text: buffers, kernels, programs, packs, then the loops.
std::string PrintNest(const Nest& nest);
std::string PrintExpr(const Nest& nest, const Expr& e);

}  // namespace tile
}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TILE_IR_H_
