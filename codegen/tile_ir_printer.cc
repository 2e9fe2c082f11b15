// The tile IR as text (`hgc FILE --emit=loops`): PrintNest and PrintExpr
// of tile_ir.h.
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {
namespace tile {

namespace {

// An infix operator's text and binding strength (for parentheses); null
// text for the other kinds, which bind tightest.
struct Infix {
  const char* text;
  int precedence;
};
Infix InfixOf(Expr::Kind k) {
  switch (k) {
    case Expr::Kind::kAdd:
      return {" + ", 1};
    case Expr::Kind::kSub:
      return {" - ", 1};
    case Expr::Kind::kMul:
      return {" * ", 2};
    case Expr::Kind::kDiv:
      return {" / ", 2};
    case Expr::Kind::kRem:
      return {" % ", 2};
    default:
      return {nullptr, 3};
  }
}

std::string Print(const Nest& nest, const Expr& e, int context) {
  using K = Expr::Kind;
  const auto& ops = e.operands();
  auto sub = [&](int i, int prec) { return Print(nest, ops[i], prec); };
  if (const Infix op = InfixOf(e.kind()); op.text != nullptr) {
    // Left-associative: the right operand needs parentheses at the same
    // strength (a - (b - c)).
    const std::string s =
        absl::StrCat(sub(0, op.precedence), op.text, sub(1, op.precedence + 1));
    return op.precedence < context ? absl::StrCat("(", s, ")") : s;
  }
  switch (e.kind()) {
    case K::kConst:
      return absl::StrCat(e.value());
    case K::kVar:
      return absl::StrCat("%", nest.var_name(e.var()));
    case K::kThreadId:
      return "%thread";
    case K::kMin:
      return absl::StrCat("min(", sub(0, 0), ", ", sub(1, 0), ")");
    case K::kLt:
      return absl::StrCat("(", sub(0, 0), " < ", sub(1, 0), ")");
    case K::kEq:
      return absl::StrCat("(", sub(0, 0), " == ", sub(1, 0), ")");
    case K::kSelect:
      return absl::StrCat("select(", sub(0, 0), ", ", sub(1, 0), ", ",
                          sub(2, 0), ")");
    default:  // the infix kinds, printed above
      break;
  }
  return {};
}

std::string PrintView(const Nest& nest, const View& v) {
  std::string s = absl::StrCat("%", nest.buffers()[v.buffer].name);
  if (!v.offset.IsConstant(0)) {
    absl::StrAppend(&s, "[", Print(nest, v.offset, 0), "]");
  }
  return s;
}

std::string BufferWhere(const Buffer& b) {
  switch (b.kind) {
    case Buffer::Kind::kLocal:
      return absl::StrCat("local ", b.bytes, " B");
    case Buffer::Kind::kPerThread:
      return absl::StrCat("arena +", b.ref.offset, ", ", b.bytes,
                          " B per thread, ", b.thread_stride, " B apart");
    case Buffer::Kind::kFrame:
      break;
  }
  switch (b.ref.kind) {
    case BufferRef::Kind::kInput:
      return absl::StrCat("input ", b.ref.index);
    case BufferRef::Kind::kOutput:
      return absl::StrCat("output ", b.ref.index);
    case BufferRef::Kind::kConstant:
      return absl::StrCat("constant ", b.ref.index);
    case BufferRef::Kind::kArena:
      return absl::StrCat("arena +", b.ref.offset);
  }
  return "";
}

const char* ReduceName(RowReduce::Op op) {
  switch (op) {
    case RowReduce::Op::kMax:
      return "max";
    case RowReduce::Op::kSoftmaxMax:
      return "softmax_max";
    case RowReduce::Op::kSum:
      return "sum";
    case RowReduce::Op::kMean:
      return "mean";
    case RowReduce::Op::kMeanSquaredDeviation:
      return "mean_sq_dev";
  }
  return "";
}

class Printer {
 public:
  explicit Printer(const Nest& nest) : nest_(nest) {}

  void Block(const tile::Block& block, int indent) {
    for (const Stmt& s : block)
      std::visit([&](const auto& n) { Line(indent, n); }, s.node);
  }
  std::string out;

 private:
  std::string E(const Expr& e) { return Print(nest_, e, 0); }
  std::string V(const View& v) { return PrintView(nest_, v); }
  void Emit(int indent, const std::string& text) {
    absl::StrAppend(&out, std::string(2 * indent, ' '), text, "\n");
  }
  void Line(int indent, const For& f) {
    Emit(indent,
         absl::StrCat(
             f.parallel ? "parallel.for %" : "for %", nest_.var_name(f.var),
             " in [", E(f.begin), ", ", E(f.end), ")",
             !f.parallel ? ""
             : f.claims  ? absl::StrCat(" split over threads, balanced "
                                         "by claims in ",
                                        V(*f.claims))
                         : " split static over threads",
             f.share_end >= 0 ? absl::StrCat(", share ends at %",
                                             nest_.var_name(f.share_end))
                              : "",
             " {"));
    Block(f.body, indent + 1);
    Emit(indent, "}");
  }
  void Line(int indent, const Let& l) {
    Emit(indent, absl::StrCat("%", nest_.var_name(l.var), " = ", E(l.value)));
  }
  void Line(int indent, const Assign& a) {
    Emit(indent,
         absl::StrCat("set %", nest_.var_name(a.var), " = ", E(a.value)));
  }
  void Line(int indent, const Brgemm& c) {
    std::string s = absl::StrCat("brgemm k[", E(c.kernel), "] a=", V(c.a),
                                 " b=", V(c.b), " c=", V(c.c));
    if (!c.batch.IsConstant(1)) absl::StrAppend(&s, " batch=", E(c.batch));
    if (c.scale) absl::StrAppend(&s, " scale=", V(*c.scale));
    if (c.bias) absl::StrAppend(&s, " bias=", V(*c.bias));
    if (c.row_max) absl::StrAppend(&s, " row maxima -> ", V(*c.row_max));
    if (c.prefetch) absl::StrAppend(&s, " prefetching ", V(*c.prefetch));
    if (c.row_divisors) {
      absl::StrAppend(&s, ", rows divided by ", V(*c.row_divisors));
    }
    Emit(indent, s);
  }
  void Line(int indent, const RowMap& m) {
    std::string s = absl::StrCat("rowmap ", nest_.program_names()[m.program],
                                 " row ", E(m.row), " cols [", E(m.col_begin),
                                 ", ", E(m.col_end), ")");
    if (m.in_row) absl::StrAppend(&s, " from ", V(*m.in_row));
    if (m.out_row) absl::StrAppend(&s, " -> ", V(*m.out_row));
    if (m.max_out) absl::StrAppend(&s, ", max -> ", V(*m.max_out));
    if (m.unroll) absl::StrAppend(&s, ", unrolled");
    Emit(indent, s);
  }
  void Line(int indent, const OnlineSoftmax& r) {
    Emit(indent,
         absl::StrCat("online_softmax ", V(r.s), " len ", E(r.len), " max ",
                      V(r.max), " sum ", V(r.sum), " rescale ", V(r.o), " len ",
                      E(r.o_len), " block max ", V(r.block_max)));
  }
  void Line(int indent, const Copy& c) {
    Emit(indent,
         absl::StrCat(V(c.dst),
                      IsInteger(c.src_type)       ? " = dequantize "
                      : c.src_type != DType::kF32 ? " = widen "
                      : c.dst_type != DType::kF32 ? " = narrow "
                                                  : " = copy ",
                      V(c.src), " rows ", E(c.rows), " x cols ", E(c.cols),
                      " strides (", E(c.src_row), ", ", E(c.src_col), ") -> (",
                      E(c.dst_row), ", ", E(c.dst_col), ")",
                      c.src_type == DType::kF32
                          ? ""
                          : absl::StrCat(" from ", DTypeName(c.src_type)),
                      c.denormals_as_zero ? ", denormals as 0" : "",
                      IsInteger(c.src_type)
                          ? absl::StrCat(", scale ", c.scale, " zero point ",
                                         c.zero_point)
                          : "",
                      c.dst_type == DType::kF32
                          ? ""
                          : absl::StrCat(" to ", DTypeName(c.dst_type))));
  }
  void Line(int indent, const RowReduce& r) {
    std::string s =
        absl::StrCat(V(r.acc), r.accumulate ? " <- " : " = ", "reduce_",
                     ReduceName(r.op), " ", V(r.src), " len ", E(r.len));
    if (r.shift) absl::StrAppend(&s, " shifted by its first");
    if (r.center) absl::StrAppend(&s, " about ", V(*r.center));
    Emit(indent, s);
  }
  void Line(int indent, const RowExp& r) {
    Emit(indent, absl::StrCat(V(r.dst), " = exp(", V(r.src), " - ", V(r.max),
                              ") len ", E(r.len), ", ", V(r.sum), " += sum"));
  }
  void Line(int indent, const RowScale& r) {
    std::string value = V(r.src);
    if (r.factor) {
      absl::StrAppend(&value, r.reciprocal || r.divide ? " / " : " * ",
                      V(*r.factor));
    }
    for (DType t : r.round_to) {
      value = absl::StrCat(DTypeName(t), "(", value, ")");
    }
    std::string s = absl::StrCat(V(r.dst), " = ", value, " len ", E(r.len));
    if (r.reciprocal) absl::StrAppend(&s, " (by the reciprocal)");
    if (r.dst_type != DType::kF32) {
      absl::StrAppend(&s, " as ", DTypeName(r.dst_type));
    }
    if (r.denormals_as_zero) absl::StrAppend(&s, ", denormals as 0");
    Emit(indent, s);
  }
  void Line(int indent, const RowNormalize& r) {
    std::string s = absl::StrCat(
        V(r.dst), " = normalize(", V(r.src), r.shift ? " - its first" : "",
        ", mean ", V(r.mean), ", var ", V(r.var), ", eps ", r.epsilon, ") * ",
        V(r.gamma), " + ", V(r.beta), " len ", E(r.len));
    if (r.dst_type != DType::kF32) {
      absl::StrAppend(&s, " as ", DTypeName(r.dst_type));
    }
    if (r.params_type != DType::kF32) {
      absl::StrAppend(&s, ", gamma and beta ", DTypeName(r.params_type));
    }
    Emit(indent, s);
  }
  void Line(int indent, const Fill& f) {
    Emit(indent,
         absl::StrCat(V(f.dst), " = fill ", f.value, " count ", E(f.count)));
  }
  void Line(int indent, const Barrier&) { Emit(indent, "barrier"); }
  void Line(int indent, const Call& c) {
    std::vector<std::string> args;
    for (const Call::Arg& arg : c.args) {
      if (const auto* v = std::get_if<View>(&arg)) {
        args.push_back(V(*v));
      } else if (const auto* e = std::get_if<Expr>(&arg)) {
        args.push_back(E(*e));
      } else if (const auto* f = std::get_if<float>(&arg)) {
        args.push_back(absl::StrCat(*f));
      } else {
        args.push_back(absl::StrCat(std::get<int32_t>(arg)));
      }
    }
    Emit(indent,
         absl::StrCat("call ", c.helper, "(", absl::StrJoin(args, ", "), ")"));
  }
  void Line(int indent, const Prefetch& p) {
    Emit(indent, absl::StrCat(p.write   ? "prefetchw "
                              : p.to_l1 ? "prefetch.l1 "
                                        : "prefetch ",
                              V(p.src), " rows ", E(p.rows), " x ", p.row_bytes,
                              " B stride ", E(p.row_stride)));
  }

  const Nest& nest_;
};

}  // namespace

std::string PrintExpr(const Nest& nest, const Expr& e) {
  return Print(nest, e, 0);
}

std::string PrintNest(const Nest& nest) {
  Printer p(nest);
  absl::StrAppend(&p.out, "step @", nest.name(), " {\n");
  for (const Buffer& b : nest.buffers()) {
    absl::StrAppend(&p.out, "  buffer %", b.name, " = ", BufferWhere(b),
                    b.note.empty() ? "" : " : ", b.note, "\n");
  }
  for (size_t i = 0; i < nest.kernels().size(); ++i) {
    absl::StrAppend(&p.out, "  kernel k", i, " = ",
                    nest.kernels()[i].desc.ToString(), "\n");
  }
  for (size_t i = 0; i < nest.programs().size(); ++i) {
    const RowProgram& prog = nest.programs()[i];
    std::vector<std::string> ops;
    for (const Op* op : prog.ops) ops.push_back(op->kind());
    absl::StrAppend(&p.out, "  program ", nest.program_names()[i], " = [",
                    absl::StrJoin(ops, ", "), "] over [",
                    absl::StrJoin(prog.shape, ", "), "]\n");
  }
  for (const Pack& pack : nest.packs()) {
    absl::StrAppend(&p.out, "  ", pack.init ? "init " : "", pack.text, "\n");
  }
  for (const std::string& note : nest.notes()) {
    absl::StrAppend(&p.out, "  // ", note, "\n");
  }
  p.Block(nest.body(), 1);
  absl::StrAppend(&p.out, "}\n");
  return p.out;
}

}  // namespace tile
}  // namespace codegen
}  // namespace hgc
