// Shared machinery of the lowerings (codegen/lower_*.cc): the state of one
// Compile call, the KernelFrame prologue of an LLVM step function, counted
// loops, and the vectorized "row" evaluator that runs a DAG of elementwise
// ops over a contiguous run of output columns.
//
// Every LLVM step is `void @<name>(i8* frame)` with the KernelFrame ABI
// (runtime/kernel_abi.h): it reads its buffers from frame->buffers[i] and
// its BRGEMM entry points from frame->kernels[i], and takes its share of the
// outer loop from thread_id / num_threads (static split, compiled in).
//
// Row evaluation (EmitRow) is the one elementwise engine: the matmul
// epilogue runs it over the rows of a C tile right after the BRGEMM call,
// and elementwise groups run it over every row of their output. It works 16
// f32 lanes at a time; the last (partial) vector of each row uses masked
// loads and stores, so there is no scalar tail loop. Operands broadcast
// numpy-style through per-dimension element strides (0 on broadcast dims).
#ifndef HGC_CODEGEN_LOWER_COMMON_H_
#define HGC_CODEGEN_LOWER_COMMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "microkernels/brgemm_kernel.h"
#include "passes/const_only.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

// Lanes of every vector the lowerings emit (one zmm of f32).
inline constexpr int kVectorWidth = 16;

// Bytes left unused between the per-thread slices of a scratch region
// (LowerState::AllocPerThread).
inline constexpr int64_t kThreadSliceGap = 64 * 1024;

// The state one Compile call threads through the lowerings.
struct LowerState {
  llvm::LLVMContext* context = nullptr;
  llvm::Module* module = nullptr;
  Program* program = nullptr;
  // Where each value of the entry graph lives.
  absl::flat_hash_map<const Value*, BufferRef> refs;
  // Which entry values depend only on constants.
  const ConstOnlyAnalysis* const_only = nullptr;
  // Bytes of the main arena in use (the buffer plan, then scratch regions
  // the lowerings append with AllocArena).
  int64_t arena_bytes = 0;
  // Kernels referenced by steps; kept alive with the executable.
  std::vector<std::shared_ptr<const microkernels::BrgemmKernel>> kernels;
  // Unique names for step functions.
  int next_step_id = 0;
  // When set, the tile IR of every step is appended here (--emit=loops).
  std::string* loops = nullptr;
  // Bytes of per-thread arena slices and stack locals, summed over steps.
  int64_t per_thread_scratch_bytes = 0;
  // The JIT target (and the --emit target, when one is named) has
  // AVX-512F and DQ, so step code may use AVX-512 intrinsics (vscalefps,
  // vreduceps).
  bool avx512 = false;

  // Appends a 64-byte aligned scratch region to the main arena.
  int64_t AllocArena(int64_t bytes);
  // Appends a region of one `bytes` slice for each of `num_threads` threads
  // and returns its offset; the slices lie `*thread_stride` apart. With
  // several threads the slices are kThreadSliceGap apart beyond their
  // size: a thread walking its slice with a stride (rows of a score tile,
  // of a transposed K) makes AMD's stride prefetchers read lines past its
  // end, and when those are the next thread's, each write of that thread
  // has to take them back. With slices back to back, two-thread attention
  // ran 30 % slower than two single-thread runs side by side on a Zen 5;
  // with 32 KiB between them, as fast (the gap is twice that, for longer
  // strides).
  int64_t AllocPerThread(int64_t bytes, int num_threads,
                         int64_t* thread_stride);
  // Appends a constant-cache slot of `bytes` bytes (contents written by an
  // init step) and returns its index.
  int64_t AddConstantSlot(int64_t bytes);
  // Appends a constant-cache slot holding `value` (a literal constant a
  // step reads) and returns its index.
  int64_t AddConstant(Tensor value);
  // A fresh function name "<prefix>_<n>".
  std::string StepName(const std::string& prefix);
};

// Deduplicating list of a step's buffers: Add returns the frame index.
class StepBuffers {
 public:
  int Add(const BufferRef& ref);
  const std::vector<BufferRef>& refs() const { return refs_; }

 private:
  std::vector<BufferRef> refs_;
};

// The frame fields a step function reads, loaded in its entry block.
struct FrameValues {
  llvm::Value* buffers = nullptr;  // i8**
  llvm::Value* kernels = nullptr;  // i8**
  llvm::Value* thread_id = nullptr;
  llvm::Value* num_threads = nullptr;
  llvm::Value* barrier = nullptr;      // void(i8*)*
  llvm::Value* barrier_ctx = nullptr;  // i8*
};

// Creates `void @name(i8* frame)` in state.module, positions `b` in its
// entry block and loads the frame fields.
llvm::Function* BeginStepFunction(LowerState& state, const std::string& name,
                                  llvm::IRBuilder<>& b, FrameValues& frame);

// Closes the step function `fn` begun by BeginStepFunction: emits its return,
// or, when `status` (the first error met while emitting) is not OK, erases
// the function and returns the error. The Step has `name` and `buffers`.
absl::StatusOr<Step> FinishStepFunction(llvm::Function* fn,
                                        llvm::IRBuilder<>& b,
                                        absl::Status status,
                                        const std::string& name,
                                        const StepBuffers& buffers);

// frame->buffers[index] as a float* (or `elem`*).
llvm::Value* LoadBuffer(llvm::IRBuilder<>& b, const FrameValues& frame,
                        int index, llvm::Type* elem = nullptr);

// Calls frame->barrier(frame->barrier_ctx).
void EmitBarrier(llvm::IRBuilder<>& b, const FrameValues& frame);

// [begin, end) of `total` items for thread `part` of `parts`: an even
// static split.
void EmitShareRange(llvm::IRBuilder<>& b, llvm::Value* part, llvm::Value* parts,
                    llvm::Value* total, llvm::Value*& begin, llvm::Value*& end);
// The same for this thread.
void EmitThreadRange(llvm::IRBuilder<>& b, const FrameValues& frame,
                     llvm::Value* total, llvm::Value*& begin,
                     llvm::Value*& end);

// Whether LLVM's unroller may unroll a loop.
enum class Unroll { kAllow, kDisable };

// Emits `for (i = begin; i < end; ++i) body(i)` (i64); `b` is left after
// the loop. Unroll::kDisable marks it llvm.loop.unroll.disable: for bodies
// that are long already (a row's memcpy), whose copies would only add
// compile time and code.
void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
              const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body,
              Unroll unroll = Unroll::kAllow);

// BrgemmCallArgs (microkernels/brgemm_abi.h) as LLVM sees it: {i8* a,
// i8* b, i8* c, i64 batch, i8* bias, i8* row_divisors, i8* scale,
// i8* row_max, i8* prefetch}, and its fields' indices.
llvm::StructType* BrgemmArgsType(llvm::LLVMContext& c);
enum BrgemmArgField {
  kFieldA,
  kFieldB,
  kFieldC,
  kFieldBatch,
  kFieldBias,
  kFieldRowDivisors,
  kFieldScale,
  kFieldRowMax,
  kFieldPrefetch
};

// Emits `if (cond) then()`; `b` is left after it.
void EmitIf(llvm::IRBuilder<>& b, llvm::Value* cond,
            const std::function<void()>& then);

// One source of values for EmitRow.
struct RowInput {
  const Value* value = nullptr;  // the body value it provides
  int buffer = -1;               // frame buffer index (unless is_constant)
  // Element offset of the value's element at output coordinate idx:
  // sum(idx[d] * strides[d]) (one stride per dim of the iteration space).
  std::vector<int64_t> strides;
  // A literal whose elements are all equal: `constant` in every lane, in
  // the compute form of value's dtype (bf16 / f16 widened to f32, integers
  // exact, bool 0 / 1).
  bool is_constant = false;
  double constant = 0;
  // Memory holds f32 and the value is a bf16 / f16 rounding of it (a
  // low-precision matmul's result in the kernel's f32 C).
  bool rounded_from_f32 = false;
  // Read from the caller's row pointer (EmitRow's in_row) instead of
  // `buffer`: a tile of the row held elsewhere (an attention score tile).
  bool from_in_row = false;
};

// An elementwise DAG to evaluate over an iteration space.
struct RowProgram {
  Shape shape;  // iteration space; the last dim is the row
  std::vector<RowInput> inputs;
  std::vector<const Op*> ops;  // elementwise ops, in order
  const Value* result = nullptr;
  int out_buffer = -1;  // the result's dtype, contiguous over `shape`
  // Store the result as f32 whatever its dtype (a bf16 / f16 result is
  // already rounded, so the f32 holds its value exactly): an f32 tile that
  // later programs read with RowInput::rounded_from_f32.
  bool result_in_f32 = false;
  // Store denormal results as zeros of their sign (a bf16 matmul operand,
  // as the matmul reads it).
  bool result_denormals_as_zero = false;
};

// Checks that `program` is something EmitRow can lower: a non-empty
// iteration space and elemental ops of any dtype (a per-channel quantize /
// dequantize must not be broadcast). Unimplemented otherwise.
absl::Status CheckRowProgram(const RowProgram& program);

// Appends the params and literal-constant ops that `ops` (a body's ops in
// order) read, each once.
void CollectInputs(const std::vector<const Op*>& ops,
                   std::vector<const Value*>& params,
                   std::vector<const Op*>& constants);

// Whether a quantize / dequantize has per-channel (list) scale or zero
// point.
bool IsPerChannel(const Op& op);

// Row-major element strides of `type` broadcast to `out` (numpy rules,
// 0 on broadcast dims); InvalidArgument when it does not broadcast.
absl::StatusOr<std::vector<int64_t>> BroadcastStrides(const Shape& type,
                                                      const Shape& out);

// Evaluates `program` for the row with flat index `row` (over all dims but
// the last) and columns [col_begin, col_end), 16 lanes at a time with a
// masked last vector.
// `out_row`, when given, replaces the row's place in out_buffer (a float*
// to the row's element 0, e.g. a per-thread scratch row); `in_row` that of
// the inputs marked from_in_row (a pointer to the row's element 0 as well;
// the caller may offset a tile's pointer back by col_begin).
// `on_result`, when given, is called inside the loop with each vector of
// results (in compute form, as stored) and the vector's lane mask (a fused
// reduction over the written values).
using RowResultFn =
    std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>;
absl::Status EmitRow(llvm::IRBuilder<>& b, const FrameValues& frame,
                     const RowProgram& program, llvm::Value* row,
                     llvm::Value* col_begin, llvm::Value* col_end,
                     llvm::Value* out_row = nullptr,
                     llvm::Value* in_row = nullptr,
                     const RowResultFn& on_result = nullptr);

// Stores `value` (16 lanes in their compute form, already exact in
// `dtype`) to lanes [col, col + 16) of the `dtype` row at `row` (its
// element 0) under `mask`.
void StoreRowVector(llvm::IRBuilder<>& b, DType dtype, llvm::Value* value,
                    llvm::Value* row, llvm::Value* col, llvm::Value* mask);

// A <16 x i1> mask of the lanes of the vector starting at column `col`
// that lie before `end`.
llvm::Value* TailMask(llvm::IRBuilder<>& b, llvm::Value* col, llvm::Value* end);

// The all-true <16 x i1> mask of a whole vector (masked loads and stores
// under it fold into plain ones).
llvm::Constant* AllLanes(llvm::IRBuilder<>& b);

// body(b, col, mask) over the vectors of columns [begin, end), 16 at a time:
// a loop over the whole vectors under an all-true constant mask (their
// masked loads and stores fold into plain ones), then the last, partial
// vector, if any, under its TailMask. A mask on every vector costs its
// computation and masked memory operations in the loop (on AVX2,
// vmaskmovps; a softmax over 1000-float rows ran 1.3x faster without), and
// the loop is not unrolled (the bodies are long: exp, erf, whole programs).
void ForVectorsThenTail(
    llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
    const std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>&
        body);

// Gives a literal constant that is not a splat a buffer of the step being
// built: `value` is the constant's evaluated contents; returns the frame
// index the row program reads it from (with broadcasting strides, as it
// reads a const parameter).
using ConstantBinder =
    std::function<absl::StatusOr<int>(const Op& constant, Tensor value)>;

// Builds the RowProgram that evaluates `ops` (elemental ops and literal
// `constant` ops; params bound to the frame buffers `param_buffers`) over
// `shape`, writing `result` to `out_buffer`. A constant whose elements are
// all equal becomes a splat; any other goes to `bind_constant`, or is
// Unimplemented without one. Values the caller provides itself are
// appended to program.inputs after the call. Unimplemented when the ops
// are anything but elemental ops and constants.
absl::Status BuildRowProgram(const std::vector<const Op*>& ops,
                             const std::vector<const Value*>& params,
                             const std::vector<int>& param_buffers,
                             const Shape& shape, const Value* result,
                             int out_buffer, RowProgram& program,
                             const ConstantBinder& bind_constant = nullptr);

// max(a, b) as x86's vmaxps computes it: b when either is NaN. Softmax
// may use it: a NaN score still reaches exp and makes the whole row NaN, as
// the reference's NaN max does.
llvm::Value* FastMax(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);

// Horizontal FastMax of a <16 x float>, by halving.
llvm::Value* TreeMax(llvm::IRBuilder<>& b, llvm::Value* v);

// NaN-propagating horizontal max of a <16 x float>, by halving.
absl::StatusOr<llvm::Value*> HorizontalMax(llvm::IRBuilder<>& b,
                                           llvm::Value* v);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_COMMON_H_
