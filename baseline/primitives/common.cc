#include "baseline/primitives/common.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hgc {
namespace primitive_internal {

using dnnl::memory;

absl::Status PrimitiveStep::PrepareConstants(const RunState& state,
                                             dnnl::stream& stream) {
  try {
    for (Call& call : prepare_calls) call.primitive.execute(stream, call.args);
    stream.wait();
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(info.op_label, ": oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status PrimitiveStep::Execute(const RunState& state,
                                    dnnl::stream& stream) {
  try {
    for (Call& call : calls) call.primitive.execute(stream, call.args);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(info.op_label, ": oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

BuildContext::BuildContext(const Graph& graph, dnnl::engine engine,
                           BuildOptions options)
    : engine_(std::move(engine)), options_(options) {
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) {
      ++use_count_[v];
      last_user_[v] = op.get();
    }
  }
  for (const Value* v : graph.results()) {
    ++use_count_[v];
    is_result_[v] = true;
  }
}

int BuildContext::SlotOf(const Value* v) const {
  auto it = slot_of_.find(v);
  return it == slot_of_.end() ? -1 : it->second;
}

int BuildContext::AddParamSlot(const Value* param) {
  if (int s = SlotOf(param); s >= 0) return s;
  Slot slot;
  slot.kind = param->is_const() ? SlotKind::kConstParam : SlotKind::kInput;
  slot.param_index = param->index();
  slot.type = param->type();
  slots_.push_back(std::move(slot));
  return slot_of_[param] = static_cast<int>(slots_.size()) - 1;
}

int BuildContext::AddConstantSlot(const Value* v, Tensor data) {
  if (int s = SlotOf(v); s >= 0) return s;
  Slot slot;
  slot.kind = SlotKind::kConstant;
  slot.type = v->type();
  slot.owned = std::move(data);
  slots_.push_back(std::move(slot));
  return slot_of_[v] = static_cast<int>(slots_.size()) - 1;
}

void BuildContext::AddAlias(const Value* v, int slot) { slot_of_[v] = slot; }

int BuildContext::DefineResult(const Value* v) {
  if (int s = SlotOf(v); s >= 0) return s;
  Slot slot;
  slot.kind = SlotKind::kIntermediate;
  slot.type = v->type();
  slots_.push_back(std::move(slot));
  return slot_of_[v] = static_cast<int>(slots_.size()) - 1;
}

memory BuildContext::Bind(const memory::desc& md, int slot) {
  memory mem(md, engine_, DNNL_MEMORY_NONE);
  bindings_.emplace_back(mem, slot);
  return mem;
}

int BuildContext::UseCount(const Value* v) const {
  auto it = use_count_.find(v);
  return it == use_count_.end() ? 0 : it->second;
}

bool BuildContext::IsResult(const Value* v) const {
  return is_result_.contains(v);
}

const Op* BuildContext::SoleUser(const Value* v) const {
  if (UseCount(v) != 1 || IsResult(v)) return nullptr;
  auto it = last_user_.find(v);
  return it == last_user_.end() ? nullptr : it->second;
}

std::optional<EltwiseParams> EltwiseFor(const Op& op) {
  using dnnl::algorithm;
  const std::optional<UnaryKind> kind = AsUnary(op.kind_id());
  if (!kind.has_value()) return std::nullopt;
  switch (*kind) {
    case UnaryKind::kRelu:
      return EltwiseParams{algorithm::eltwise_relu, 0, 0};
#define HGC_MATH_OP_KIND(e, name, reference, emitter, ulps, onednn, alpha, \
                         beta)                                             \
  case UnaryKind::e:                                                       \
    if (algorithm::onednn == algorithm::undef) return std::nullopt;        \
    return EltwiseParams{algorithm::onednn, alpha, beta};
#include "ir/op_kinds.def"
    case UnaryKind::kNeg:
      return EltwiseParams{algorithm::eltwise_linear, -1.f, 0.f};
    case UnaryKind::kAbs:
      return EltwiseParams{algorithm::eltwise_abs, 0, 0};
    case UnaryKind::kGelu: {
      const Attribute* approx = op.FindAttr("approximate");
      bool tanh = approx != nullptr && approx->is_string() &&
                  approx->as_string() == "tanh";
      return EltwiseParams{
          tanh ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf, 0,
          0};
    }
    case UnaryKind::kClamp: {
      const Attribute* lo = op.FindAttr("min");
      const Attribute* hi = op.FindAttr("max");
      // clip(x) = min(max(x, alpha), beta); an absent bound is unbounded.
      float alpha = lo != nullptr ? static_cast<float>(lo->as_number())
                                  : -std::numeric_limits<float>::infinity();
      float beta = hi != nullptr ? static_cast<float>(hi->as_number())
                                 : std::numeric_limits<float>::infinity();
      return EltwiseParams{algorithm::eltwise_clip, alpha, beta};
    }
  }
  return std::nullopt;
}

std::optional<memory::data_type> DnnlType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return memory::data_type::f32;
    case DType::kBF16:
      return memory::data_type::bf16;
    case DType::kF16:
      return memory::data_type::f16;
    case DType::kS32:
      return memory::data_type::s32;
    case DType::kS8:
      return memory::data_type::s8;
    case DType::kU8:
      return memory::data_type::u8;
    case DType::kBool:
      return memory::data_type::u8;
  }
  return std::nullopt;
}

memory::dims PaddedDims(const Shape& shape, int rank) {
  int n = std::max<int>(rank, std::max<int>(1, static_cast<int>(shape.size())));
  memory::dims dims(n, 1);
  for (size_t i = 0; i < shape.size(); ++i) {
    dims[n - shape.size() + i] = shape[i];
  }
  return dims;
}

memory::dims RowMajor(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * std::max<memory::dim>(dims[i + 1], 1);
  }
  return strides;
}

memory::desc PlainDesc(const Shape& shape, DType dtype, int rank) {
  memory::dims dims = PaddedDims(shape, rank);
  return memory::desc(dims, *DnnlType(dtype), RowMajor(dims));
}

std::string ImplName(const dnnl::primitive_desc_base& pd) {
  const char* name = pd.impl_info_str();
  return name == nullptr ? std::string("?") : std::string(name);
}

bool IsReferenceImpl(const std::string& impl) {
  return absl::StartsWith(impl, "ref");
}

absl::Status CheckDnnlTypes(const Op& op) {
  auto check = [&](const TensorType& t) -> absl::Status {
    if (t.rank() > kMaxDnnlRank) {
      return absl::UnimplementedError(
          absl::StrCat("rank ", t.rank(), " exceeds oneDNN's ", kMaxDnnlRank));
    }
    if (t.NumElements() == 0) {
      return absl::UnimplementedError("zero-element tensor");
    }
    return absl::OkStatus();
  };
  for (const Value* v : op.operands()) {
    absl::Status s = check(v->type());
    if (!s.ok()) return s;
  }
  for (int i = 0; i < op.num_results(); ++i) {
    absl::Status s = check(op.result(i)->type());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string OpLabel(const Op& op) {
  const Value* r = op.num_results() > 0 ? op.result(0) : nullptr;
  std::string name = r != nullptr && !r->name().empty()
                         ? absl::StrCat("%", r->name())
                         : std::string("<unnamed>");
  return absl::StrCat(name, " = ", op.kind());
}

StepInfo PrimitiveInfo(std::string description, std::string impl,
                       const Op& op) {
  StepInfo info;
  info.description = std::move(description);
  info.impl = std::move(impl);
  info.op_label = OpLabel(op);
  return info;
}

}  // namespace primitive_internal
}  // namespace hgc
