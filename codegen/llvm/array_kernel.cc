#include "codegen/llvm/array_kernel.h"

#include <utility>

#include "codegen/llvm/ir_compiler.h"
#include "codegen/llvm/llvm_util.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// Emits `for (i = start; i < end; i += step) { out[i..] = body(in[i..]) }`
// on `width`-lane values (scalars when width == 1), leaving the builder in
// the block after the loop.
void EmitLoop(llvm::IRBuilder<>& b, llvm::Function* fn,
              const std::vector<llvm::Value*>& in_ptrs,
              const std::vector<llvm::Type*>& in_types, llvm::Value* out_ptr,
              llvm::Type* out_type, llvm::Value* start, llvm::Value* end,
              int width, const ElementBody& body, const char* tag) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* head =
      llvm::BasicBlock::Create(ctx, std::string(tag) + ".head", fn);
  llvm::BasicBlock* loop =
      llvm::BasicBlock::Create(ctx, std::string(tag) + ".body", fn);
  llvm::BasicBlock* exit =
      llvm::BasicBlock::Create(ctx, std::string(tag) + ".exit", fn);
  b.CreateBr(head);

  b.SetInsertPoint(head);
  llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(start, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, end), loop, exit);

  b.SetInsertPoint(loop);
  std::vector<llvm::Value*> args;
  for (size_t k = 0; k < in_ptrs.size(); ++k) {
    llvm::Type* elem = in_types[k];
    llvm::Value* p = b.CreateGEP(elem, in_ptrs[k], i);
    llvm::Type* shape = VectorOf(elem, width);
    p = b.CreateBitCast(p, PointerTo(shape));
    // Element alignment only: the arrays come from std::vector.
    args.push_back(b.CreateAlignedLoad(
        shape, p, llvm::Align(elem->getPrimitiveSizeInBits() / 8)));
  }
  llvm::Value* r = body(b, args);
  llvm::Type* out_shape = VectorOf(out_type, width);
  if (r->getType() != out_shape && ElementType(r->getType())->isIntegerTy(1)) {
    r = b.CreateZExt(r, out_shape);  // bool results stored as 0/1 bytes
  }
  llvm::Value* q =
      b.CreateBitCast(b.CreateGEP(out_type, out_ptr, i), PointerTo(out_shape));
  b.CreateAlignedStore(r, q,
                       llvm::Align(out_type->getPrimitiveSizeInBits() / 8));
  i->addIncoming(b.CreateAdd(i, llvm::ConstantInt::get(i64, width)),
                 b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateBr(head);
  if (width == 1) {
    // The scalar remainder runs < 16 times: unrolling it (x86 runtime-
    // unrolls small loops by 8) only adds compile time and code.
    llvm::MDNode* unroll = llvm::MDNode::get(
        ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")});
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {nullptr, unroll});
    loop_id->replaceOperandWith(0, loop_id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  b.SetInsertPoint(exit);
}

}  // namespace

llvm::Type* ElemType(llvm::LLVMContext& context, Elem elem) {
  switch (elem) {
    case Elem::kF32:
      return llvm::Type::getFloatTy(context);
    case Elem::kI32:
      return llvm::Type::getInt32Ty(context);
    case Elem::kI16:
      return llvm::Type::getInt16Ty(context);
    case Elem::kI8:
      return llvm::Type::getInt8Ty(context);
  }
  return nullptr;
}

std::unique_ptr<llvm::Module> BuildArrayModule(llvm::LLVMContext& context,
                                               const std::string& name,
                                               const std::vector<Elem>& inputs,
                                               Elem output,
                                               const ElementBody& body,
                                               int width) {
  auto module = std::make_unique<llvm::Module>(name, context);
  llvm::IRBuilder<> b(context);
  llvm::Type* i8p = PointerTo(b.getInt8Ty());
  llvm::FunctionType* fn_type = llvm::FunctionType::get(
      b.getVoidTy(), {PointerTo(i8p), i8p, b.getInt64Ty()}, false);
  llvm::Function* fn = llvm::Function::Create(
      fn_type, llvm::Function::ExternalLinkage, name, module.get());
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));

  std::vector<llvm::Value*> in_ptrs;
  std::vector<llvm::Type*> in_types;
  for (size_t k = 0; k < inputs.size(); ++k) {
    llvm::Type* elem = ElemType(context, inputs[k]);
    llvm::Value* slot = b.CreateGEP(i8p, fn->getArg(0), b.getInt64(k));
    in_ptrs.push_back(
        b.CreateBitCast(b.CreateLoad(i8p, slot), PointerTo(elem)));
    in_types.push_back(elem);
  }
  llvm::Type* out_type = ElemType(context, output);
  llvm::Value* out_ptr = b.CreateBitCast(fn->getArg(1), PointerTo(out_type));
  llvm::Value* n = fn->getArg(2);
  // Full vectors up to n rounded down to a multiple of width, then scalars.
  llvm::Value* n_vec =
      b.CreateMul(b.CreateSDiv(n, b.getInt64(width)), b.getInt64(width));
  EmitLoop(b, fn, in_ptrs, in_types, out_ptr, out_type, b.getInt64(0), n_vec,
           width, body, "vec");
  EmitLoop(b, fn, in_ptrs, in_types, out_ptr, out_type, n_vec, n, 1, body,
           "tail");
  b.CreateRetVoid();
  return module;
}

absl::StatusOr<ArrayKernel> ArrayKernel::Create(const std::vector<Elem>& inputs,
                                                Elem output,
                                                const ElementBody& body,
                                                int width,
                                                absl::string_view max_isa) {
  HGC_ASSIGN_OR_RETURN(TargetSpec spec, HostTargetSpec(max_isa));
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<Jit> jit, Jit::Create(std::move(spec)));
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      BuildArrayModule(*context, "array_fn", inputs, output, body, width);
  HGC_RETURN_IF_ERROR(jit->AddModule(std::move(context), std::move(module)));
  HGC_ASSIGN_OR_RETURN(Fn fn, jit->LookupFunction<Fn>("array_fn"));
  return ArrayKernel(std::move(jit), fn);
}

}  // namespace codegen
}  // namespace hgc
