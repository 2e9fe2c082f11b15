#include "codegen/tile_emitter.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/copy_emitter.h"
#include "codegen/emit_row.h"
#include "codegen/llvm/vector_math.h"
#include "codegen/row_emitter.h"
#include "codegen/step_function.h"
#include "llvm/IR/Constants.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

class Emitter {
 public:
  Emitter(const tile::Nest& nest, llvm::IRBuilder<>& b,
          const FrameValues& frame, bool avx512)
      : nest_(nest),
        b_(b),
        frame_(frame),
        exp_scaling_(avx512 ? ExpScaling::kAvx512Scalef
                            : ExpScaling::kPortable) {
    cast_options_.avx512 = avx512;
    f32_ = b.getFloatTy();
    vars_.resize(nest.num_vars(), nullptr);
  }

  // Entry-block setup: buffer base pointers, locals, the call block.
  void Prologue() {
    args_type_ = BrgemmArgsType(b_.getContext());
    args_ = b_.CreateAlloca(args_type_, nullptr, "brgemm_args");
    rows_ = std::make_unique<RowEmitter>(
        b_, exp_scaling_,
        [this](const tile::View& v, llvm::Type* elem) { return Ptr(v, elem); },
        Evaluator());
    for (size_t i = 0; i < nest_.buffers().size(); ++i) {
      const tile::Buffer& buf = nest_.buffers()[i];
      llvm::Value* base = nullptr;
      if (buf.kind == tile::Buffer::Kind::kLocal) {
        auto* local =
            b_.CreateAlloca(b_.getInt8Ty(), b_.getInt64(buf.bytes), buf.name);
        local->setAlignment(llvm::Align(64));
        base = local;
      } else {
        base = LoadBuffer(b_, frame_, nest_.FrameIndex(i), b_.getInt8Ty());
        if (buf.kind == tile::Buffer::Kind::kPerThread) {
          base = b_.CreateInBoundsGEP(
              b_.getInt8Ty(), base,
              b_.CreateMul(frame_.thread_id, b_.getInt64(buf.thread_stride)));
        }
      }
      bases_.push_back(base);
    }
    for (int v = 0; v < nest_.num_vars(); ++v) {
      if (nest_.is_mutable(v)) {
        vars_[v] = b_.CreateAlloca(b_.getInt64Ty(), nullptr, nest_.var_name(v));
      }
    }
  }

  void EmitBlock(const tile::Block& block) {
    for (const tile::Stmt& s : block) {
      std::visit([&](const auto& n) { Emit(n); }, s.node);
    }
  }

  absl::Status status() const { return status_; }

 private:
  void Note(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }

  llvm::Value* E(const tile::Expr& e) {
    using K = tile::Expr::Kind;
    const auto& o = e.operands();
    switch (e.kind()) {
      case K::kConst:
        return b_.getInt64(e.value());
      case K::kVar:
        return nest_.is_mutable(e.var())
                   ? b_.CreateLoad(b_.getInt64Ty(), vars_[e.var()])
                   : vars_[e.var()];
      case K::kThreadId:
        return frame_.thread_id;
      case K::kAdd:
        return b_.CreateAdd(E(o[0]), E(o[1]));
      case K::kSub:
        return b_.CreateSub(E(o[0]), E(o[1]));
      case K::kMul:
        return b_.CreateMul(E(o[0]), E(o[1]));
      case K::kDiv:
        return b_.CreateUDiv(E(o[0]), E(o[1]));
      case K::kRem:
        return b_.CreateURem(E(o[0]), E(o[1]));
      case K::kMin: {
        llvm::Value* x = E(o[0]);
        llvm::Value* y = E(o[1]);
        return b_.CreateSelect(b_.CreateICmpSLT(x, y), x, y);
      }
      case K::kLt:
        return b_.CreateZExt(b_.CreateICmpSLT(E(o[0]), E(o[1])),
                             b_.getInt64Ty());
      case K::kEq:
        return b_.CreateZExt(b_.CreateICmpEQ(E(o[0]), E(o[1])),
                             b_.getInt64Ty());
      case K::kSelect:
        return b_.CreateSelect(b_.CreateICmpNE(E(o[0]), b_.getInt64(0)),
                               E(o[1]), E(o[2]));
    }
    return nullptr;
  }

  // The address of a view, as i8* (or `elem`*).
  llvm::Value* Ptr(const tile::View& v, llvm::Type* elem = nullptr) {
    llvm::Value* p = bases_[v.buffer];
    if (!(v.offset.is_const() && v.offset.value() == 0)) {
      p = b_.CreateInBoundsGEP(
          b_.getInt8Ty(), p,
          b_.CreateMul(E(v.offset), b_.getInt64(v.elem_bytes)));
    }
    return elem == nullptr ? p : b_.CreateBitCast(p, elem->getPointerTo());
  }

  void Emit(const tile::For& f) {
    llvm::Value* begin = E(f.begin);
    llvm::Value* end = E(f.end);
    if (f.parallel && f.claims) {
      EmitBalancedFor(f, begin, end);
      return;
    }
    if (f.parallel) {
      llvm::Value *tb, *te;
      EmitThreadRange(b_, frame_, b_.CreateSub(end, begin), tb, te);
      llvm::Value* base = begin;
      begin = b_.CreateAdd(base, tb);
      end = b_.CreateAdd(base, te);
    }
    if (f.share_end >= 0) vars_[f.share_end] = end;
    // A nest's loops run kernels and whole row passes: unrolling them only
    // copies that code (attention's score-pass loop grew into five copies
    // of its row max and 24 prefetches), which cost 15 % of the compile.
    EmitLoop(
        b_, begin, end,
        [&](llvm::IRBuilder<>&, llvm::Value* i) {
          vars_[f.var] = i;
          EmitBlock(f.body);
        },
        Unroll::kDisable);
  }

  // tile::For with claims: thread t walks the shares t, t + 1, ... (mod
  // T), claiming each share's iterations from its counter.
  void EmitBalancedFor(const tile::For& f, llvm::Value* begin,
                       llvm::Value* end) {
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Value* counters = Ptr(*f.claims, i64);
    llvm::Value* threads = frame_.num_threads;
    EmitIf(b_, b_.CreateICmpEQ(frame_.thread_id, b_.getInt64(0)), [&] {
      b_.CreateMemSet(counters, b_.getInt8(0),
                      b_.CreateMul(threads, b_.getInt64(64)), llvm::Align(8));
    });
    EmitBarrier(b_, frame_);
    llvm::Value* total = b_.CreateSub(end, begin);
    EmitLoop(
        b_, b_.getInt64(0), threads, [&](llvm::IRBuilder<>& b, llvm::Value* k) {
          llvm::Value* u =
              b.CreateURem(b.CreateAdd(frame_.thread_id, k), threads);
          llvm::Value *share_begin, *share_end;
          EmitShareRange(b, u, threads, total, share_begin, share_end);
          share_begin = b.CreateAdd(begin, share_begin);
          share_end = b.CreateAdd(begin, share_end);
          llvm::Value* counter =
              b.CreateGEP(i64, counters, b.CreateMul(u, b.getInt64(8)));
          if (f.share_end >= 0) vars_[f.share_end] = share_end;
          llvm::Function* fn = b.GetInsertBlock()->getParent();
          llvm::LLVMContext& c = b.getContext();
          llvm::BasicBlock* claim = llvm::BasicBlock::Create(c, "claim", fn);
          llvm::BasicBlock* body = llvm::BasicBlock::Create(c, "claimed", fn);
          llvm::BasicBlock* done =
              llvm::BasicBlock::Create(c, "share_done", fn);
          b.CreateBr(claim);
          b.SetInsertPoint(claim);
          llvm::Value* item = b.CreateAdd(
              share_begin, b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter,
                                             b.getInt64(1), llvm::MaybeAlign(8),
                                             llvm::AtomicOrdering::Monotonic));
          b.CreateCondBr(b.CreateICmpSLT(item, share_end), body, done);
          b.SetInsertPoint(body);
          vars_[f.var] = item;
          EmitBlock(f.body);
          b.CreateBr(claim);
          b.SetInsertPoint(done);
        });
  }

  void Emit(const tile::Let& l) { vars_[l.var] = E(l.value); }
  // A mutable variable's vars_ entry is its stack slot.
  void Emit(const tile::Assign& a) { b_.CreateStore(E(a.value), vars_[a.var]); }

  void Emit(const tile::Brgemm& c) {
    llvm::Type* i8p = b_.getInt8PtrTy();
    llvm::LoadInst* kernel = b_.CreateLoad(
        i8p, b_.CreateInBoundsGEP(i8p, frame_.kernels, E(c.kernel)), "kernel");
    kernel->setMetadata(llvm::LLVMContext::MD_invariant_load,
                        llvm::MDNode::get(b_.getContext(), {}));
    auto store = [&](int field, llvm::Value* v) {
      b_.CreateStore(v, b_.CreateStructGEP(args_type_, args_, field));
    };
    store(kFieldA, Ptr(c.a));
    store(kFieldB, Ptr(c.b));
    store(kFieldC, Ptr(c.c));
    store(kFieldBatch, E(c.batch));
    auto* null =
        llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(i8p));
    store(kFieldBias, c.bias ? Ptr(*c.bias) : null);
    store(kFieldRowDivisors, c.row_divisors ? Ptr(*c.row_divisors) : null);
    store(kFieldScale, c.scale ? Ptr(*c.scale) : null);
    store(kFieldRowMax, c.row_max ? Ptr(*c.row_max) : null);
    store(kFieldPrefetch, c.prefetch ? Ptr(*c.prefetch) : null);
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {i8p}, false);
    b_.CreateCall(type, b_.CreateBitCast(kernel, type->getPointerTo()),
                  {b_.CreateBitCast(args_, i8p)});
  }

  void Emit(const tile::RowMap& m) {
    llvm::Value* col_begin = E(m.col_begin);
    // The views address column col_begin; EmitRow wants column 0.
    auto row_start = [&](const tile::View& v) {
      return b_.CreateGEP(f32_, Ptr(v, f32_), b_.CreateNeg(col_begin));
    };
    llvm::Value* out_row = m.out_row ? row_start(*m.out_row) : nullptr;
    llvm::Value* in_row = m.in_row ? row_start(*m.in_row) : nullptr;
    RowResultFn max_of_results;
    if (m.max_out) {
      rows_->MaxStart();
      max_of_results = [this](llvm::IRBuilder<>& b, llvm::Value* y,
                              llvm::Value* mask) {
        rows_->MaxTake(b, y, mask);
      };
    }
    Note(EmitRow(b_, frame_, nest_.programs()[m.program], E(m.row), col_begin,
                 E(m.col_end), out_row, in_row, max_of_results,
                 {cast_options_, m.unroll}));
    if (m.max_out) {
      b_.CreateStore(rows_->MaxResult(), Ptr(*m.max_out, f32_));
    }
  }

  void Emit(const tile::RowReduce& r) { Note(rows_->Emit(r)); }
  void Emit(const tile::RowExp& r) { rows_->Emit(r); }
  void Emit(const tile::RowScale& r) { rows_->Emit(r); }
  void Emit(const tile::RowNormalize& r) { rows_->Emit(r); }
  void Emit(const tile::OnlineSoftmax& r) { rows_->Emit(r); }

  ExprEvaluator Evaluator() {
    return [this](const tile::Expr& e) { return E(e); };
  }

  void Emit(const tile::Copy& c) {
    Note(EmitCopy(b_, c, Ptr(c.src), Ptr(c.dst), Evaluator()));
  }

  void Emit(const tile::Fill& f) {
    EmitFill(b_, Ptr(f.dst), E(f.count), f.value);
  }

  void Emit(const tile::Barrier&) { EmitBarrier(b_, frame_); }

  void Emit(const tile::Call& c) {
    EmitCall(
        b_, c, [this](const tile::View& v) { return Ptr(v); }, Evaluator());
  }

  void Emit(const tile::Prefetch& p) {
    // Plain (not inbounds) GEP: the hint may point past the buffer.
    llvm::Value* base = b_.CreateGEP(
        b_.getInt8Ty(), bases_[p.src.buffer],
        b_.CreateMul(E(p.src.offset), b_.getInt64(p.src.elem_bytes)));
    EmitPrefetch(b_, p, base, Evaluator());
  }

  const tile::Nest& nest_;
  llvm::IRBuilder<>& b_;
  const FrameValues& frame_;
  const ExpScaling exp_scaling_;
  CastOptions cast_options_;
  llvm::Type* f32_ = nullptr;
  llvm::StructType* args_type_ = nullptr;
  llvm::Value* args_ = nullptr;
  std::unique_ptr<RowEmitter> rows_;  // the row statements
  std::vector<llvm::Value*> bases_;
  std::vector<llvm::Value*> vars_;
  absl::Status status_;
};

}  // namespace

absl::Status EmitNest(LowerState& state, tile::Nest& nest, bool on_caller) {
  for (const tile::Buffer& buf : nest.buffers()) {
    if (buf.pending != tile::Buffer::Pending::kPlaced) {
      return absl::InternalError(absl::StrCat("@", nest.name(), ": buffer %",
                                              buf.name, " was never placed"));
    }
  }
  Step step;
  step.name = nest.name();
  // No module: the step's code is an object from the cache (jit_steps.h).
  if (state.module != nullptr) {
    llvm::IRBuilder<> b(*state.context);
    FrameValues frame;
    llvm::Function* fn = BeginStepFunction(state, nest.name(), b, frame);
    Emitter emitter(nest, b, frame, state.avx512);
    emitter.Prologue();
    emitter.EmitBlock(nest.body());
    HGC_ASSIGN_OR_RETURN(step, FinishStepFunction(fn, b, emitter.status(),
                                                  nest.name(), StepBuffers()));
  }
  // Positional: frame index i is the nest's i-th frame buffer.
  step.buffers = nest.frame_refs();
  for (const tile::Kernel& k : nest.kernels()) {
    step.kernels.push_back(reinterpret_cast<const void*>(k.code->fn()));
    state.kernels.push_back(k.code);
  }
  step.on_caller = on_caller;
  if (state.loops != nullptr) {
    if (step.on_caller) {
      absl::StrAppend(state.loops, "// step @", nest.name(),
                      " runs on the calling thread alone (small)\n");
    }
    *state.loops += tile::PrintNest(nest);
  }
  for (const tile::Buffer& b : nest.buffers()) {
    if (b.kind != tile::Buffer::Kind::kFrame) {
      state.per_thread_scratch_bytes += b.bytes;
    }
  }
  for (tile::Pack& p : nest.packs()) {
    p.step.buffers.push_back(nest.buffers()[p.dst].ref);
    (p.init ? state.program->init_steps : state.program->steps)
        .push_back(std::move(p.step));
  }
  state.program->steps.push_back(std::move(step));
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
