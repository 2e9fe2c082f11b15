#include "codegen/tile_verifier.h"

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/tile_verifier_internal.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace {

using verifier_internal::Access;
using verifier_internal::AccessesOf;
using verifier_internal::Declared;
using verifier_internal::KernelRangeError;
using verifier_internal::StmtName;
using verifier_internal::ViewText;

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

// The checks that need no values: declared buffers, programs and
// kernels, and race-free writes.
class StaticChecker {
 public:
  explicit StaticChecker(const Nest& nest)
      : nest_(nest), deps_(nest.num_vars()) {}

  absl::Status Run() {
    CheckPrograms();
    CheckPacks();
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

  void CheckPacks() {
    for (const Pack& pack : nest_.packs()) {
      const int dst = pack.dst;
      if (dst < 0 || dst >= static_cast<int>(nest_.buffers().size()) ||
          nest_.buffers()[dst].kind != Buffer::Kind::kFrame) {
        Fail(absl::StrCat("pack \"", pack.text, "\""),
             absl::StrCat("writes buffer #", dst,
                          ", not a frame buffer the nest declares"));
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

}  // namespace

absl::Status VerifyNest(const Nest& nest, const VerifyOptions& options) {
  absl::Status s = StaticChecker(nest).Run();
  if (!s.ok()) return s;
  return verifier_internal::CheckSampledIterations(nest, options);
}

}  // namespace tile
}  // namespace codegen
}  // namespace hgc
