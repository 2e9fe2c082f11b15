#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/tile_verifier_internal.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace verifier_internal {
namespace {

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
    // Per-thread and local buffers, and frame buffers Compile has yet to
    // place, have the size the lowering declared.
    if (b.kind != Buffer::Kind::kFrame ||
        b.pending != Buffer::Pending::kPlaced) {
      return b.bytes;
    }
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

absl::Status CheckSampledIterations(const Nest& nest,
                                    const VerifyOptions& options) {
  return Sampler(nest, options).Run();
}

}  // namespace verifier_internal
}  // namespace tile
}  // namespace codegen
}  // namespace hgc
