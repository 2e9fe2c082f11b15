#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hgc {
namespace codegen {
namespace tile {

struct Expr::Node {
  Kind kind = Kind::kConst;
  int64_t value = 0;
  int var = -1;
  std::vector<Expr> operands;
};

Expr::Expr(int64_t value) {
  auto n = std::make_shared<Node>();
  n->value = value;
  node_ = std::move(n);
}

Expr Expr::Var(int id) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kVar;
  n->var = id;
  Expr e;
  e.node_ = std::move(n);
  return e;
}

Expr Expr::ThreadId() {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kThreadId;
  Expr e;
  e.node_ = std::move(n);
  return e;
}

Expr Expr::Make(Kind kind, std::vector<Expr> operands) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->operands = std::move(operands);
  Expr e;
  e.node_ = std::move(n);
  return e;
}

Expr::Kind Expr::kind() const { return node_->kind; }
int64_t Expr::value() const { return node_->value; }
int Expr::var() const { return node_->var; }
const std::vector<Expr>& Expr::operands() const { return node_->operands; }

Expr operator+(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return a.value() + b.value();
  if (a.IsConstant(0)) return b;
  if (b.IsConstant(0)) return a;
  return Expr::Make(Expr::Kind::kAdd, {a, b});
}

Expr operator-(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return a.value() - b.value();
  if (b.IsConstant(0)) return a;
  return Expr::Make(Expr::Kind::kSub, {a, b});
}

Expr operator*(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return a.value() * b.value();
  if (a.IsConstant(0) || b.IsConstant(0)) return 0;
  if (a.IsConstant(1)) return b;
  if (b.IsConstant(1)) return a;
  return Expr::Make(Expr::Kind::kMul, {a, b});
}

Expr operator/(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const() && b.value() != 0) {
    return a.value() / b.value();
  }
  if (b.IsConstant(1) || a.IsConstant(0)) return a;
  return Expr::Make(Expr::Kind::kDiv, {a, b});
}

Expr operator%(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const() && b.value() != 0) {
    return a.value() % b.value();
  }
  if (b.IsConstant(1) || a.IsConstant(0)) return 0;
  return Expr::Make(Expr::Kind::kRem, {a, b});
}

Expr Min(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return std::min(a.value(), b.value());
  return Expr::Make(Expr::Kind::kMin, {a, b});
}

Expr Lt(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return a.value() < b.value() ? 1 : 0;
  return Expr::Make(Expr::Kind::kLt, {a, b});
}

Expr Eq(const Expr& a, const Expr& b) {
  if (a.is_const() && b.is_const()) return a.value() == b.value() ? 1 : 0;
  return Expr::Make(Expr::Kind::kEq, {a, b});
}

Expr Select(const Expr& cond, const Expr& a, const Expr& b) {
  if (cond.is_const()) return cond.value() != 0 ? a : b;
  if (a.is_const() && b.is_const() && a.value() == b.value()) return a;
  return Expr::Make(Expr::Kind::kSelect, {cond, a, b});
}

Nest::Nest(std::string name) : name_(std::move(name)) {}

int Nest::AddFrameBuffer(const BufferRef& ref, std::string name,
                         std::string note) {
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.kind == Buffer::Kind::kFrame &&
        b.pending == Buffer::Pending::kPlaced && b.ref.kind == ref.kind &&
        b.ref.index == ref.index && b.ref.offset == ref.offset) {
      return static_cast<int>(i);
    }
  }
  Buffer b;
  b.kind = Buffer::Kind::kFrame;
  b.ref = ref;
  b.name = std::move(name);
  b.note = std::move(note);
  buffers_.push_back(std::move(b));
  frame_index_.push_back(static_cast<int>(frame_refs_.size()));
  frame_refs_.push_back(ref);
  return static_cast<int>(buffers_.size()) - 1;
}

int Nest::AddPendingFrameBuffer(Buffer::Pending pending, int64_t bytes,
                                std::string name, std::string note) {
  Buffer b;
  b.kind = Buffer::Kind::kFrame;
  b.pending = pending;
  b.bytes = bytes;
  b.name = std::move(name);
  b.note = std::move(note);
  buffers_.push_back(std::move(b));
  frame_index_.push_back(static_cast<int>(frame_refs_.size()));
  frame_refs_.push_back(BufferRef::Arena(0));  // until placed
  return static_cast<int>(buffers_.size()) - 1;
}

int Nest::AddArenaScratch(int64_t bytes, std::string name, std::string note) {
  return AddPendingFrameBuffer(Buffer::Pending::kArena, bytes, std::move(name),
                               std::move(note));
}

int Nest::AddConstantSlot(int64_t bytes, std::string name, std::string note) {
  return AddPendingFrameBuffer(Buffer::Pending::kConstantSlot, bytes,
                               std::move(name), std::move(note));
}

int Nest::AddLiteral(Tensor value, std::string name, std::string note) {
  const int buffer =
      AddPendingFrameBuffer(Buffer::Pending::kLiteral, value.size_in_bytes(),
                            std::move(name), std::move(note));
  buffers_[buffer].literal = std::make_shared<Tensor>(std::move(value));
  return buffer;
}

void Nest::PlaceFrameBuffer(int buffer, const BufferRef& ref) {
  Buffer& b = buffers_[buffer];
  b.pending = Buffer::Pending::kPlaced;
  b.ref = ref;
  b.literal.reset();
  frame_refs_[frame_index_[buffer]] = ref;
}

Tensor Nest::TakeLiteral(int buffer) {
  return std::move(*buffers_[buffer].literal);
}

int Nest::AddPerThread(int64_t bytes, std::string name, std::string note) {
  // The arena region itself is a frame buffer; the buffer is its slice.
  Buffer b;
  b.kind = Buffer::Kind::kPerThread;
  b.bytes = bytes;
  b.name = std::move(name);
  b.note = std::move(note);
  buffers_.push_back(std::move(b));
  frame_index_.push_back(static_cast<int>(frame_refs_.size()));
  frame_refs_.push_back(BufferRef::Arena(0));
  return static_cast<int>(buffers_.size()) - 1;
}

void Nest::PlacePerThread(int buffer, int64_t arena_offset,
                          int64_t thread_stride) {
  Buffer& b = buffers_[buffer];
  b.ref = BufferRef::Arena(arena_offset);
  b.thread_stride = thread_stride;
  frame_refs_[frame_index_[buffer]] = b.ref;
}

int Nest::AddLocal(int64_t bytes, std::string name, std::string note) {
  Buffer b;
  b.kind = Buffer::Kind::kLocal;
  b.bytes = bytes;
  b.name = std::move(name);
  b.note = std::move(note);
  buffers_.push_back(std::move(b));
  frame_index_.push_back(-1);
  return static_cast<int>(buffers_.size()) - 1;
}

int Nest::AddKernel(const microkernels::BrgemmDesc& desc,
                    std::shared_ptr<const microkernels::BrgemmKernel> code) {
  for (size_t i = 0; i < kernels_.size(); ++i) {
    if (kernels_[i].code == code) return static_cast<int>(i);
  }
  kernels_.push_back({desc, std::move(code)});
  return static_cast<int>(kernels_.size()) - 1;
}

int Nest::AddProgram(RowProgram program, std::string name) {
  programs_.push_back(std::move(program));
  program_names_.push_back(std::move(name));
  return static_cast<int>(programs_.size()) - 1;
}

int Nest::NewVar(const std::string& name) {
  std::string unique = name;
  for (int n = 1; std::find(var_names_.begin(), var_names_.end(), unique) !=
                  var_names_.end();
       ++n) {
    unique = absl::StrCat(name, n);
  }
  var_names_.push_back(std::move(unique));
  mutable_.push_back(false);
  return static_cast<int>(var_names_.size()) - 1;
}

int Nest::NewMutableVar(const std::string& name) {
  const int var = NewVar(name);
  mutable_[var] = true;
  return var;
}

Expr NestBuilder::Let(const std::string& name, Expr value) {
  // A mutable variable is copied: the let keeps today's value.
  if (value.is_const() ||
      (value.kind() == Expr::Kind::kVar && !nest_.is_mutable(value.var()))) {
    return value;
  }
  tile::Let let;
  let.var = nest_.NewVar(name);
  let.value = std::move(value);
  const int var = let.var;
  Append(Stmt{std::move(let)});
  return Expr::Var(var);
}

Expr NestBuilder::Mutable(const std::string& name, Expr init) {
  Expr var = Expr::Var(nest_.NewMutableVar(name));
  Assign(var, std::move(init));
  return var;
}

void NestBuilder::Assign(const Expr& var, Expr value) {
  Append(Stmt{tile::Assign{var.var(), std::move(value)}});
}

}  // namespace tile
}  // namespace codegen
}  // namespace hgc
