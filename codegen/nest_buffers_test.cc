#include "codegen/nest_buffers.h"

#include <utility>

#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "gtest/gtest.h"
#include "ir/tensor.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {
namespace {

using tile::Buffer;

// What a nest declared is placed only by PlaceNestBuffers: pending frame
// buffers in the order declared (arena scratch 64-byte aligned at the
// arena's end, slots and literals appended to the constants), then the
// per-thread slices after them.
TEST(PlaceNestBuffersTest, PlacesDeclaredBuffersInOrder) {
  Program program;
  program.constants.emplace_back();  // a slot placed before the nest
  LowerState state;
  state.program = &program;
  state.arena_bytes = 100;
  tile::Nest nest("n");
  const int x = nest.AddFrameBuffer(BufferRef::Input(0), "x", "f32[4]");
  const int per_thread = nest.AddPerThread(32, "s", "score tile");
  const int scratch = nest.AddArenaScratch(100, "c", "C scratch");
  const int slot = nest.AddConstantSlot(48, "w_packed", "packed once");
  Tensor value = *Tensor::Create(TensorType(DType::kF32, {3}));
  value.mutable_data<float>()[2] = 7.0f;
  const int literal = nest.AddLiteral(std::move(value), "k", "f32[3]");
  const int scratch2 = nest.AddArenaScratch(8, "t", "transposed per run");
  EXPECT_EQ(state.arena_bytes, 100);  // declaring changes nothing
  EXPECT_EQ(program.constants.size(), 1u);

  ASSERT_TRUE(PlaceNestBuffers(state, nest, /*num_threads=*/2).ok());
  auto ref = [&](int buffer) {
    EXPECT_EQ(nest.buffers()[buffer].pending, Buffer::Pending::kPlaced);
    return nest.frame_refs()[nest.FrameIndex(buffer)];
  };
  EXPECT_EQ(ref(x).kind, BufferRef::Kind::kInput);
  EXPECT_EQ(ref(scratch).kind, BufferRef::Kind::kArena);
  EXPECT_EQ(ref(scratch).offset, 128);
  EXPECT_EQ(ref(scratch2).offset, 256);
  EXPECT_EQ(ref(slot).kind, BufferRef::Kind::kConstant);
  EXPECT_EQ(ref(slot).index, 1);
  EXPECT_EQ(ref(literal).index, 2);
  ASSERT_EQ(program.constants.size(), 3u);
  EXPECT_EQ(program.constants[1].size_in_bytes(), 48);
  EXPECT_EQ(program.constants[2].data<float>()[2], 7.0f);
  // Two threads: 64-byte slices kThreadSliceGap apart beyond their size.
  EXPECT_EQ(ref(per_thread).offset, 320);
  EXPECT_EQ(nest.buffers()[per_thread].thread_stride, 64 + kThreadSliceGap);
  EXPECT_EQ(state.arena_bytes, 320 + 2 * (64 + kThreadSliceGap));
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
