#include "codegen/emit_row.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/llvm/cast_emitter.h"
#include "codegen/llvm/elemental_emitter.h"
#include "ir/dtype.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

namespace {

// The natural alignment of a scalar memory element.
llvm::Align ElementAlign(llvm::Type* elem) {
  return llvm::Align(elem->getPrimitiveSizeInBits() / 8);
}

// The element type memory holds for `dtype` (cast_emitter.h's compute
// representation, with bool as a byte).
llvm::Type* MemoryType(llvm::LLVMContext& c, DType dtype) {
  return dtype == DType::kBool ? llvm::Type::getInt8Ty(c)
                               : ComputeType(c, dtype);
}

// Loaded memory elements -> the elemental emitter's operand values:
// bf16 / f16 widen to f32 (exactly), bool bytes become i1.
llvm::Value* ToOperand(llvm::IRBuilder<>& b, DType dtype, llvm::Value* x) {
  switch (dtype) {
    case DType::kBF16:
      return EmitBf16ToF32(b, x);
    case DType::kF16:
      return EmitF16ToF32(b, x);
    case DType::kBool:
      return b.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    default:
      return x;
  }
}

// An op result value -> memory elements: f32 values narrow to bf16 / f16
// rounded to nearest even (exactly, for values rounded already).
llvm::Value* ToMemory(llvm::IRBuilder<>& b, DType dtype, llvm::Value* x) {
  switch (dtype) {
    case DType::kBF16:
      return EmitF32ToBf16(b, x);
    case DType::kF16:
      return EmitF32ToF16(b, x);
    case DType::kBool:
      return b.CreateZExt(
          x, llvm::FixedVectorType::get(b.getInt8Ty(), kVectorWidth));
    default:
      return x;
  }
}

// The 16-lane splat of a constant input's number in the compute form
// EmitRow gives `dtype`'s operands (ToOperand): f32 for all floats, i32 /
// i8 bit patterns for integers (a u8 200 is i8 0xc8), i1 for bool.
llvm::Constant* SplatConstant(llvm::IRBuilder<>& b, DType dtype, double value) {
  llvm::Constant* lane = nullptr;
  if (IsFloat(dtype)) {
    lane = llvm::ConstantFP::get(b.getFloatTy(), static_cast<float>(value));
  } else if (dtype == DType::kBool) {
    lane = b.getInt1(value != 0);
  } else {
    const auto bits = static_cast<uint64_t>(static_cast<int64_t>(value));
    lane = llvm::ConstantInt::get(
        ComputeType(b.getContext(), dtype),
        dtype == DType::kS32 ? bits & 0xffffffffu : bits & 0xffu);
  }
  return llvm::ConstantVector::getSplat(
      llvm::ElementCount::getFixed(kVectorWidth), lane);
}

// Per-lane scale (f32) and zero point (i32) vectors of a per-channel
// quantize / dequantize: read from constant tables, by column when the
// channel is the row's dim, else splat from the row's coordinate.
struct ChannelTables {
  int axis = 0;
  llvm::GlobalVariable* scales = nullptr;
  llvm::GlobalVariable* zero_points = nullptr;  // per-channel or one entry
};

absl::StatusOr<ChannelTables> MakeChannelTables(llvm::IRBuilder<>& b,
                                                const Op& op, int rank) {
  ChannelTables t;
  const Attribute* axis = op.FindAttr("axis");
  int64_t a = axis != nullptr && axis->is_int() ? axis->as_int() : 0;
  if (a < 0) a += rank;
  if (a < 0 || a >= rank) return absl::UnimplementedError("channel axis");
  t.axis = static_cast<int>(a);
  auto numbers = [](const Attribute* attr, double fallback) {
    if (attr == nullptr) return std::vector<double>{fallback};
    return attr->is_list() ? attr->as_number_list()
                           : std::vector<double>{attr->as_number()};
  };
  std::vector<float> scales;
  for (double v : numbers(op.FindAttr("scale"), 1)) scales.push_back(v);
  std::vector<int32_t> zps;
  for (double v : numbers(op.FindAttr("zero_point"), 0)) zps.push_back(v);
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  auto table = [&](llvm::Constant* init) {
    return new llvm::GlobalVariable(module, init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, init,
                                    "channel_table");
  };
  t.scales = table(
      llvm::ConstantDataArray::get(b.getContext(), llvm::ArrayRef(scales)));
  t.zero_points =
      table(llvm::ConstantDataArray::get(b.getContext(), llvm::ArrayRef(zps)));
  return t;
}

// The vector of `table` (elements `elem`, `entries` long) for the lanes at
// columns [col, col + 16) of the row at coordinates `idx`.
llvm::Value* ChannelVector(llvm::IRBuilder<>& b, llvm::GlobalVariable* table,
                           llvm::Type* elem, int axis, int rank,
                           const std::vector<llvm::Value*>& idx,
                           llvm::Value* col, llvm::Value* mask) {
  const uint64_t entries =
      llvm::cast<llvm::ArrayType>(table->getValueType())->getNumElements();
  llvm::Value* base = b.CreateBitCast(table, elem->getPointerTo());
  if (entries == 1) {
    return b.CreateVectorSplat(kVectorWidth, b.CreateLoad(elem, base));
  }
  if (axis == rank - 1) {
    auto* vt = llvm::FixedVectorType::get(elem, kVectorWidth);
    llvm::Value* p = b.CreateBitCast(b.CreateInBoundsGEP(elem, base, col),
                                     vt->getPointerTo());
    // Masked-off lanes read 1 (a harmless divisor).
    llvm::Constant* one = elem->isFloatTy() ? llvm::ConstantFP::get(elem, 1.0)
                                            : llvm::ConstantInt::get(elem, 1);
    return b.CreateMaskedLoad(
        vt, p, ElementAlign(elem), mask,
        llvm::ConstantVector::getSplat(
            llvm::ElementCount::getFixed(kVectorWidth), one));
  }
  return b.CreateVectorSplat(
      kVectorWidth,
      b.CreateLoad(elem, b.CreateInBoundsGEP(elem, base, idx[axis])));
}

}  // namespace

void StoreRowVector(llvm::IRBuilder<>& b, DType dtype, llvm::Value* value,
                    llvm::Value* row, llvm::Value* col, llvm::Value* mask) {
  llvm::Type* elem = MemoryType(b.getContext(), dtype);
  auto* vt = llvm::FixedVectorType::get(elem, kVectorWidth);
  llvm::Value* p = b.CreateBitCast(
      b.CreateInBoundsGEP(elem, b.CreateBitCast(row, elem->getPointerTo()),
                          col),
      vt->getPointerTo());
  b.CreateMaskedStore(ToMemory(b, dtype, value), p, ElementAlign(elem), mask);
}

namespace {

// Where one input of a row program is read from.
struct RowBase {
  llvm::Value* ptr = nullptr;  // element pointer at the row's first element
  llvm::Type* elem = nullptr;  // memory element type
  DType dtype = DType::kF32;
  bool vector = false;  // last-dim stride 1 (else 0: splat)
};

// What evaluating a row program at one vector of columns needs.
struct RowState {
  const RowProgram& program;
  std::vector<RowBase> bases;  // per program input
  // The row's coordinates, over all dims but the last.
  std::vector<llvm::Value*> idx;
  absl::flat_hash_map<const Op*, ChannelTables> channel_tables;
  DType out_dtype;
  llvm::Value* out_row;
  CastOptions cast_options;
};

// The coordinates of flat row `row` over all dims of `shape` but the last.
std::vector<llvm::Value*> RowCoordinates(llvm::IRBuilder<>& b,
                                         const Shape& shape, llvm::Value* row) {
  const int rank = static_cast<int>(shape.size());
  std::vector<llvm::Value*> idx(rank, nullptr);
  llvm::Value* r = row;
  for (int d = rank - 2; d >= 0; --d) {
    llvm::Value* extent = b.getInt64(shape[d]);
    idx[d] = b.CreateURem(r, extent);
    r = b.CreateUDiv(r, extent);
  }
  return idx;
}

// Each input's pointer at the row's first element (constants have none).
std::vector<RowBase> RowBases(llvm::IRBuilder<>& b, const FrameValues& frame,
                              const RowProgram& program,
                              const std::vector<llvm::Value*>& idx,
                              llvm::Value* in_row_override) {
  const int rank = static_cast<int>(program.shape.size());
  std::vector<RowBase> bases(program.inputs.size());
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const RowInput& in = program.inputs[i];
    if (in.is_constant) continue;
    llvm::Value* off = b.getInt64(0);
    for (int d = 0; d + 1 < rank; ++d) {
      if (in.strides[d] == 0) continue;
      off = b.CreateAdd(off, b.CreateMul(idx[d], b.getInt64(in.strides[d])));
    }
    bases[i].dtype = in.rounded_from_f32 ? DType::kF32 : in.value->type().dtype;
    bases[i].elem = MemoryType(b.getContext(), bases[i].dtype);
    bases[i].ptr =
        in.from_in_row
            ? b.CreateBitCast(in_row_override, bases[i].elem->getPointerTo())
            : b.CreateInBoundsGEP(
                  bases[i].elem, LoadBuffer(b, frame, in.buffer, bases[i].elem),
                  off);
    bases[i].vector = in.strides[rank - 1] != 0;
  }
  return bases;
}

// The inputs' vectors at `col` under lane mask `mask`, by value.
absl::flat_hash_map<const Value*, llvm::Value*> LoadRowInputs(
    llvm::IRBuilder<>& b, const RowState& st, llvm::Value* col,
    llvm::Value* mask) {
  absl::flat_hash_map<const Value*, llvm::Value*> vals;
  for (size_t i = 0; i < st.program.inputs.size(); ++i) {
    const RowInput& in = st.program.inputs[i];
    const RowBase& base = st.bases[i];
    if (in.is_constant) {
      vals[in.value] = SplatConstant(b, in.value->type().dtype, in.constant);
    } else if (base.vector) {
      auto* vt = llvm::FixedVectorType::get(base.elem, kVectorWidth);
      llvm::Value* p = b.CreateBitCast(
          b.CreateInBoundsGEP(base.elem, base.ptr, col), vt->getPointerTo());
      llvm::Value* x = b.CreateMaskedLoad(vt, p, ElementAlign(base.elem), mask,
                                          llvm::Constant::getNullValue(vt));
      vals[in.value] = ToOperand(b, base.dtype, x);
    } else {
      llvm::Value* x =
          b.CreateVectorSplat(kVectorWidth, b.CreateLoad(base.elem, base.ptr));
      vals[in.value] = ToOperand(b, base.dtype, x);
    }
    if (in.rounded_from_f32) {
      vals[in.value] = RoundToDType(b, vals[in.value], in.value->type().dtype);
    }
  }
  return vals;
}

// The program's result at `col` under lane mask `mask`.
absl::StatusOr<llvm::Value*> EvaluateRowVector(llvm::IRBuilder<>& b,
                                               const RowState& st,
                                               llvm::Value* col,
                                               llvm::Value* mask) {
  const int rank = static_cast<int>(st.program.shape.size());
  absl::flat_hash_map<const Value*, llvm::Value*> vals =
      LoadRowInputs(b, st, col, mask);
  for (const Op* op : st.program.ops) {
    std::vector<DType> dtypes;
    std::vector<llvm::Value*> operands;
    for (const Value* x : op->operands()) {
      auto it = vals.find(x);
      if (it == vals.end()) {
        return absl::UnimplementedError("operand outside the row");
      }
      dtypes.push_back(x->type().dtype);
      operands.push_back(it->second);
    }
    absl::StatusOr<llvm::Value*> y;
    if (auto t = st.channel_tables.find(op); t != st.channel_tables.end()) {
      llvm::Value* scale =
          ChannelVector(b, t->second.scales, b.getFloatTy(), t->second.axis,
                        rank, st.idx, col, mask);
      llvm::Value* zp = ChannelVector(b, t->second.zero_points, b.getInt32Ty(),
                                      t->second.axis, rank, st.idx, col, mask);
      y = op->kind_id() == OpKind::kQuantize
              ? EmitQuantize(b, operands[0], scale, zp,
                             op->result()->type().dtype, st.cast_options)
              : EmitDequantize(b, operands[0], dtypes[0], scale, zp);
    } else {
      y = EmitElementwise(b, op->kind_id(), dtypes, op->result()->type().dtype,
                          operands, op->attrs(), st.cast_options);
    }
    if (!y.ok()) return y.status();
    vals[op->result()] = *y;
  }
  auto it = vals.find(st.program.result);
  if (it == vals.end()) return absl::UnimplementedError("result not computed");
  llvm::Value* result = it->second;
  if (st.program.result_denormals_as_zero) {
    result = EmitDenormalsAsZero(b, result);
  }
  return result;
}

}  // namespace

absl::Status EmitRow(llvm::IRBuilder<>& b, const FrameValues& frame,
                     const RowProgram& program, llvm::Value* row,
                     llvm::Value* col_begin, llvm::Value* col_end,
                     llvm::Value* out_row_override,
                     llvm::Value* in_row_override, const RowResultFn& on_result,
                     const RowEmitOptions& options) {
  const Shape& shape = program.shape;
  const int rank = static_cast<int>(shape.size());
  std::vector<llvm::Value*> idx = RowCoordinates(b, shape, row);
  std::vector<RowBase> bases =
      RowBases(b, frame, program, idx, in_row_override);
  const DType out_dtype =
      program.result_in_f32 ? DType::kF32 : program.result->type().dtype;
  llvm::Type* out_elem = MemoryType(b.getContext(), out_dtype);
  llvm::Value* out_row =
      out_row_override != nullptr
          ? b.CreateBitCast(out_row_override, out_elem->getPointerTo())
          : b.CreateInBoundsGEP(
                out_elem, LoadBuffer(b, frame, program.out_buffer, out_elem),
                b.CreateMul(row, b.getInt64(shape[rank - 1])));
  RowState st{program,   std::move(bases), std::move(idx), {},
              out_dtype, out_row,          options.cast};
  for (const Op* op : program.ops) {
    if ((op->kind_id() == OpKind::kQuantize ||
         op->kind_id() == OpKind::kDequantize) &&
        IsPerChannel(*op)) {
      HGC_ASSIGN_OR_RETURN(st.channel_tables[op],
                           MakeChannelTables(b, *op, rank));
    }
  }
  absl::Status status = absl::OkStatus();
  ForVectorsThenTail(
      b, col_begin, col_end,
      [&](llvm::IRBuilder<>& b, llvm::Value* col, llvm::Value* mask) {
        absl::StatusOr<llvm::Value*> result =
            EvaluateRowVector(b, st, col, mask);
        if (!result.ok()) {
          if (status.ok()) status = result.status();
          return;
        }
        StoreRowVector(b, st.out_dtype, *result, st.out_row, col, mask);
        if (on_result) on_result(b, *result, mask);
      },
      options.unroll ? Unroll::kFull : Unroll::kDisable);
  return status;
}

}  // namespace codegen
}  // namespace hgc
