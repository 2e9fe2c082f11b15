// LLVM step-function helpers for the emitters: the prologue and epilogue
// of a step function, counted loops, ifs, the thread's share of a range,
// BRGEMM call arguments, lane masks and maxima.
//
// Every LLVM step is `void @<name>(i8* frame)` with the KernelFrame ABI
// (runtime/kernel_abi.h): it reads its buffers from frame->buffers[i] and
// its BRGEMM entry points from frame->kernels[i], and takes its share of a
// parallel loop from thread_id / num_threads.
#ifndef HGC_CODEGEN_STEP_FUNCTION_H_
#define HGC_CODEGEN_STEP_FUNCTION_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/lower_state.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

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
enum class Unroll { kAllow, kDisable, kFull };

// Emits `for (i = begin; i < end; ++i) body(i)` (i64); `b` is left after
// the loop. Unroll::kDisable marks it llvm.loop.unroll.disable: for bodies
// that are long already (a row's memcpy), whose copies would only add
// compile time and code. Unroll::kFull marks it llvm.loop.unroll.full: a
// loop whose trip count turns out constant is unrolled whole (up to
// LLVM's limit for such hints); others stay loops.
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
// the loop is not unrolled (the bodies are long: exp, erf, whole programs)
// unless `unroll` says otherwise.
void ForVectorsThenTail(
    llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
    const std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>&
        body,
    Unroll unroll = Unroll::kDisable);

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

#endif  // HGC_CODEGEN_STEP_FUNCTION_H_
