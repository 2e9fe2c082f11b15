#include "codegen/tile_verifier.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace {

// One buffer a statement reads or writes: the elements `view` +
// r * row_stride + c * col_stride for r < rows, c < cols.
struct Access {
  const char* role = "";
  View view;
  bool write = false;
  bool bounded = true;  // false for prefetch hints
  Expr rows = 1, row_stride = 0, cols = 1, col_stride = 1;
};

Access Read(const char* role, const View& v, Expr len = 1) {
  Access a;
  a.role = role;
  a.view = v;
  a.cols = std::move(len);
  return a;
}

Access Write(const char* role, const View& v, Expr len = 1) {
  Access a = Read(role, v, std::move(len));
  a.write = true;
  return a;
}

struct AccessLister {
  std::vector<Access>& out;

  void operator()(const For& f) {
    if (f.claims) out.push_back(Read("claims", *f.claims));
  }
  void operator()(const Let&) {}
  void operator()(const Assign&) {}
  void operator()(const Barrier&) {}
  void operator()(const Brgemm& c) {
    out.push_back(Read("a", c.a));
    out.push_back(Read("b", c.b));
    out.push_back(Write("c", c.c));
    if (c.bias) out.push_back(Read("bias", *c.bias));
    if (c.row_divisors) out.push_back(Read("row divisors", *c.row_divisors));
    if (c.scale) out.push_back(Read("scale", *c.scale));
    if (c.row_max) out.push_back(Write("row maxima", *c.row_max));
    if (c.prefetch) {
      Access a = Read("prefetch", *c.prefetch);
      a.bounded = false;
      out.push_back(std::move(a));
    }
  }
  void operator()(const RowMap& m) {
    const Expr len = m.col_end - m.col_begin;
    if (m.out_row) out.push_back(Write("out row", *m.out_row, len));
    if (m.in_row) out.push_back(Read("in row", *m.in_row, len));
    if (m.max_out) out.push_back(Write("max", *m.max_out));
  }
  void operator()(const RowReduce& r) {
    out.push_back(Read("src", r.src, r.len));
    out.push_back(Write("acc", r.acc));
    if (r.center) out.push_back(Read("center", *r.center));
  }
  void operator()(const RowExp& r) {
    out.push_back(Read("src", r.src, r.len));
    out.push_back(Write("dst", r.dst, r.len));
    out.push_back(Read("max", r.max));
    out.push_back(Write("sum", r.sum));
  }
  void operator()(const RowScale& r) {
    out.push_back(Read("src", r.src, r.len));
    out.push_back(Write("dst", r.dst, r.len));
    if (r.factor) out.push_back(Read("factor", *r.factor));
  }
  void operator()(const RowNormalize& r) {
    out.push_back(Read("src", r.src, r.len));
    out.push_back(Write("dst", r.dst, r.len));
    out.push_back(Read("mean", r.mean));
    out.push_back(Read("var", r.var));
    out.push_back(Read("gamma", r.gamma, r.len));
    out.push_back(Read("beta", r.beta, r.len));
  }
  void operator()(const OnlineSoftmax& r) {
    out.push_back(Write("s", r.s, r.len));
    out.push_back(Write("max", r.max));
    out.push_back(Write("sum", r.sum));
    out.push_back(Write("o", r.o, r.o_len));
    out.push_back(Read("block max", r.block_max));
  }
  void operator()(const Copy& c) {
    Access src = Read("src", c.src, c.cols);
    src.rows = c.rows;
    src.row_stride = c.src_row;
    src.col_stride = c.src_col;
    out.push_back(std::move(src));
    Access dst = Write("dst", c.dst, c.cols);
    dst.rows = c.rows;
    dst.row_stride = c.dst_row;
    dst.col_stride = c.dst_col;
    out.push_back(std::move(dst));
  }
  void operator()(const Fill& f) {
    out.push_back(Write("dst", f.dst, f.count));
  }
  void operator()(const Prefetch& p) {
    Access a = Read("src", p.src);
    a.bounded = false;
    out.push_back(std::move(a));
  }
};

std::vector<Access> AccessesOf(const Stmt& s) {
  std::vector<Access> out;
  std::visit(AccessLister{out}, s.node);
  return out;
}

const char* StmtName(const Stmt& s) {
  static constexpr const char* kNames[] = {
      "for",    "let",  "set",     "brgemm",    "rowmap",
      "reduce", "exp",  "scale",   "normalize", "online_softmax",
      "copy",   "fill", "barrier", "prefetch"};
  static_assert(std::variant_size_v<decltype(Stmt::node)> ==
                sizeof(kNames) / sizeof(kNames[0]));
  return kNames[s.node.index()];
}

bool Declared(const Nest& nest, int buffer) {
  return buffer >= 0 && buffer < static_cast<int>(nest.buffers().size());
}

std::string ViewText(const Nest& nest, const View& v) {
  std::string s = Declared(nest, v.buffer)
                      ? absl::StrCat("%", nest.buffers()[v.buffer].name)
                      : absl::StrCat("buffer #", v.buffer);
  return absl::StrCat(s, "[", PrintExpr(nest, v.offset), "]");
}

std::string LoopText(const Nest& nest, const For& f) {
  return absl::StrCat(f.parallel ? "parallel.for %" : "for %",
                      nest.var_name(f.var));
}

// The kernel indices a Brgemm's kernel expression can take that are known
// without running the nest: its constants, through selects.
void ConstantKernels(const Expr& e, std::vector<int64_t>& out) {
  if (e.is_const()) {
    out.push_back(e.value());
  } else if (e.kind() == Expr::Kind::kSelect) {
    ConstantKernels(e.operands()[1], out);
    ConstantKernels(e.operands()[2], out);
  }
}

std::string KernelRangeError(const Nest& nest, int64_t k) {
  return absl::StrCat("calls kernel k", k, ", not in the kernel table (",
                      nest.kernels().size(), " entries)");
}

// The checks that need no values: declared buffers, programs and
// kernels, and race-free writes.
class StaticChecker {
 public:
  explicit StaticChecker(const Nest& nest)
      : nest_(nest), deps_(nest.num_vars()) {}

  absl::Status Run() {
    CheckPrograms();
    Block(nest_.body());
    return status_;
  }

 private:
  static constexpr int kThread = -1;  // a dependence on the thread id

  void Fail(const std::string& what, const std::string& problem) {
    if (!status_.ok()) return;
    std::string where = path_.empty()
                            ? std::string(" at the top level")
                            : absl::StrCat(" in ", absl::StrJoin(path_, " > "));
    status_ = absl::InternalError(
        absl::StrCat("nest @", nest_.name(), ": ", what, where, ": ", problem));
  }

  bool FrameIndexOk(int index) const {
    return index >= 0 && index < static_cast<int>(nest_.frame_refs().size());
  }

  void CheckPrograms() {
    const auto& programs = nest_.programs();
    for (size_t p = 0; p < programs.size(); ++p) {
      const std::string what =
          absl::StrCat("program ", nest_.program_names()[p]);
      for (const RowInput& in : programs[p].inputs) {
        if (!in.is_constant && !in.from_in_row && !FrameIndexOk(in.buffer)) {
          Fail(what, absl::StrCat("reads frame buffer #", in.buffer,
                                  ", which the nest does not declare"));
        }
      }
      // -1: every RowMap of the program writes through its out_row.
      if (programs[p].out_buffer != -1 &&
          !FrameIndexOk(programs[p].out_buffer)) {
        Fail(what, absl::StrCat("writes frame buffer #", programs[p].out_buffer,
                                ", which the nest does not declare"));
      }
    }
  }

  std::set<int> DepsOf(const Expr& e) const {
    std::set<int> out;
    AddDeps(e, out);
    return out;
  }
  void AddDeps(const Expr& e, std::set<int>& out) const {
    if (e.kind() == Expr::Kind::kThreadId) out.insert(kThread);
    if (e.kind() == Expr::Kind::kVar && e.var() >= 0 &&
        e.var() < static_cast<int>(deps_.size())) {
      out.insert(deps_[e.var()].begin(), deps_[e.var()].end());
    }
    for (const Expr& o : e.operands()) AddDeps(o, out);
  }

  // Whether an index depending on `deps` differs between the iterations
  // of an enclosing parallel loop (or between threads).
  bool PerIteration(const std::set<int>& deps) const {
    if (deps.count(kThread) > 0 || single_ > 0) return true;
    for (int var : parallel_) {
      if (deps.count(var) > 0) return true;
    }
    return false;
  }

  void CheckWrite(const std::string& what, const Expr& index,
                  const std::string& target) {
    if (parallel_.empty()) {
      Fail(what, absl::StrCat("writes ", target,
                              ", shared by the threads, outside a parallel "
                              "loop (every thread writes it)"));
    } else if (!PerIteration(DepsOf(index))) {
      Fail(what, absl::StrCat("writes ", target,
                              ", shared by the threads, at an index that "
                              "does not depend on the parallel loop's "
                              "variable (iterations may race)"));
    }
  }

  void Block(const tile::Block& block) {
    for (const Stmt& s : block) {
      if (!status_.ok()) return;
      Statement(s);
    }
  }

  void Statement(const Stmt& s) {
    const std::string name = StmtName(s);
    for (const Access& a : AccessesOf(s)) {
      const std::string what =
          absl::StrCat(name, " (", a.role, " ", ViewText(nest_, a.view), ")");
      if (!Declared(nest_, a.view.buffer)) {
        Fail(what, "names a buffer the nest does not declare");
        return;
      }
      if (a.write &&
          nest_.buffers()[a.view.buffer].kind == Buffer::Kind::kFrame) {
        CheckWrite(what, a.view.offset,
                   absl::StrCat("%", nest_.buffers()[a.view.buffer].name));
      }
    }
    if (const auto* f = std::get_if<For>(&s.node)) {
      Loop(*f);
    } else if (const auto* l = std::get_if<Let>(&s.node)) {
      deps_[l->var] = DepsOf(l->value);
    } else if (const auto* a = std::get_if<Assign>(&s.node)) {
      std::set<int> d = DepsOf(a->value);
      deps_[a->var].insert(d.begin(), d.end());
    } else if (const auto* c = std::get_if<Brgemm>(&s.node)) {
      std::vector<int64_t> kernels;
      ConstantKernels(c->kernel, kernels);
      for (int64_t k : kernels) {
        if (k < 0 || k >= static_cast<int64_t>(nest_.kernels().size())) {
          Fail(absl::StrCat("brgemm k[", PrintExpr(nest_, c->kernel), "]"),
               KernelRangeError(nest_, k));
        }
      }
    } else if (const auto* m = std::get_if<RowMap>(&s.node)) {
      RowMapProgram(*m);
    }
  }

  void RowMapProgram(const RowMap& m) {
    const std::string what = absl::StrCat("rowmap of program #", m.program);
    if (m.program < 0 ||
        m.program >= static_cast<int>(nest_.programs().size())) {
      Fail(what, "runs a program the nest does not declare");
      return;
    }
    if (m.out_row) return;  // written through out_row, checked as a view
    const int out = nest_.programs()[m.program].out_buffer;
    if (out == -1) {
      Fail(what, "writes its program's output, which has no buffer");
      return;
    }
    for (size_t i = 0; i < nest_.buffers().size(); ++i) {
      if (nest_.FrameIndex(static_cast<int>(i)) == out &&
          nest_.buffers()[i].kind == Buffer::Kind::kFrame) {
        CheckWrite(absl::StrCat("rowmap ", nest_.program_names()[m.program],
                                " row ", PrintExpr(nest_, m.row)),
                   m.row, absl::StrCat("%", nest_.buffers()[i].name));
      }
    }
  }

  void Loop(const For& f) {
    if (f.parallel) {
      deps_[f.var] = {f.var};
    } else {
      deps_[f.var] = DepsOf(f.begin);
      AddDeps(f.end, deps_[f.var]);
    }
    if (f.share_end >= 0) deps_[f.share_end].clear();
    path_.push_back(LoopText(nest_, f));
    // A parallel loop of one iteration: its writes cannot race.
    const Expr trips = f.end - f.begin;
    const bool single = f.parallel && trips.is_const() && trips.value() <= 1;
    if (f.parallel) parallel_.push_back(f.var);
    single_ += single;
    Block(f.body);
    single_ -= single;
    if (f.parallel) parallel_.pop_back();
    path_.pop_back();
  }

  const Nest& nest_;
  std::vector<std::set<int>> deps_;  // per variable: parallel vars / kThread
  std::vector<int> parallel_;        // enclosing parallel loops' variables
  int single_ = 0;                 // enclosing parallel loops of one iteration
  std::vector<std::string> path_;  // enclosing loops, as printed
  absl::Status status_;
};

// Runs the nest on a sample of its iterations and checks the elements each
// statement touches there against its buffer's bytes, and the kernel each
// Brgemm calls against the table.
class Sampler {
 public:
  Sampler(const Nest& nest, const VerifyOptions& options)
      : nest_(nest),
        options_(options),
        threads_(std::max(options.num_threads, 1)),
        env_(nest.num_vars()) {}

  absl::Status Run() {
    Block(nest_.body());
    return status_;
  }

 private:
  // Iterations sampled at each end of a loop, and statements visited at
  // most (past that, the rest of the nest goes unsampled).
  static constexpr int64_t kEdge = 2;
  static constexpr int64_t kMaxVisits = int64_t{1} << 17;

  using Value = std::optional<int64_t>;

  Value Eval(const Expr& e) const {
    using K = Expr::Kind;
    switch (e.kind()) {
      case K::kConst:
        return e.value();
      case K::kVar:
        return e.var() >= 0 && e.var() < static_cast<int>(env_.size())
                   ? env_[e.var()]
                   : std::nullopt;
      case K::kThreadId:
        return thread_;
      default:
        break;
    }
    std::vector<int64_t> v;
    for (const Expr& o : e.operands()) {
      Value x = Eval(o);
      if (!x) return std::nullopt;
      v.push_back(*x);
    }
    auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
    switch (e.kind()) {
      case K::kAdd:
        return static_cast<int64_t>(u(v[0]) + u(v[1]));
      case K::kSub:
        return static_cast<int64_t>(u(v[0]) - u(v[1]));
      case K::kMul:
        return static_cast<int64_t>(u(v[0]) * u(v[1]));
      case K::kDiv:
        if (v[1] == 0) return std::nullopt;
        return static_cast<int64_t>(u(v[0]) / u(v[1]));
      case K::kRem:
        if (v[1] == 0) return std::nullopt;
        return static_cast<int64_t>(u(v[0]) % u(v[1]));
      case K::kMin:
        return std::min(v[0], v[1]);
      case K::kLt:
        return v[0] < v[1] ? 1 : 0;
      case K::kEq:
        return v[0] == v[1] ? 1 : 0;
      case K::kSelect:
        return v[0] != 0 ? v[1] : v[2];
      default:
        return std::nullopt;
    }
  }

  int64_t BufferBytes(int buffer) const {
    const Buffer& b = nest_.buffers()[buffer];
    if (b.kind != Buffer::Kind::kFrame) return b.bytes;
    return options_.frame_bytes ? options_.frame_bytes(b.ref) : -1;
  }

  std::string At() const {
    std::vector<std::string> values;
    for (int var : path_) {
      values.push_back(
          absl::StrCat("%", nest_.var_name(var), " = ",
                       env_[var] ? absl::StrCat(*env_[var]) : "?"));
    }
    return absl::StrCat(" (at ", absl::StrJoin(values, ", "),
                        values.empty() ? "" : ", ", "thread ", thread_, ")");
  }

  void Fail(const std::string& what, const std::string& problem) {
    if (!status_.ok()) return;
    status_ = absl::InternalError(
        absl::StrCat("nest @", nest_.name(), ": ", what, At(), ": ", problem));
  }

  void CheckBounds(const char* stmt, const Access& a) {
    const Value offset = Eval(a.view.offset), rows = Eval(a.rows),
                row_stride = Eval(a.row_stride), cols = Eval(a.cols),
                col_stride = Eval(a.col_stride);
    if (!offset || !rows || !row_stride || !cols || !col_stride) return;
    if (*rows <= 0 || *cols <= 0) return;  // nothing touched
    const __int128 r = static_cast<__int128>(*rows - 1) * *row_stride;
    const __int128 c = static_cast<__int128>(*cols - 1) * *col_stride;
    const __int128 first =
        *offset + std::min<__int128>(r, 0) + std::min<__int128>(c, 0);
    const __int128 last =
        *offset + std::max<__int128>(r, 0) + std::max<__int128>(c, 0);
    const int64_t bytes = BufferBytes(a.view.buffer);
    const __int128 end = (last + 1) * a.view.elem_bytes;
    if (first >= 0 && (bytes < 0 || end <= bytes)) return;
    Fail(absl::StrCat(stmt, " (", a.role, " ", ViewText(nest_, a.view), ")"),
         absl::StrCat(
             "touches elements [", static_cast<int64_t>(first), ", ",
             static_cast<int64_t>(last + 1), ") of ", a.view.elem_bytes,
             " bytes, outside the buffer's ",
             bytes < 0 ? std::string("start") : absl::StrCat(bytes, " bytes")));
  }

  void Block(const tile::Block& block) {
    for (const Stmt& s : block) {
      if (!status_.ok() || ++visits_ > kMaxVisits) return;
      Statement(s);
    }
  }

  void Statement(const Stmt& s) {
    std::vector<Access> accesses = AccessesOf(s);
    if (const auto* c = std::get_if<Brgemm>(&s.node)) {
      const Value k = Eval(c->kernel);
      if (k && (*k < 0 || *k >= static_cast<int64_t>(nest_.kernels().size()))) {
        Fail(absl::StrCat("brgemm k[", PrintExpr(nest_, c->kernel), "]"),
             KernelRangeError(nest_, *k));
        return;
      }
      if (k) {
        // C is the kernel's M x N tile, ldc elements a row.
        const microkernels::BrgemmDesc& d = nest_.kernels()[*k].desc;
        accesses[2].rows = d.m;
        accesses[2].row_stride = d.ldc;
        accesses[2].cols = d.n;
      }
    }
    for (const Access& a : accesses) {
      if (a.bounded) CheckBounds(StmtName(s), a);
    }
    if (const auto* f = std::get_if<For>(&s.node)) {
      Loop(*f);
    } else if (const auto* l = std::get_if<Let>(&s.node)) {
      env_[l->var] = Eval(l->value);
    } else if (const auto* a = std::get_if<Assign>(&s.node)) {
      env_[a->var] = Eval(a->value);
    }
  }

  // The first and last kEdge iterations of [lo, hi).
  void Iterate(const For& f, int64_t lo, int64_t hi, Value share_end) {
    path_.push_back(f.var);
    for (int64_t i = lo; i < hi && status_.ok(); ++i) {
      if (i == lo + kEdge && hi - lo > 2 * kEdge) i = hi - kEdge;
      env_[f.var] = i;
      if (f.share_end >= 0) env_[f.share_end] = share_end;
      Block(f.body);
    }
    path_.pop_back();
  }

  void Loop(const For& f) {
    const Value begin = Eval(f.begin), end = Eval(f.end);
    if (!begin || !end) return;
    if (!f.parallel) {
      Iterate(f, *begin, *end, std::nullopt);
      return;
    }
    const int64_t n = std::max<int64_t>(*end - *begin, 0);
    auto share = [&](int64_t t) { return *begin + t * n / threads_; };
    if (in_parallel_) {  // a nested split: the same thread's share
      Iterate(f, share(thread_), share(thread_ + 1), share(thread_ + 1));
      return;
    }
    // Each sampled thread starts from the state before the loop.
    const std::vector<Value> before = env_;
    std::set<int64_t> sample = {0, 1, threads_ / 2, threads_ - 1};
    in_parallel_ = true;
    for (int64_t t : sample) {
      if (t >= threads_ || !status_.ok()) continue;
      env_ = before;
      thread_ = t;
      Iterate(f, share(t), share(t + 1), share(t + 1));
    }
    in_parallel_ = false;
    thread_ = 0;
  }

  const Nest& nest_;
  const VerifyOptions& options_;
  const int64_t threads_;
  std::vector<Value> env_;  // per variable
  std::vector<int> path_;   // enclosing loops' variables
  int64_t thread_ = 0;
  bool in_parallel_ = false;
  int64_t visits_ = 0;
  absl::Status status_;
};

}  // namespace

absl::Status VerifyNest(const Nest& nest, const VerifyOptions& options) {
  absl::Status s = StaticChecker(nest).Run();
  if (!s.ok()) return s;
  return Sampler(nest, options).Run();
}

}  // namespace tile
}  // namespace codegen
}  // namespace hgc
