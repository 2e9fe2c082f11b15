#include "codegen/row_emitter.h"

#include <limits>
#include <utility>

#include "codegen/emit_row.h"
#include "codegen/llvm/cast_emitter.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/row_program.h"
#include "codegen/step_function.h"
#include "llvm/IR/Constants.h"

namespace hgc {
namespace codegen {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

RowEmitter::RowEmitter(llvm::IRBuilder<>& b, ExpScaling exp_scaling,
                       ViewAddress address, ExprEvaluator eval)
    : b_(b),
      exp_scaling_(exp_scaling),
      address_(std::move(address)),
      eval_(std::move(eval)) {
  f32_ = b.getFloatTy();
  vt_ = llvm::FixedVectorType::get(f32_, kVectorWidth);
  vd_ = llvm::FixedVectorType::get(b.getDoubleTy(), kVectorWidth);
  acc_ = b.CreateAlloca(vt_, nullptr, "acc");
  for (llvm::Value*& slot : slots_) {
    slot = b.CreateAlloca(vt_, nullptr, "slot");
  }
  acc64_ = b.CreateAlloca(vd_, nullptr, "acc64");
  next_r_ = b.CreateAlloca(vt_, nullptr, "next_r");
  next_shifted_ = b.CreateAlloca(vt_, nullptr, "next_shifted");
}

llvm::Constant* RowEmitter::Splat(float v) {
  return llvm::ConstantVector::getSplat(
      llvm::ElementCount::getFixed(kVectorWidth),
      llvm::ConstantFP::get(f32_, v));
}

llvm::Value* RowEmitter::VPtr(llvm::Value* row, llvm::Value* col) {
  return b_.CreateBitCast(b_.CreateInBoundsGEP(f32_, row, col),
                          vt_->getPointerTo());
}

llvm::Value* RowEmitter::Load(llvm::Value* row, llvm::Value* col,
                              llvm::Value* mask, float pass) {
  return b_.CreateMaskedLoad(vt_, VPtr(row, col), llvm::Align(4), mask,
                             Splat(pass));
}

void RowEmitter::Store(llvm::Value* v, llvm::Value* row, llvm::Value* col,
                       llvm::Value* mask) {
  b_.CreateMaskedStore(v, VPtr(row, col), llvm::Align(4), mask);
}

llvm::Value* RowEmitter::Scalar(const tile::View& v) {
  return b_.CreateLoad(f32_, address_(v, f32_));
}

void RowEmitter::ForVectors(
    llvm::Value* len,
    const std::function<void(llvm::Value*, llvm::Value*)>& body,
    llvm::Value* first) {
  llvm::Value* begin = first == nullptr
                           ? b_.getInt64(0)
                           : b_.CreateMul(first, b_.getInt64(kVectorWidth));
  ForVectorsThenTail(b_, begin, len,
                     [&](llvm::IRBuilder<>&, llvm::Value* col,
                         llvm::Value* mask) { body(col, mask); });
}

llvm::Value* RowEmitter::AccSum(llvm::Value* acc, llvm::Type* vt) {
  if (acc == nullptr) acc = acc_;
  if (vt == nullptr) vt = vt_;
  llvm::CallInst* sum = b_.CreateFAddReduce(
      llvm::ConstantFP::get(vt->getScalarType(), 0.0), b_.CreateLoad(vt, acc));
  llvm::FastMathFlags reassoc;
  reassoc.setAllowReassoc();
  sum->setFastMathFlags(reassoc);
  return sum;
}

void RowEmitter::Accumulate(llvm::Value* t) {
  b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(vt_, acc_), t), acc_);
}

void RowEmitter::MaxStart() { b_.CreateStore(Splat(-kInf), acc_); }

void RowEmitter::MaxTake(llvm::IRBuilder<>& b, llvm::Value* y,
                         llvm::Value* mask) {
  b.CreateStore(FastMax(b, b.CreateLoad(vt_, acc_),
                        b.CreateSelect(mask, y, Splat(-kInf))),
                acc_);
}

llvm::Value* RowEmitter::MaxResult() {
  return TreeMax(b_, b_.CreateLoad(vt_, acc_));
}

void RowEmitter::ForVectorSlots(
    llvm::Value* len,
    const std::function<void(llvm::IRBuilder<>&, int, llvm::Value*,
                             llvm::Value*)>& take) {
  llvm::Value* groups = b_.CreateUDiv(len, b_.getInt64(kVectorWidth * kSlots));
  EmitLoop(
      b_, b_.getInt64(0), groups, [&](llvm::IRBuilder<>& b, llvm::Value* g) {
        for (int i = 0; i < kSlots; ++i) {
          llvm::Value* col = b.CreateMul(
              b.CreateAdd(b.CreateMul(g, b.getInt64(kSlots)), b.getInt64(i)),
              b.getInt64(kVectorWidth));
          take(b, i, col, nullptr);
        }
      });
  ForVectors(
      len, [&](llvm::Value* col, llvm::Value* mask) { take(b_, 0, col, mask); },
      b_.CreateMul(groups, b_.getInt64(kSlots)));
}

llvm::Value* RowEmitter::SoftmaxRowMax(llvm::Value* src, llvm::Value* len) {
  for (llvm::Value* slot : slots_) b_.CreateStore(Splat(-kInf), slot);
  ForVectorSlots(len, [&](llvm::IRBuilder<>& b, int slot, llvm::Value* col,
                          llvm::Value* mask) {
    llvm::Value* x = mask == nullptr ? b.CreateAlignedLoad(vt_, VPtr(src, col),
                                                           llvm::Align(4))
                                     : Load(src, col, mask, -kInf);
    b.CreateStore(FastMax(b, b.CreateLoad(vt_, slots_[slot]), x), slots_[slot]);
  });
  llvm::Value* max = b_.CreateLoad(vt_, slots_[0]);
  for (int i = 1; i < kSlots; ++i) {
    max = FastMax(b_, max, b_.CreateLoad(vt_, slots_[i]));
  }
  return TreeMax(b_, max);
}

// The max as the graph's max takes it (a NaN propagates).
absl::StatusOr<llvm::Value*> RowEmitter::RowMax(llvm::Value* src,
                                                llvm::Value* len) {
  b_.CreateStore(Splat(-kInf), acc_);
  absl::Status status = absl::OkStatus();
  ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
    absl::StatusOr<llvm::Value*> m =
        EmitBinary(b_, BinaryKind::kMax, DType::kF32, b_.CreateLoad(vt_, acc_),
                   Load(src, col, mask, -kInf));
    if (!m.ok()) {
      status = m.status();
      return;
    }
    b_.CreateStore(*m, acc_);
  });
  if (!status.ok()) return status;
  return HorizontalMax(b_, b_.CreateLoad(vt_, acc_));
}

absl::Status RowEmitter::Emit(const tile::RowReduce& r) {
  using Op = tile::RowReduce::Op;
  llvm::Value* src = address_(r.src, f32_);
  llvm::Value* len = eval_(r.len);
  llvm::Value* result = nullptr;
  if (r.op == Op::kSoftmaxMax) {
    result = SoftmaxRowMax(src, len);
    if (r.accumulate) result = FastMax(b_, Scalar(r.acc), result);
  } else if (r.op == Op::kMax) {
    absl::StatusOr<llvm::Value*> m = RowMax(src, len);
    if (!m.ok()) return m.status();
    result = *m;
    if (r.accumulate) {
      absl::StatusOr<llvm::Value*> both =
          EmitBinary(b_, BinaryKind::kMax, DType::kF32, Scalar(r.acc), result);
      if (!both.ok()) return both.status();
      result = *both;
    }
  } else if (r.op != Op::kMeanSquaredDeviation) {
    result = RowSum(r, false);
  } else {
    // Squares in f32, summed again in double only where they overflow (a
    // deviation above 2^64); the variance is a double either way.
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::Value* var = address_(r.acc, f64);
    b_.CreateStore(b_.CreateFPExt(RowSum(r, false), f64), var);
    EmitIf(b_,
           b_.CreateFCmpOEQ(b_.CreateLoad(f64, var),
                            llvm::ConstantFP::getInfinity(f64)),
           [&] { b_.CreateStore(RowSum(r, true), var); });
    return absl::OkStatus();
  }
  b_.CreateStore(result, address_(r.acc, f32_));
  return absl::OkStatus();
}

llvm::Value* RowEmitter::RowSum(const tile::RowReduce& r, bool wide) {
  using Op = tile::RowReduce::Op;
  llvm::Value* src = address_(r.src, f32_);
  llvm::Value* len = eval_(r.len);
  const bool msd = r.op == Op::kMeanSquaredDeviation;
  llvm::Value* center =
      msd ? b_.CreateVectorSplat(kVectorWidth, Scalar(*r.center)) : nullptr;
  llvm::Value* shift =
      r.shift ? b_.CreateVectorSplat(kVectorWidth, Scalar(r.src)) : nullptr;
  auto term = [&](llvm::IRBuilder<>& b, llvm::Value* col, llvm::Value* mask) {
    llvm::Value* x = mask == nullptr ? b.CreateAlignedLoad(vt_, VPtr(src, col),
                                                           llvm::Align(4))
                                     : Load(src, col, mask, 0);
    auto keep = [&](llvm::Value* v) {
      return mask == nullptr ? v : b.CreateSelect(mask, v, Splat(0));
    };
    if (shift != nullptr) x = keep(b.CreateFSub(x, shift));
    if (msd) x = keep(b.CreateFSub(x, center));
    if (wide) x = b.CreateFPExt(x, vd_);
    if (msd) x = b.CreateFMul(x, x);
    return x;
  };
  llvm::Value* result = nullptr;
  if (wide) {
    // Only where the f32 squares overflow: one chain is enough.
    b_.CreateStore(llvm::Constant::getNullValue(vd_), acc64_);
    ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
      b_.CreateStore(
          b_.CreateFAdd(b_.CreateLoad(vd_, acc64_), term(b_, col, mask)),
          acc64_);
    });
    result = AccSum(acc64_, vd_);
  } else {
    for (llvm::Value* slot : slots_) b_.CreateStore(Splat(0), slot);
    ForVectorSlots(len, [&](llvm::IRBuilder<>& b, int slot, llvm::Value* col,
                            llvm::Value* mask) {
      b.CreateStore(
          b.CreateFAdd(b.CreateLoad(vt_, slots_[slot]), term(b, col, mask)),
          slots_[slot]);
    });
    llvm::Value* total = b_.CreateLoad(vt_, slots_[0]);
    for (int i = 1; i < kSlots; ++i) {
      total = b_.CreateFAdd(total, b_.CreateLoad(vt_, slots_[i]));
    }
    b_.CreateStore(total, acc_);
    result = AccSum();
  }
  if (r.op == Op::kSum && r.accumulate) {
    result = b_.CreateFAdd(Scalar(r.acc), result);
  } else if (r.op != Op::kSum) {
    result = b_.CreateFDiv(result, b_.CreateSIToFP(len, result->getType()));
  }
  return result;
}

llvm::Value* RowEmitter::ExpRow(llvm::Value* src, llvm::Value* dst,
                                llvm::Value* len, llvm::Value* max) {
  llvm::Value* m = b_.CreateVectorSplat(kVectorWidth, max);
  b_.CreateStore(Splat(0), acc_);
  if (exp_scaling_ != ExpScaling::kPortable) {
    ForVectors(len, [&](llvm::Value* col, llvm::Value* mask) {
      llvm::Value* e =
          EmitExpOfDifference(b_, Load(src, col, mask, 0), m, exp_scaling_);
      Store(e, dst, col, mask);
      Accumulate(b_.CreateSelect(mask, e, Splat(0)));
    });
    return AccSum();
  }
  // Software-pipelined: each trip reduces vector i + 1 and finishes vector
  // i (EmitExpReduce), two independent chains where one vector's whole exp
  // is a chain longer than the out-of-order window overlaps (a 1000-column
  // softmax ran 7-9 % faster on Zen 3); then the last whole vector, then
  // the partial one under its mask. src may be dst: vector i + 1 is read
  // before vector i is written.
  llvm::Constant* all = AllLanes(b_);
  llvm::Value* width = b_.getInt64(kVectorWidth);
  auto reduce = [&](llvm::Value* col, llvm::Value* mask) {
    return EmitExpReduce(b_, b_.CreateFSub(Load(src, col, mask, 0), m));
  };
  auto finish = [&](const ExpReduction& red, llvm::Value* col,
                    llvm::Value* mask) {
    llvm::Value* e = EmitExpFinish(b_, red);
    Store(e, dst, col, mask);
    Accumulate(b_.CreateSelect(mask, e, Splat(0)));
  };
  auto carry = [&](const ExpReduction& red) {
    b_.CreateStore(red.r, next_r_);
    b_.CreateStore(red.shifted, next_shifted_);
  };
  auto carried = [&] {
    return ExpReduction{b_.CreateLoad(vt_, next_r_),
                        b_.CreateLoad(vt_, next_shifted_)};
  };
  llvm::Value* whole = b_.CreateUDiv(len, width);
  EmitIf(b_, b_.CreateICmpUGT(whole, b_.getInt64(0)), [&] {
    carry(reduce(b_.getInt64(0), all));
    EmitLoop(
        b_, b_.getInt64(1), whole,
        [&](llvm::IRBuilder<>&, llvm::Value* i) {
          const ExpReduction previous = carried();
          carry(reduce(b_.CreateMul(i, width), all));
          finish(previous, b_.CreateMul(b_.CreateSub(i, b_.getInt64(1)), width),
                 all);
        },
        Unroll::kDisable);
    finish(carried(), b_.CreateMul(b_.CreateSub(whole, b_.getInt64(1)), width),
           all);
  });
  llvm::Value* tail = b_.CreateMul(whole, width);
  EmitIf(b_, b_.CreateICmpULT(tail, len), [&] {
    llvm::Value* mask = TailMask(b_, tail, len);
    finish(reduce(tail, mask), tail, mask);
  });
  return AccSum();
}

void RowEmitter::Emit(const tile::RowExp& r) {
  llvm::Value* sum = ExpRow(address_(r.src, f32_), address_(r.dst, f32_),
                            eval_(r.len), Scalar(r.max));
  b_.CreateStore(b_.CreateFAdd(Scalar(r.sum), sum), address_(r.sum, f32_));
}

void RowEmitter::Emit(const tile::RowScale& r) {
  llvm::Value* src = address_(r.src, f32_);
  llvm::Value* dst = address_(r.dst, f32_);
  llvm::Value* f = nullptr;
  if (r.factor) {
    f = Scalar(*r.factor);
    if (r.reciprocal) f = b_.CreateFDiv(llvm::ConstantFP::get(f32_, 1.0), f);
    f = b_.CreateVectorSplat(kVectorWidth, f);
  }
  ForVectors(eval_(r.len), [&](llvm::Value* col, llvm::Value* mask) {
    llvm::Value* y = Load(src, col, mask, 0);
    if (f != nullptr) {
      y = r.divide ? b_.CreateFDiv(y, f) : b_.CreateFMul(y, f);
    }
    for (DType t : r.round_to) y = RoundToDType(b_, y, t);
    if (r.denormals_as_zero) y = EmitDenormalsAsZero(b_, y);
    // The store rounds to a 16-bit dst_type (nearest even).
    StoreRowVector(b_, r.dst_type, y, dst, col, mask);
  });
}

void RowEmitter::Emit(const tile::RowNormalize& r) {
  llvm::Value* src = address_(r.src, f32_);
  llvm::Value* dst = address_(r.dst, f32_);
  // gamma and beta as f32 vectors, bf16 / f16 ones widened (exactly).
  llvm::Type* i16 = b_.getInt16Ty();
  const bool wide = r.params_type == DType::kF32;
  llvm::Value* gamma = address_(r.gamma, wide ? f32_ : i16);
  llvm::Value* beta = address_(r.beta, wide ? f32_ : i16);
  auto load_param = [&](llvm::Value* row, llvm::Value* col,
                        llvm::Value* mask) -> llvm::Value* {
    if (wide) return Load(row, col, mask, 0);
    auto* vt = llvm::FixedVectorType::get(i16, kVectorWidth);
    llvm::Value* p = b_.CreateBitCast(b_.CreateInBoundsGEP(i16, row, col),
                                      vt->getPointerTo());
    llvm::Value* h = b_.CreateMaskedLoad(vt, p, llvm::Align(2), mask,
                                         llvm::Constant::getNullValue(vt));
    return r.params_type == DType::kBF16 ? EmitBf16ToF32(b_, h)
                                         : EmitF16ToF32(b_, h);
  };
  llvm::Value* mean = b_.CreateVectorSplat(kVectorWidth, Scalar(r.mean));
  llvm::Value* shift =
      r.shift ? b_.CreateVectorSplat(kVectorWidth, Scalar(r.src)) : nullptr;
  // 1 / sqrt(var + epsilon) in double (var is), rounded once to f32.
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Value* sd = b_.CreateUnaryIntrinsic(
      llvm::Intrinsic::sqrt,
      b_.CreateFAdd(b_.CreateLoad(f64, address_(r.var, f64)),
                    llvm::ConstantFP::get(f64, r.epsilon)));
  llvm::Value* rstd = b_.CreateVectorSplat(
      kVectorWidth,
      b_.CreateFPTrunc(b_.CreateFDiv(llvm::ConstantFP::get(f64, 1.0), sd),
                       f32_));
  ForVectors(eval_(r.len), [&](llvm::Value* col, llvm::Value* mask) {
    llvm::Value* x = Load(src, col, mask, 0);
    if (shift != nullptr) x = b_.CreateFSub(x, shift);
    llvm::Value* y = b_.CreateFMul(b_.CreateFSub(x, mean), rstd);
    y = b_.CreateFAdd(b_.CreateFMul(y, load_param(gamma, col, mask)),
                      load_param(beta, col, mask));
    // The store rounds to a 16-bit dst_type (nearest even).
    StoreRowVector(b_, r.dst_type, y, dst, col, mask);
  });
}

void RowEmitter::Emit(const tile::OnlineSoftmax& r) {
  llvm::Value* s = address_(r.s, f32_);
  llvm::Value* max_ptr = address_(r.max, f32_);
  llvm::Value* sum_ptr = address_(r.sum, f32_);
  llvm::Value* old_max = b_.CreateLoad(f32_, max_ptr);
  llvm::Value* new_max = FastMax(b_, old_max, Scalar(r.block_max));
  // Subtract 0 while every score so far is -inf: exp(-inf - 0) = 0.
  llvm::Value* use = b_.CreateSelect(
      b_.CreateFCmpOEQ(new_max, llvm::ConstantFP::get(f32_, -kInf)),
      llvm::ConstantFP::get(f32_, 0.0), new_max);
  llvm::Value* block_sum = ExpRow(s, s, eval_(r.len), use);
  llvm::Value* a = EmitExpNonPositive(b_, b_.CreateFSub(old_max, use));
  llvm::Value* alpha = b_.CreateVectorSplat(kVectorWidth, a);
  b_.CreateStore(
      b_.CreateFAdd(b_.CreateFMul(b_.CreateLoad(f32_, sum_ptr), a), block_sum),
      sum_ptr);
  b_.CreateStore(new_max, max_ptr);
  // o *= a, skipped when the max did not move (a == 1).
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* scale = llvm::BasicBlock::Create(b_.getContext(), "rescale", fn);
  auto* done = llvm::BasicBlock::Create(b_.getContext(), "rescaled", fn);
  b_.CreateCondBr(b_.CreateFCmpUNE(a, llvm::ConstantFP::get(f32_, 1.0)), scale,
                  done);
  b_.SetInsertPoint(scale);
  llvm::Value* o = address_(r.o, f32_);
  ForVectors(eval_(r.o_len), [&](llvm::Value* col, llvm::Value* mask) {
    Store(b_.CreateFMul(Load(o, col, mask, 0), alpha), o, col, mask);
  });
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

}  // namespace codegen
}  // namespace hgc
