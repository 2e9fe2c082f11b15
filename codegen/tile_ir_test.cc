#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"

#include <utility>

#include "gtest/gtest.h"
#include "ir/tensor.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace {

TEST(TileExprTest, ConstantsFold) {
  Nest nest("n");
  Expr x = Expr::Var(nest.NewVar("x"));
  EXPECT_EQ((Expr(3) * 4 + 1).value(), 13);
  EXPECT_EQ(PrintExpr(nest, x * 1 + 0), "%x");
  EXPECT_TRUE((x * 0).is_const());
  EXPECT_EQ(PrintExpr(nest, x % 1), "0");
  EXPECT_EQ(PrintExpr(nest, Select(0, x, 7)), "7");
  EXPECT_EQ(PrintExpr(nest, Select(x, 5, 5)), "5");
  EXPECT_EQ(Min(Expr(9), Expr(4)).value(), 4);
  EXPECT_EQ(Lt(Expr(2), Expr(3)).value(), 1);
}

TEST(TileExprTest, PrintsWithMinimalParentheses) {
  Nest nest("n");
  Expr a = Expr::Var(nest.NewVar("a"));
  Expr b = Expr::Var(nest.NewVar("b"));
  EXPECT_EQ(PrintExpr(nest, (a + b) * 4), "(%a + %b) * 4");
  EXPECT_EQ(PrintExpr(nest, a + b * 4), "%a + %b * 4");
  EXPECT_EQ(PrintExpr(nest, a - (b - 1)), "%a - (%b - 1)");
  EXPECT_EQ(PrintExpr(nest, Select(Lt(a, b), a, b)),
            "select((%a < %b), %a, %b)");
}

TEST(TileNestTest, PendingFrameBuffersAreTheirOwnUntilPlaced) {
  Nest nest("n");
  const int x = nest.AddFrameBuffer(BufferRef::Arena(0), "x", "f32[4]");
  const int s = nest.AddArenaScratch(64, "s", "scratch");
  const int t = nest.AddArenaScratch(64, "t", "scratch");
  Tensor value = *Tensor::Create(TensorType(DType::kF32, {2}));
  value.mutable_data<float>()[1] = 5.0f;
  const int lit = nest.AddLiteral(std::move(value), "c", "f32[2] literal");
  EXPECT_NE(s, x);
  EXPECT_NE(s, t);
  EXPECT_EQ(nest.AddFrameBuffer(BufferRef::Arena(0), "x", "f32[4]"), x);
  EXPECT_EQ(nest.buffers()[s].pending, Buffer::Pending::kArena);
  EXPECT_EQ(nest.buffers()[lit].pending, Buffer::Pending::kLiteral);
  EXPECT_EQ(nest.buffers()[lit].bytes, 8);

  nest.PlaceFrameBuffer(t, BufferRef::Arena(128));
  EXPECT_EQ(nest.buffers()[t].pending, Buffer::Pending::kPlaced);
  EXPECT_EQ(nest.frame_refs()[nest.FrameIndex(t)].offset, 128);
  const Tensor taken = nest.TakeLiteral(lit);
  EXPECT_EQ(taken.data<float>()[1], 5.0f);
  nest.PlaceFrameBuffer(lit, BufferRef::Constant(3));
  EXPECT_EQ(nest.frame_refs()[nest.FrameIndex(lit)].kind,
            BufferRef::Kind::kConstant);
  EXPECT_EQ(nest.frame_refs()[nest.FrameIndex(lit)].index, 3);
  EXPECT_EQ(nest.buffers()[lit].literal, nullptr);
}

TEST(TileNestTest, VariableNamesStayUnique) {
  Nest nest("n");
  int a = nest.NewVar("row");
  int b = nest.NewVar("row");
  EXPECT_NE(nest.var_name(a), nest.var_name(b));
}

TEST(TileNestTest, FrameBuffersAreDeduplicatedAndLocalsAreNotInTheFrame) {
  Nest nest("n");
  int x = nest.AddFrameBuffer(BufferRef::Input(0), "x", "f32[4]");
  int y = nest.AddFrameBuffer(BufferRef::Output(0), "y", "f32[4]");
  EXPECT_EQ(nest.AddFrameBuffer(BufferRef::Input(0), "x2", ""), x);
  int local = nest.AddLocal(64, "acc", "");
  int slice = nest.AddPerThread(64, "row", "");
  EXPECT_EQ(nest.FrameIndex(x), 0);
  EXPECT_EQ(nest.FrameIndex(y), 1);
  EXPECT_EQ(nest.FrameIndex(local), -1);
  EXPECT_EQ(nest.FrameIndex(slice), 2);
  EXPECT_EQ(nest.frame_refs().size(), 3u);
}

TEST(TileNestTest, PrintsLoopsStatementsAndParallelSplit) {
  Nest nest("softmax_0");
  int in = nest.AddFrameBuffer(BufferRef::Input(0), "x", "f32[8, 32]");
  int out = nest.AddFrameBuffer(BufferRef::Output(0), "y", "f32[8, 32]");
  int stats = nest.AddLocal(8, "stats", "");
  NestBuilder nb(nest);
  nb.For("row", 0, 8, true, [&](Expr row) {
    View x{in, row * 32, 4}, y{out, row * 32, 4};
    View m{stats, 0, 4}, s{stats, 1, 4};
    nb.Append(Stmt{RowReduce{RowReduce::Op::kMax, x, 32, m, false, {}, false}});
    nb.Append(Stmt{Fill{s, 1, 0.0f}});
    nb.Append(Stmt{RowExp{x, y, 32, m, s}});
    nb.Append(Stmt{RowScale{y, y, 32, s, true, false, {}, DType::kF32}});
  });
  nb.Append(Stmt{Barrier{}});
  const std::string text = PrintNest(nest);
  EXPECT_NE(text.find("buffer %x = input 0 : f32[8, 32]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("buffer %stats = local 8 B"), std::string::npos) << text;
  EXPECT_NE(
      text.find("parallel.for %row in [0, 8) split static over threads {"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("%stats = reduce_max %x[%row * 32] len 32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%y[%row * 32] = exp(%x[%row * 32] - %stats) len 32, "
                      "%stats[1] += sum"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%y[%row * 32] = %y[%row * 32] / %stats[1] len 32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  barrier\n}"), std::string::npos) << text;
}

TEST(TileNestTest, ParallelLoopBodyMayTakeTheEndOfItsShare) {
  Nest nest("n");
  NestBuilder nb(nest);
  nb.For("item", 0, 6, true, [&](Expr item, Expr share_end) {
    nb.Let("next", Min(item + 1, share_end - 1));
  });
  const std::string text = PrintNest(nest);
  EXPECT_NE(text.find("parallel.for %item in [0, 6) split static over "
                      "threads, share ends at %item_end {\n"
                      "    %next = min(%item + 1, %item_end - 1)\n"),
            std::string::npos)
      << text;
}

TEST(TileNestTest, PrintsMutableVariablesAndIfs) {
  Nest nest("n");
  NestBuilder nb(nest);
  Expr last = nb.Mutable("last", -1);
  nb.For("i", 0, 4, false, [&](Expr i) {
    Expr seen = nb.Let("seen", last);
    nb.If("new", Select(Eq(seen, i / 2), 0, 1),
          [&] { nb.Assign(last, i / 2); });
  });
  EXPECT_TRUE(nest.is_mutable(last.var()));
  const std::string text = PrintNest(nest);
  EXPECT_NE(text.find("  set %last = -1\n"
                      "  for %i in [0, 4) {\n"
                      "    %seen = %last\n"
                      "    for %new in [0, select((%seen == %i / 2), 0, 1)) {\n"
                      "      set %last = %i / 2\n"),
            std::string::npos)
      << text;
}

TEST(TileNestTest, BalancedParallelLoopNamesItsClaims) {
  Nest nest("n");
  const int claims =
      nest.AddFrameBuffer(BufferRef::Arena(128), "claims", "i64[2]");
  NestBuilder nb(nest);
  nb.ParallelFor("item", 0, 6, true, View{claims, 0, 8},
                 [&](Expr item, Expr share_end) {
                   nb.Let("next", Min(item + 1, share_end - 1));
                 });
  const std::string text = PrintNest(nest);
  EXPECT_NE(text.find("parallel.for %item in [0, 6) split over threads, "
                      "balanced by claims in %claims, share ends at "
                      "%item_end {\n"),
            std::string::npos)
      << text;
}

TEST(TileNestTest, LetOfAConstantOrVariableDefinesNothing) {
  Nest nest("n");
  NestBuilder nb(nest);
  Expr c = nb.Let("c", 5);
  EXPECT_TRUE(c.is_const());
  EXPECT_TRUE(nest.body().empty());
  Expr v = Expr::Var(nest.NewVar("v"));
  Expr w = nb.Let("w", v + 1);
  EXPECT_EQ(w.kind(), Expr::Kind::kVar);
  EXPECT_EQ(nest.body().size(), 1u);
}

}  // namespace
}  // namespace tile
}  // namespace codegen
}  // namespace hgc
