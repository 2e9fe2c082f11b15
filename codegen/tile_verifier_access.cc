#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/tile_verifier_internal.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace verifier_internal {
namespace {

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
  void operator()(const Call& c) {
    for (const Call::Region& r : c.regions) {
      Access a = Read(r.role, r.view, r.cols);
      a.write = r.write;
      a.rows = r.rows;
      a.row_stride = r.row_stride;
      a.col_stride = r.col_stride;
      out.push_back(std::move(a));
    }
  }
};

}  // namespace

std::vector<Access> AccessesOf(const Stmt& s) {
  std::vector<Access> out;
  std::visit(AccessLister{out}, s.node);
  return out;
}

const char* StmtName(const Stmt& s) {
  static constexpr const char* kNames[] = {
      "for",    "let",  "set",     "brgemm",    "rowmap",
      "reduce", "exp",  "scale",   "normalize", "online_softmax",
      "copy",   "fill", "barrier", "prefetch", "call"};
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

std::string KernelRangeError(const Nest& nest, int64_t k) {
  return absl::StrCat("calls kernel k", k, ", not in the kernel table (",
                      nest.kernels().size(), " entries)");
}

}  // namespace verifier_internal
}  // namespace tile
}  // namespace codegen
}  // namespace hgc
