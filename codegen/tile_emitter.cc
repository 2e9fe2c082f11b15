#include "codegen/tile_emitter.h"

#include <array>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "codegen/copy_emitter.h"
#include "codegen/llvm/cast_emitter.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/llvm/vector_math.h"
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
    f32_ = b.getFloatTy();
    vt_ = llvm::FixedVectorType::get(f32_, kVectorWidth);
    vd_ = llvm::FixedVectorType::get(b.getDoubleTy(), kVectorWidth);
    vars_.resize(nest.num_vars(), nullptr);
  }

  // Entry-block setup: buffer base pointers, locals, the call block.
  void Prologue() {
    args_type_ = BrgemmArgsType(b_.getContext());
    args_ = b_.CreateAlloca(args_type_, nullptr, "brgemm_args");
    acc_ = b_.CreateAlloca(vt_, nullptr, "acc");
    for (llvm::Value*& slot : max_slots_) {
      slot = b_.CreateAlloca(vt_, nullptr, "max_slot");
    }
    acc64_ = b_.CreateAlloca(vd_, nullptr, "acc64");
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
              b_.CreateMul(frame_.thread_id, b_.getInt64(buf.bytes)));
        }
      }
      bases_.push_back(base);
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
        return vars_[e.var()];
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
    if (f.parallel) {
      llvm::Value *tb, *te;
      EmitThreadRange(b_, frame_, b_.CreateSub(end, begin), tb, te);
      llvm::Value* base = begin;
      begin = b_.CreateAdd(base, tb);
      end = b_.CreateAdd(base, te);
    }
    if (f.share_end >= 0) vars_[f.share_end] = end;
    EmitLoop(b_, begin, end, [&](llvm::IRBuilder<>&, llvm::Value* i) {
      vars_[f.var] = i;
      EmitBlock(f.body);
    });
  }

  void Emit(const tile::Let& l) { vars_[l.var] = E(l.value); }

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
    const float inf = std::numeric_limits<float>::infinity();
    if (m.max_out) {
      b_.CreateStore(Splat(-inf), acc_);
      max_of_results = [this, inf](llvm::IRBuilder<>& b, llvm::Value* y,
                                   llvm::Value* mask) {
        b.CreateStore(FastMax(b, b.CreateLoad(vt_, acc_),
                              b.CreateSelect(mask, y, Splat(-inf))),
                      acc_);
      };
    }
    Note(EmitRow(b_, frame_, nest_.programs()[m.program], E(m.row), col_begin,
                 E(m.col_end), out_row, in_row, max_of_results));
    if (m.max_out) {
      b_.CreateStore(TreeMax(b_, b_.CreateLoad(vt_, acc_)),
                     Ptr(*m.max_out, f32_));
    }
  }

  llvm::Constant* Splat(float v) {
    return llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(kVectorWidth),
        llvm::ConstantFP::get(f32_, v));
  }
  llvm::Value* VPtr(llvm::Value* row, llvm::Value* col) {
    return b_.CreateBitCast(b_.CreateInBoundsGEP(f32_, row, col),
                            vt_->getPointerTo());
  }
  llvm::Value* Load(llvm::Value* row, llvm::Value* col, llvm::Value* mask,
                    float pass) {
    return b_.CreateMaskedLoad(vt_, VPtr(row, col), llvm::Align(4), mask,
                               Splat(pass));
  }
  void Store(llvm::Value* v, llvm::Value* row, llvm::Value* col,
             llvm::Value* mask) {
    b_.CreateMaskedStore(v, VPtr(row, col), llvm::Align(4), mask);
  }
  // body(col, mask) over the vectors of a row of `len` floats, from vector
  // `first` (none: 0) on.
  void ForVectors(llvm::Value* len,
                  const std::function<void(llvm::Value*, llvm::Value*)>& body,
                  llvm::Value* first = nullptr) {
    llvm::Value* n = b_.CreateUDiv(b_.CreateAdd(len, b_.getInt64(15)),
                                   b_.getInt64(kVectorWidth));
    if (first == nullptr) first = b_.getInt64(0);
    EmitLoop(b_, first, n, [&](llvm::IRBuilder<>& b, llvm::Value* i) {
      llvm::Value* col = b.CreateMul(i, b.getInt64(kVectorWidth));
      body(col, TailMask(b, col, len));
    });
  }
  llvm::Value* Scalar(const tile::View& v) {
    return b_.CreateLoad(f32_, Ptr(v, f32_));
  }
  // The lanes' sum of accumulator `acc` (acc_ by default) of vector type
  // `vt`, in a tree (a reduction may sum in any order).
  llvm::Value* AccSum(llvm::Value* acc = nullptr, llvm::Type* vt = nullptr) {
    if (acc == nullptr) acc = acc_;
    if (vt == nullptr) vt = vt_;
    llvm::CallInst* sum =
        b_.CreateFAddReduce(llvm::ConstantFP::get(vt->getScalarType(), 0.0),
                            b_.CreateLoad(vt, acc));
    llvm::FastMathFlags reassoc;
    reassoc.setAllowReassoc();
    sum->setFastMathFlags(reassoc);
    return sum;
  }
  void Accumulate(llvm::Value* t) {
    b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(vt_, acc_), t), acc_);
  }

  // A row's max as softmax takes it (FastMax), over max_slots_: whole
  // groups of four vectors feed four independent max chains, the rest
  // (the last vector masked) the first.
  llvm::Value* SoftmaxRowMax(llvm::Value* src, llvm::Value* len) {
    const float inf = std::numeric_limits<float>::infinity();
    const int slots = static_cast<int>(max_slots_.size());
    for (llvm::Value* slot : max_slots_) b_.CreateStore(Splat(-inf), slot);
    auto take = [&](llvm::IRBuilder<>& b, int slot, llvm::Value* x) {
      llvm::Value* acc = max_slots_[slot];
      b.CreateStore(FastMax(b, b.CreateLoad(vt_, acc), x), acc);
    };
    llvm::Value* groups = b_.CreateUDiv(len, b_.getInt64(kVectorWidth * slots));
    EmitLoop(
        b_, b_.getInt64(0), groups, [&](llvm::IRBuilder<>& b, llvm::Value* g) {
          for (int i = 0; i < slots; ++i) {
            llvm::Value* col = b.CreateMul(
                b.CreateAdd(b.CreateMul(g, b.getInt64(slots)), b.getInt64(i)),
                b.getInt64(kVectorWidth));
            take(b, i,
                 b.CreateAlignedLoad(vt_, VPtr(src, col), llvm::Align(4)));
          }
        });
    ForVectors(
        len,
        [&](llvm::Value* col, llvm::Value* mask) {
          take(b_, 0, Load(src, col, mask, -inf));
        },
        b_.CreateMul(groups, b_.getInt64(slots)));
    llvm::Value* max = b_.CreateLoad(vt_, max_slots_[0]);
    for (int i = 1; i < slots; ++i) {
      max = FastMax(b_, max, b_.CreateLoad(vt_, max_slots_[i]));
    }
    return TreeMax(b_, max);
  }

  void Emit(const tile::RowReduce& r) {
    using Op = tile::RowReduce::Op;
    llvm::Value* src = Ptr(r.src, f32_);
    llvm::Value* len = E(r.len);
    llvm::Value* result = nullptr;
    if (r.op == Op::kSoftmaxMax) {
      result = SoftmaxRowMax(src, len);
      if (r.accumulate) result = FastMax(b_, Scalar(r.acc), result);
    } else if (r.op == Op::kMax) {
      const float inf = std::numeric_limits<float>::infinity();
      b_.CreateStore(Splat(-inf), acc_);
      ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
        absl::StatusOr<llvm::Value*> m =
            EmitBinary(b_, "max", DType::kF32, b_.CreateLoad(vt_, acc_),
                       Load(src, col, mask, -inf));
        if (!m.ok()) return Note(m.status());
        b_.CreateStore(*m, acc_);
      });
      absl::StatusOr<llvm::Value*> m =
          HorizontalMax(b_, b_.CreateLoad(vt_, acc_));
      if (!m.ok()) return Note(m.status());
      result = *m;
      if (r.accumulate) {
        absl::StatusOr<llvm::Value*> both =
            EmitBinary(b_, "max", DType::kF32, Scalar(r.acc), result);
        if (!both.ok()) return Note(both.status());
        result = *both;
      }
    } else if (r.op != Op::kMeanSquaredDeviation) {
      result = RowSum(r, false);
    } else {
      // Squares in f32, summed again in double only where they overflow (a
      // deviation above 2^64); the variance is a double either way.
      llvm::Type* f64 = b_.getDoubleTy();
      llvm::Value* var = Ptr(r.acc, f64);
      b_.CreateStore(b_.CreateFPExt(RowSum(r, false), f64), var);
      EmitIf(b_,
             b_.CreateFCmpOEQ(b_.CreateLoad(f64, var),
                              llvm::ConstantFP::getInfinity(f64)),
             [&] { b_.CreateStore(RowSum(r, true), var); });
      return;
    }
    b_.CreateStore(result, Ptr(r.acc, f32_));
  }
  // RowReduce's sum, mean or mean squared deviation; `wide`: in double.
  llvm::Value* RowSum(const tile::RowReduce& r, bool wide) {
    using Op = tile::RowReduce::Op;
    llvm::Value* src = Ptr(r.src, f32_);
    llvm::Value* len = E(r.len);
    const bool msd = r.op == Op::kMeanSquaredDeviation;
    llvm::Value* center =
        msd ? b_.CreateVectorSplat(kVectorWidth, Scalar(*r.center)) : nullptr;
    llvm::Value* shift =
        r.shift ? b_.CreateVectorSplat(kVectorWidth, Scalar(r.src)) : nullptr;
    llvm::Value* acc = wide ? acc64_ : acc_;
    llvm::Type* vt = wide ? vd_ : vt_;
    b_.CreateStore(llvm::Constant::getNullValue(vt), acc);
    ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* x = Load(src, col, mask, 0);
      if (shift != nullptr) {
        x = b_.CreateSelect(mask, b_.CreateFSub(x, shift), Splat(0));
      }
      if (msd) x = b_.CreateSelect(mask, b_.CreateFSub(x, center), Splat(0));
      if (wide) x = b_.CreateFPExt(x, vt);
      if (msd) x = b_.CreateFMul(x, x);
      b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(vt, acc), x), acc);
    });
    llvm::Value* result = AccSum(acc, vt);
    if (r.op == Op::kSum && r.accumulate) {
      result = b_.CreateFAdd(Scalar(r.acc), result);
    } else if (r.op != Op::kSum) {
      result = b_.CreateFDiv(result, b_.CreateSIToFP(len, vt->getScalarType()));
    }
    return result;
  }

  void Emit(const tile::RowExp& r) {
    llvm::Value* src = Ptr(r.src, f32_);
    llvm::Value* dst = Ptr(r.dst, f32_);
    llvm::Value* m = b_.CreateVectorSplat(kVectorWidth, Scalar(r.max));
    b_.CreateStore(Splat(0), acc_);
    ForVectors(E(r.len), [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* e = EmitExpNonPositive(
          b_, b_.CreateFSub(Load(src, col, mask, 0), m), exp_scaling_);
      Store(e, dst, col, mask);
      Accumulate(b_.CreateSelect(mask, e, Splat(0)));
    });
    b_.CreateStore(b_.CreateFAdd(Scalar(r.sum), AccSum()), Ptr(r.sum, f32_));
  }

  void Emit(const tile::RowScale& r) {
    llvm::Value* src = Ptr(r.src, f32_);
    llvm::Value* dst = Ptr(r.dst, f32_);
    llvm::Value* f = nullptr;
    if (r.factor) {
      f = Scalar(*r.factor);
      if (r.reciprocal) {
        f = b_.CreateFDiv(llvm::ConstantFP::get(f32_, 1.0), f);
      }
      f = b_.CreateVectorSplat(kVectorWidth, f);
    }
    ForVectors(E(r.len), [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* y = Load(src, col, mask, 0);
      if (f != nullptr) {
        y = r.divide ? b_.CreateFDiv(y, f) : b_.CreateFMul(y, f);
      }
      for (DType t : r.round_to) y = RoundToDType(b_, y, t);
      if (r.denormals_as_zero) y = EmitDenormalsAsZero(b_, y);
      // y is exact in dst_type after the rounding above.
      StoreRowVector(b_, r.dst_type, y, dst, col, mask);
    });
  }

  void Emit(const tile::RowNormalize& r) {
    llvm::Value* src = Ptr(r.src, f32_);
    llvm::Value* dst = Ptr(r.dst, f32_);
    llvm::Value* gamma = Ptr(r.gamma, f32_);
    llvm::Value* beta = Ptr(r.beta, f32_);
    llvm::Value* mean = b_.CreateVectorSplat(kVectorWidth, Scalar(r.mean));
    llvm::Value* shift =
        r.shift ? b_.CreateVectorSplat(kVectorWidth, Scalar(r.src)) : nullptr;
    // 1 / sqrt(var + epsilon) in double (var is), rounded once to f32.
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::Value* sd = b_.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt,
        b_.CreateFAdd(b_.CreateLoad(f64, Ptr(r.var, f64)),
                      llvm::ConstantFP::get(f64, r.epsilon)));
    llvm::Value* rstd = b_.CreateVectorSplat(
        kVectorWidth,
        b_.CreateFPTrunc(b_.CreateFDiv(llvm::ConstantFP::get(f64, 1.0), sd),
                         f32_));
    ForVectors(E(r.len), [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* x = Load(src, col, mask, 0);
      if (shift != nullptr) x = b_.CreateFSub(x, shift);
      llvm::Value* y = b_.CreateFMul(b_.CreateFSub(x, mean), rstd);
      y = b_.CreateFAdd(b_.CreateFMul(y, Load(gamma, col, mask, 0)),
                        Load(beta, col, mask, 0));
      Store(y, dst, col, mask);
    });
  }

  void Emit(const tile::OnlineSoftmax& r) {
    const float inf = std::numeric_limits<float>::infinity();
    llvm::Value* s = Ptr(r.s, f32_);
    llvm::Value* len = E(r.len);
    llvm::Value* max_ptr = Ptr(r.max, f32_);
    llvm::Value* sum_ptr = Ptr(r.sum, f32_);
    llvm::Value* old_max = b_.CreateLoad(f32_, max_ptr);
    llvm::Value* block_max = nullptr;
    if (r.block_max) {
      block_max = Scalar(*r.block_max);
    } else {
      b_.CreateStore(Splat(-inf), acc_);
      ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
        b_.CreateStore(
            FastMax(b_, b_.CreateLoad(vt_, acc_), Load(s, col, mask, -inf)),
            acc_);
      });
      block_max = TreeMax(b_, b_.CreateLoad(vt_, acc_));
    }
    llvm::Value* new_max = FastMax(b_, old_max, block_max);
    // Subtract 0 while every score so far is -inf: exp(-inf - 0) = 0.
    llvm::Value* use = b_.CreateSelect(
        b_.CreateFCmpOEQ(new_max, llvm::ConstantFP::get(f32_, -inf)),
        llvm::ConstantFP::get(f32_, 0.0), new_max);
    llvm::Value* use_v = b_.CreateVectorSplat(kVectorWidth, use);
    b_.CreateStore(Splat(0), acc_);
    ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* e = EmitExpNonPositive(
          b_, b_.CreateFSub(Load(s, col, mask, 0), use_v), exp_scaling_);
      Store(e, s, col, mask);
      Accumulate(b_.CreateSelect(mask, e, Splat(0)));
    });
    llvm::Value* a = EmitExpNonPositive(b_, b_.CreateFSub(old_max, use));
    llvm::Value* alpha = b_.CreateVectorSplat(kVectorWidth, a);
    b_.CreateStore(
        b_.CreateFAdd(b_.CreateFMul(b_.CreateLoad(f32_, sum_ptr), a), AccSum()),
        sum_ptr);
    b_.CreateStore(new_max, max_ptr);
    // o *= a, skipped when the max did not move (a == 1).
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* scale = llvm::BasicBlock::Create(b_.getContext(), "rescale", fn);
    auto* done = llvm::BasicBlock::Create(b_.getContext(), "rescaled", fn);
    b_.CreateCondBr(b_.CreateFCmpUNE(a, llvm::ConstantFP::get(f32_, 1.0)),
                    scale, done);
    b_.SetInsertPoint(scale);
    llvm::Value* o = Ptr(r.o, f32_);
    ForVectors(E(r.o_len), [&](llvm::Value* col, llvm::Value* mask) {
      Store(b_.CreateFMul(Load(o, col, mask, 0), alpha), o, col, mask);
    });
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

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
  llvm::Type* f32_ = nullptr;
  llvm::FixedVectorType* vt_ = nullptr;
  llvm::FixedVectorType* vd_ = nullptr;  // 16 doubles
  llvm::StructType* args_type_ = nullptr;
  llvm::Value* args_ = nullptr;
  llvm::Value* acc_ = nullptr;
  llvm::Value* acc64_ = nullptr;  // <16 x double>: squares, in double
  // SoftmaxRowMax's running maxes: four independent chains instead of one
  // at the max's latency a vector.
  std::array<llvm::Value*, 4> max_slots_{};
  std::vector<llvm::Value*> bases_;
  std::vector<llvm::Value*> vars_;
  absl::Status status_;
};

}  // namespace

absl::Status EmitNest(LowerState& state, tile::Nest& nest) {
  llvm::IRBuilder<> b(*state.context);
  FrameValues frame;
  llvm::Function* fn = BeginStepFunction(state, nest.name(), b, frame);
  Emitter emitter(nest, b, frame, state.avx512);
  emitter.Prologue();
  emitter.EmitBlock(nest.body());
  HGC_ASSIGN_OR_RETURN(
      Step step,
      FinishStepFunction(fn, b, emitter.status(), nest.name(), StepBuffers()));
  // Positional: frame index i is the nest's i-th frame buffer.
  step.buffers = nest.frame_refs();
  for (const tile::Kernel& k : nest.kernels()) {
    step.kernels.push_back(reinterpret_cast<const void*>(k.code->fn()));
    state.kernels.push_back(k.code);
  }
  if (state.loops != nullptr) *state.loops += tile::PrintNest(nest);
  for (const tile::Buffer& b : nest.buffers()) {
    if (b.kind != tile::Buffer::Kind::kFrame) {
      state.per_thread_scratch_bytes += b.bytes;
    }
  }
  for (tile::Pack& p : nest.packs()) {
    (p.init ? state.program->init_steps : state.program->steps)
        .push_back(std::move(p.step));
  }
  state.program->steps.push_back(std::move(step));
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
