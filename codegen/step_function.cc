#include "codegen/step_function.h"

#include <algorithm>
#include <cstddef>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/llvm/cast_emitter.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/row_program.h"
#include "ir/dtype.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "microkernels/brgemm_abi.h"
#include "runtime/kernel_abi.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

int StepBuffers::Add(const BufferRef& ref) {
  for (size_t i = 0; i < refs_.size(); ++i) {
    const BufferRef& r = refs_[i];
    if (r.kind == ref.kind && r.index == ref.index && r.offset == ref.offset) {
      return static_cast<int>(i);
    }
  }
  refs_.push_back(ref);
  return static_cast<int>(refs_.size()) - 1;
}

namespace {

// The frame and its pointer tables do not change while a step runs; saying
// so lets LLVM hoist the loads out of loops that store to buffers.
void MarkInvariant(llvm::LoadInst* load) {
  load->setMetadata(llvm::LLVMContext::MD_invariant_load,
                    llvm::MDNode::get(load->getContext(), {}));
}

llvm::Value* LoadField(llvm::IRBuilder<>& b, llvm::Value* frame, int offset,
                       llvm::Type* type) {
  llvm::Value* addr =
      b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), frame, offset);
  addr = b.CreateBitCast(addr, type->getPointerTo());
  llvm::LoadInst* load = b.CreateLoad(type, addr);
  MarkInvariant(load);
  return load;
}

llvm::FunctionType* BarrierType(llvm::LLVMContext& c) {
  return llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                                 {llvm::Type::getInt8PtrTy(c)}, false);
}

}  // namespace

llvm::Function* BeginStepFunction(LowerState& state, const std::string& name,
                                  llvm::IRBuilder<>& b, FrameValues& frame) {
  llvm::LLVMContext& c = *state.context;
  llvm::Type* i8p = llvm::Type::getInt8PtrTy(c);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {i8p}, false);
  llvm::Function* fn = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, name, state.module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* f = fn->getArg(0);
  f->setName("frame");
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fn));
  llvm::Type* i8pp = i8p->getPointerTo();
  frame.buffers = LoadField(b, f, kFrameBuffers, i8pp);
  frame.kernels = LoadField(b, f, kFrameKernels, i8pp);
  frame.thread_id = LoadField(b, f, kFrameThreadId, b.getInt64Ty());
  frame.num_threads = LoadField(b, f, kFrameNumThreads, b.getInt64Ty());
  frame.barrier =
      LoadField(b, f, kFrameBarrier, BarrierType(c)->getPointerTo());
  frame.barrier_ctx = LoadField(b, f, kFrameBarrierCtx, i8p);
  return fn;
}

absl::StatusOr<Step> FinishStepFunction(llvm::Function* fn,
                                        llvm::IRBuilder<>& b,
                                        absl::Status status,
                                        const std::string& name,
                                        const StepBuffers& buffers) {
  b.CreateRetVoid();
  if (!status.ok()) {
    fn->eraseFromParent();
    return status;
  }
  Step step;
  step.name = name;
  step.buffers = buffers.refs();
  return step;
}

llvm::Value* LoadBuffer(llvm::IRBuilder<>& b, const FrameValues& frame,
                        int index, llvm::Type* elem) {
  if (elem == nullptr) elem = b.getFloatTy();
  llvm::Value* slot =
      b.CreateConstInBoundsGEP1_64(b.getInt8PtrTy(), frame.buffers, index);
  llvm::LoadInst* ptr = b.CreateLoad(b.getInt8PtrTy(), slot);
  MarkInvariant(ptr);
  return b.CreateBitCast(ptr, elem->getPointerTo());
}

void EmitBarrier(llvm::IRBuilder<>& b, const FrameValues& frame) {
  b.CreateCall(BarrierType(b.getContext()), frame.barrier, {frame.barrier_ctx});
}

void EmitShareRange(llvm::IRBuilder<>& b, llvm::Value* part, llvm::Value* parts,
                    llvm::Value* total, llvm::Value*& begin,
                    llvm::Value*& end) {
  begin = b.CreateSDiv(b.CreateMul(part, total), parts);
  llvm::Value* next = b.CreateAdd(part, b.getInt64(1));
  end = b.CreateSDiv(b.CreateMul(next, total), parts);
}

void EmitThreadRange(llvm::IRBuilder<>& b, const FrameValues& frame,
                     llvm::Value* total, llvm::Value*& begin,
                     llvm::Value*& end) {
  EmitShareRange(b, frame.thread_id, frame.num_threads, total, begin, end);
}

void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
              const std::function<void(llvm::IRBuilder<>&, llvm::Value*)>& body,
              Unroll unroll) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(c, "loop", fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(c, "body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, "exit", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body(b, i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateBr(head);
  if (unroll != Unroll::kAllow) {
    // A distinct loop id whose first operand is itself (LangRef).
    llvm::Metadata* hint = llvm::MDNode::get(
        c, llvm::MDString::get(c, unroll == Unroll::kFull
                                      ? "llvm.loop.unroll.full"
                                      : "llvm.loop.unroll.disable"));
    llvm::MDNode* id = llvm::MDNode::getDistinct(c, {nullptr, hint});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b.SetInsertPoint(exit);
}

// The asserts tie BrgemmArgsType to the C++ definition.
using microkernels::BrgemmCallArgs;
static_assert(offsetof(BrgemmCallArgs, a) == 0, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, b) == 8, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, c) == 16, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, batch) == 24, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, bias) == 32, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, row_divisors) == 40,
              "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, scale) == 48, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, row_max) == 56, "BrgemmCallArgs layout");
static_assert(offsetof(BrgemmCallArgs, prefetch) == 64,
              "BrgemmCallArgs layout");
static_assert(sizeof(BrgemmCallArgs) == 72, "BrgemmCallArgs layout");

llvm::StructType* BrgemmArgsType(llvm::LLVMContext& c) {
  llvm::Type* i8p = llvm::Type::getInt8PtrTy(c);
  return llvm::StructType::get(
      c, {i8p, i8p, i8p, llvm::Type::getInt64Ty(c), i8p, i8p, i8p, i8p, i8p});
}

void EmitIf(llvm::IRBuilder<>& b, llvm::Value* cond,
            const std::function<void()>& then) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = b.getContext();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(c, "then", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c, "endif", fn);
  b.CreateCondBr(cond, then_bb, done);
  b.SetInsertPoint(then_bb);
  then();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

llvm::Value* TailMask(llvm::IRBuilder<>& b, llvm::Value* col,
                      llvm::Value* end) {
  std::vector<llvm::Constant*> lanes;
  for (int i = 0; i < kVectorWidth; ++i) lanes.push_back(b.getInt32(i));
  llvm::Constant* iota = llvm::ConstantVector::get(lanes);
  // Lanes left in the row, clamped to the vector width, as i32 lanes.
  llvm::Value* left = b.CreateSub(end, col);
  left = b.CreateSelect(b.CreateICmpULT(left, b.getInt64(kVectorWidth)), left,
                        b.getInt64(kVectorWidth));
  left = b.CreateTrunc(left, b.getInt32Ty());
  return b.CreateICmpULT(iota, b.CreateVectorSplat(kVectorWidth, left),
                         "tail_mask");
}

llvm::Constant* AllLanes(llvm::IRBuilder<>& b) {
  return llvm::ConstantInt::getTrue(
      llvm::FixedVectorType::get(b.getInt1Ty(), kVectorWidth));
}

void ForVectorsThenTail(
    llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
    const std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>&
        body,
    Unroll unroll) {
  llvm::Value* whole =
      b.CreateUDiv(b.CreateSub(end, begin), b.getInt64(kVectorWidth));
  llvm::Constant* all = AllLanes(b);
  EmitLoop(
      b, b.getInt64(0), whole,
      [&](llvm::IRBuilder<>& b, llvm::Value* i) {
        body(b, b.CreateAdd(begin, b.CreateMul(i, b.getInt64(kVectorWidth))),
             all);
      },
      unroll);
  llvm::Value* tail =
      b.CreateAdd(begin, b.CreateMul(whole, b.getInt64(kVectorWidth)));
  EmitIf(b, b.CreateICmpULT(tail, end),
         [&] { body(b, tail, TailMask(b, tail, end)); });
}

// max(a, b) as x86's vmaxps computes it: b when either is NaN. Softmax
// may use it: a NaN score still reaches exp and makes the whole row NaN, as
// the reference's NaN max does.
llvm::Value* FastMax(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateSelect(b.CreateFCmpOGT(x, y), x, y);
}

// Horizontal FastMax of a <16 x float> by halving.
llvm::Value* TreeMax(llvm::IRBuilder<>& b, llvm::Value* v) {
  for (int width = kVectorWidth / 2; width >= 1; width /= 2) {
    std::vector<int> upper(kVectorWidth);
    for (int i = 0; i < kVectorWidth; ++i)
      upper[i] = (i + width) % kVectorWidth;
    v = FastMax(b, v, b.CreateShuffleVector(v, upper));
  }
  return b.CreateExtractElement(v, uint64_t{0});
}

// NaN-propagating horizontal max of a <16 x float>, by halving.
absl::StatusOr<llvm::Value*> HorizontalMax(llvm::IRBuilder<>& b,
                                           llvm::Value* v) {
  for (int width = kVectorWidth / 2; width >= 1; width /= 2) {
    std::vector<int> upper(kVectorWidth);
    for (int i = 0; i < kVectorWidth; ++i)
      upper[i] = (i + width) % kVectorWidth;
    HGC_ASSIGN_OR_RETURN(v, EmitBinary(b, BinaryKind::kMax, DType::kF32, v,
                                       b.CreateShuffleVector(v, upper)));
  }
  return b.CreateExtractElement(v, uint64_t{0});
}

}  // namespace codegen
}  // namespace hgc
