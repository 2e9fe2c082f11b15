// Builds a tile IR nest (tile_ir.h) statement by statement: what
// lowerings use to write their loops.
#ifndef HGC_CODEGEN_TILE_BUILDER_H_
#define HGC_CODEGEN_TILE_BUILDER_H_

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {
namespace tile {

// A region a runtime helper's Call reads or writes (the tile verifier
// checks it against its buffer): `rows` rows `row_stride` apart of `cols`
// elements `col_stride` apart from `view`.
inline Call::Region CallRegion(const char* role, View view, Expr rows,
                               Expr row_stride, Expr cols, Expr col_stride,
                               bool write) {
  Call::Region r;
  r.role = role;
  r.view = std::move(view);
  r.rows = std::move(rows);
  r.row_stride = std::move(row_stride);
  r.cols = std::move(cols);
  r.col_stride = std::move(col_stride);
  r.write = write;
  return r;
}

// Builds a block statement by statement. For and the other row statements
// append to the innermost open block.
class NestBuilder {
 public:
  explicit NestBuilder(Nest& nest) : nest_(nest), blocks_{&nest.body()} {}

  // Opens `for name in [begin, end)`, runs `body(var)` inside it; a
  // parallel loop's body may instead take (var, end of the thread's share),
  // the latter named name + "_end".
  template <typename F>
  void For(const std::string& name, Expr begin, Expr end, bool parallel,
           F body) {
    ParallelFor(name, std::move(begin), std::move(end), parallel, std::nullopt,
                std::move(body));
  }
  // The same, a parallel loop's shares balanced by `claims` when set
  // (tile::For).
  template <typename F>
  void ParallelFor(const std::string& name, Expr begin, Expr end, bool parallel,
                   std::optional<View> claims, F body) {
    tile::For loop;
    loop.var = nest_.NewVar(name);
    loop.begin = std::move(begin);
    loop.end = std::move(end);
    loop.parallel = parallel;
    loop.claims = std::move(claims);
    blocks_.push_back(&loop.body);
    if constexpr (std::is_invocable_v<F, Expr, Expr>) {
      loop.share_end = nest_.NewVar(name + "_end");
      body(Expr::Var(loop.var), Expr::Var(loop.share_end));
    } else {
      body(Expr::Var(loop.var));
    }
    blocks_.pop_back();
    Append(Stmt{std::move(loop)});
  }
  // let name = value; returns the variable (constants are returned as is).
  Expr Let(const std::string& name, Expr value);
  // A mutable variable (Nest::NewMutableVar) set to `init` here.
  Expr Mutable(const std::string& name, Expr init);
  // var = value for a variable Mutable returned.
  void Assign(const Expr& var, Expr value);
  // Runs `body` when `cond` (0 or 1) is 1: a loop of that many trips.
  template <typename F>
  void If(const std::string& name, Expr cond, F body) {
    For(name, 0, std::move(cond), false, [&](Expr) { body(); });
  }
  void Append(Stmt stmt) { blocks_.back()->push_back(std::move(stmt)); }

  Nest& nest() { return nest_; }

 private:
  Nest& nest_;
  std::vector<Block*> blocks_;
};

}  // namespace tile
}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TILE_BUILDER_H_
