#include "codegen/tile_verifier.h"

#include <string>

#include "absl/status/status.h"
#include "codegen/tile_builder.h"
#include "gtest/gtest.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace {

// Expects an Internal error whose message contains `part`.
void ExpectError(const absl::Status& s, const std::string& part) {
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(std::string(s.message()).find(part), std::string::npos)
      << s.message();
}
// Frame buffers of 8 x 32 f32 (1 KiB) each.
VerifyOptions Options(int threads = 2) {
  VerifyOptions options;
  options.num_threads = threads;
  options.frame_bytes = [](const BufferRef&) -> int64_t { return 8 * 32 * 4; };
  return options;
}

// A row-wise nest: per row of x, its max into a per-thread slot, then
// y's row = x's row scaled by it; and one BRGEMM per row block.
struct GoodNest {
  Nest nest{"good_0"};
  int x, y, c, stats;
  GoodNest() {
    x = nest.AddFrameBuffer(BufferRef::Input(0), "x", "f32[8, 32]");
    y = nest.AddFrameBuffer(BufferRef::Output(0), "y", "f32[8, 32]");
    c = nest.AddFrameBuffer(BufferRef::Arena(0), "c", "f32[8, 32]");
    stats = nest.AddPerThread(64, "stats", "row max");
    microkernels::BrgemmDesc d;
    d.m = 4;
    d.n = 32;
    d.k = 32;
    d.ldc = 32;
    nest.AddKernel(d, nullptr);
  }
  void Build(int64_t rows = 8) {
    NestBuilder nb(nest);
    nb.For("row", 0, rows, true, [&](Expr row) {
      RowReduce max;
      max.op = RowReduce::Op::kMax;
      max.src = View{x, row * 32, 4};
      max.len = 32;
      max.acc = View{stats, 0, 4};
      nb.Append(Stmt{max});
      RowScale scale;
      scale.src = View{x, row * 32, 4};
      scale.dst = View{y, row * 32, 4};
      scale.len = 32;
      scale.factor = View{stats, 0, 4};
      scale.divide = true;
      nb.Append(Stmt{scale});
    });
    nb.For("block", 0, 2, true, [&](Expr block) {
      Brgemm call;
      call.kernel = 0;
      call.a = View{x, block * 128, 4};
      call.b = View{y, 0, 4};
      call.c = View{c, block * 128, 4};
      nb.Append(Stmt{call});
    });
  }
};

TEST(VerifyNestTest, AcceptsAGoodNest) {
  GoodNest g;
  g.Build();
  EXPECT_TRUE(VerifyNest(g.nest, Options()).ok());
  EXPECT_TRUE(VerifyNest(g.nest, Options(1)).ok());
  EXPECT_TRUE(VerifyNest(g.nest, Options(7)).ok());
}

TEST(VerifyNestTest, RejectsAViewPastItsBuffer) {
  GoodNest g;
  g.Build(/*rows=*/9);  // row 8 starts at element 256, past the 1 KiB
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "nest @good_0: reduce (src %x[%row * 32])");
  ExpectError(s, "%row = 8");
  ExpectError(s, "outside the buffer's 1024 bytes");
}

TEST(VerifyNestTest, RejectsARowPastAPerThreadSlice) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("i", 0, 4, true, [&](Expr) {
    nb.Append(Stmt{Fill{View{g.stats, 8, 4}, 16, 0.0f}});  // 24 floats > 64 B
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "fill (dst %stats[8])");
  ExpectError(s, "elements [8, 24)");
}

TEST(VerifyNestTest, RejectsABrgemmTilePastC) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("block", 0, 2, true, [&](Expr block) {
    Brgemm call;
    call.kernel = 0;
    call.a = View{g.x, 0, 4};
    call.b = View{g.y, 0, 4};
    call.c = View{g.c, block * 128 + 160, 4};  // 4 rows of 32 from 288
    nb.Append(Stmt{call});
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "brgemm (c %c[%block * 128 + 160])");
}

TEST(VerifyNestTest, RejectsAnUndeclaredBuffer) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("row", 0, 8, true, [&](Expr row) {
    nb.Append(Stmt{Fill{View{9, row, 4}, 1, 0.0f}});
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s,
              "nest @good_0: fill (dst buffer #9[%row]) in "
              "parallel.for %row: names a buffer the nest does not "
              "declare");
}

TEST(VerifyNestTest, RejectsAProgramOfUndeclaredFrameBuffers) {
  GoodNest g;
  RowProgram program;
  program.shape = {8, 32};
  program.out_buffer = 7;
  g.nest.AddProgram(program, "body");
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "program body");
  ExpectError(s, "writes frame buffer #7");
}

TEST(VerifyNestTest, RejectsASharedWriteNotIndexedByTheParallelLoop) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("row", 0, 8, true, [&](Expr) {
    nb.For("col", 0, 4, false, [&](Expr col) {
      nb.Append(Stmt{Fill{View{g.y, col * 8, 4}, 8, 0.0f}});
    });
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s,
              "fill (dst %y[%col * 8]) in parallel.for %row > for "
              "%col: writes %y, shared by the threads, at an index "
              "that does not depend on the parallel loop's "
              "variable");
}

TEST(VerifyNestTest, RejectsASharedWriteOutsideParallelLoops) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.Append(Stmt{Fill{View{g.y, 0, 4}, 8, 0.0f}});
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "at the top level: writes %y");
}

TEST(VerifyNestTest, AcceptsWritesThroughLetsOfTheLoopVariableAndScratch) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.Append(Stmt{Fill{View{g.stats, 0, 4}, 16, 0.0f}});  // the thread's own
  nb.For("item", 0, 16, true, [&](Expr item) {
    Expr row = nb.Let("r", item / 2);
    nb.For("half", 0, 1, false, [&](Expr half) {
      nb.Append(Stmt{
          Fill{View{g.y, row * 32 + (item % 2) * 16 + half, 4}, 16, 0.0f}});
    });
  });
  EXPECT_TRUE(VerifyNest(g.nest, Options()).ok());
}

TEST(VerifyNestTest, RejectsAKernelOutsideTheTable) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("block", 0, 2, true, [&](Expr block) {
    Brgemm call;
    call.kernel = Select(Lt(block, 1), 0, 3);
    call.a = View{g.x, 0, 4};
    call.b = View{g.y, 0, 4};
    call.c = View{g.c, block * 128, 4};
    nb.Append(Stmt{call});
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s,
              "brgemm k[select((%block < 1), 0, 3)] in parallel.for "
              "%block: calls kernel k3, not in the kernel table (1 "
              "entries)");
}

TEST(VerifyNestTest, RejectsAComputedKernelOutsideTheTable) {
  GoodNest g;
  NestBuilder nb(g.nest);
  nb.For("block", 0, 2, true, [&](Expr block) {
    Brgemm call;
    call.kernel = block;
    call.a = View{g.x, 0, 4};
    call.b = View{g.y, 0, 4};
    call.c = View{g.c, block * 128, 4};
    nb.Append(Stmt{call});
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "%block = 1");
  ExpectError(s, "calls kernel k1");
}

TEST(VerifyNestTest, BoundsAPendingFrameBufferByItsDeclaredBytes) {
  // Arena scratch Compile has yet to place: its 128 declared bytes bound
  // it, not frame_bytes (1 KiB).
  GoodNest g;
  const int scratch = g.nest.AddArenaScratch(128, "t", "f32[32] scratch");
  NestBuilder nb(g.nest);
  nb.For("i", 0, 2, true, [&](Expr i) {
    nb.Append(Stmt{Fill{View{scratch, i * 16, 4}, 16, 0.0f}});
  });
  EXPECT_TRUE(VerifyNest(g.nest, Options()).ok());
  nb.For("j", 0, 3, true, [&](Expr j) {
    nb.Append(Stmt{Fill{View{scratch, j * 16, 4}, 16, 0.0f}});
  });
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "fill (dst %t[%j * 16])");
  ExpectError(s, "outside the buffer's 128 bytes");
}

TEST(VerifyNestTest, RejectsAPackWritingAnUndeclaredBuffer) {
  GoodNest g;
  Pack pack;
  pack.text = "pack %w -> %w_packed";
  pack.dst = g.stats;  // a per-thread slice, not a frame buffer
  g.nest.AddPack(pack);
  absl::Status s = VerifyNest(g.nest, Options());
  ExpectError(s, "pack \"pack %w -> %w_packed\"");
  ExpectError(s, "writes buffer #3, not a frame buffer the nest declares");
}

TEST(VerifyNestTest, AcceptsAPackWritingAConstantSlot) {
  GoodNest g;
  Pack pack;
  pack.text = "pack %w -> %w_packed";
  pack.init = true;
  pack.dst = g.nest.AddConstantSlot(256, "w_packed", "packed once");
  g.nest.AddPack(pack);
  EXPECT_TRUE(VerifyNest(g.nest, Options()).ok());
}

}  // namespace
}  // namespace tile
}  // namespace codegen
}  // namespace hgc
