#include "hgc/compile_cache.h"

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "hgc/hgc.h"

namespace hgc {
namespace {

// A graph of `rows` rows: each test uses its own, so that the process's
// cache has not seen it.
std::string MlpText(int rows) {
  return absl::StrCat(R"(
graph @mlp(%x: f32[)", rows, R"(, 13], %w0: f32[13, 64] const,
           %b0: f32[64] const) -> f32[)", rows, R"(, 64] {
  %h = matmul(%x, %w0)
  %y = add(%h, %b0)
  %z = relu(%y)
  return %z
}
)");
}

// Deterministic, distinct per seed.
std::vector<Tensor> Params(const CompiledGraph& graph, float seed) {
  std::vector<Tensor> params;
  for (const TensorType& type : graph.param_types()) {
    Tensor t = *Tensor::Create(type);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      t.mutable_data<float>()[i] = seed * static_cast<float>(i % 7 - 3);
    }
    params.push_back(t);
  }
  return params;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() &&
         std::memcmp(a.raw(), b.raw(), a.size_in_bytes()) == 0;
}

TEST(NormalizeValueNamesTest, NumbersNamesByFirstUseOutsideStrings) {
  EXPECT_EQ(NormalizeValueNames(
                "%x = add(%x, %in_1) {s = \"%x \\\" %y\"}\n%7 = f(%-2, %in_1)"),
            "%0 = add(%0, %1) {s = \"%x \\\" %y\"}\n%2 = f(%3, %1)");
}

TEST(IsAllZeroTest, SeesAnyNonZeroByteWhetherPagesWereTouchedOrNot) {
  for (const int64_t elements : {int64_t{100}, int64_t{3} << 20}) {
    Tensor t = *Tensor::Create(TensorType{DType::kU8, {elements}});
    EXPECT_TRUE(IsAllZero(t));
    // Read, then written back as zero: present, still zero.
    volatile uint8_t* bytes = t.mutable_raw();
    bytes[elements / 2] = bytes[elements / 3];
    EXPECT_TRUE(IsAllZero(t));
    for (const int64_t at : {int64_t{0}, elements / 2 + 1, elements - 1}) {
      t.mutable_raw()[at] = 1;
      EXPECT_FALSE(IsAllZero(t)) << elements << " bytes, byte " << at;
      t.mutable_raw()[at] = 0;
      EXPECT_TRUE(IsAllZero(t));
    }
  }
}

TEST(CompileCacheTest, RepeatCompileIsAHitWithItsOwnConstants) {
  const CompileCache::Counters before = CompileCache::Global().counters();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> first =
      CompileText(MlpText(5), Options());
  ASSERT_TRUE(first.ok()) << first.status();
  // Other value names, other spacing: the same graph.
  const std::string renamed = absl::StrReplaceAll(
      MlpText(5), {{"%h", "%hidden"}, {"%z", "%out"}, {"  ", "    "}});
  absl::StatusOr<std::unique_ptr<CompiledGraph>> second =
      CompileText(renamed, Options());
  ASSERT_TRUE(second.ok()) << second.status();
  const CompileCache::Counters after = CompileCache::Global().counters();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 1);

  const std::vector<Tensor> params1 = Params(**first, 1.0f);
  const std::vector<Tensor> params2 = Params(**second, 2.0f);
  ASSERT_TRUE((*first)->SetConstants(params1).ok());
  absl::StatusOr<std::vector<Tensor>> out1 = (*first)->Execute(params1);
  ASSERT_TRUE(out1.ok()) << out1.status();
  // The second's constants are its own: binding them leaves the first's.
  ASSERT_TRUE((*second)->SetConstants(params2).ok());
  absl::StatusOr<std::vector<Tensor>> out2 = (*second)->Execute(params2);
  ASSERT_TRUE(out2.ok()) << out2.status();
  EXPECT_FALSE(SameBits((*out1)[0], (*out2)[0]));
  absl::StatusOr<std::vector<Tensor>> out1_again = (*first)->Execute(params1);
  ASSERT_TRUE(out1_again.ok());
  EXPECT_TRUE(SameBits((*out1)[0], (*out1_again)[0]));
  // And the same constants give the same bits.
  ASSERT_TRUE((*second)->SetConstants(params1).ok());
  absl::StatusOr<std::vector<Tensor>> out2_as_1 = (*second)->Execute(params1);
  ASSERT_TRUE(out2_as_1.ok());
  EXPECT_TRUE(SameBits((*out1)[0], (*out2_as_1)[0]));
  EXPECT_EQ((*second)->param_names()[0], "x");
}

TEST(CompileCacheTest, OtherThreadsPipelineOrGraphMiss) {
  const std::string text = MlpText(6);
  Options options;
  ASSERT_TRUE(CompileText(text, options).ok());
  const CompileCache::Counters before = CompileCache::Global().counters();
  Options two_threads;
  two_threads.num_threads = 2;
  Options o0;
  o0.pipeline = "O0";
  for (const Options& other : {two_threads, o0}) {
    absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
        CompileText(text, other);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
  }
  EXPECT_TRUE(CompileText(MlpText(7), options).ok());
  const CompileCache::Counters after = CompileCache::Global().counters();
  EXPECT_EQ(after.misses - before.misses, 3);
  EXPECT_EQ(after.hits - before.hits, 0);
  // The two-thread compile is cached as such.
  absl::StatusOr<std::unique_ptr<CompiledGraph>> again =
      CompileText(text, two_threads);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->num_threads(), 2);
  EXPECT_EQ(CompileCache::Global().counters().hits - after.hits, 1);
}

TEST(CompileCacheTest, ConcurrentCompilesOfOneGraphCompileOnce) {
  const std::string text = MlpText(9);
  const CompileCache::Counters before = CompileCache::Global().counters();
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<std::unique_ptr<CompiledGraph>>> results;
  for (int t = 0; t < kThreads; ++t) {
    results.emplace_back(absl::UnknownError("not run"));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { results[t] = CompileText(text, Options()); });
  }
  for (std::thread& t : threads) t.join();
  const CompileCache::Counters after = CompileCache::Global().counters();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, kThreads - 1);
  std::vector<Tensor> reference;
  for (auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<Tensor> params = Params(**result, 0.5f);
    ASSERT_TRUE((*result)->SetConstants(params).ok());
    absl::StatusOr<std::vector<Tensor>> out = (*result)->Execute(params);
    ASSERT_TRUE(out.ok());
    if (reference.empty()) reference = *out;
    EXPECT_TRUE(SameBits(reference[0], (*out)[0]));
  }
}

// An executable of an empty program with one constant of `bytes` bytes.
absl::StatusOr<std::unique_ptr<Executable>> Empty(int64_t bytes) {
  Program program;
  program.constants.push_back(
      *Tensor::Create(TensorType(DType::kU8, {bytes})));
  return std::make_unique<Executable>(std::move(program), nullptr, 1);
}

TEST(CompileCacheTest, KeepsTheMostRecentlyUsedWithinTheLimits) {
  CompileCache::Limits limits;
  limits.max_entries = 2;
  limits.max_bytes = 1000;
  CompileCache cache(limits);
  int compiles = 0;
  auto get = [&](const std::string& key, int64_t bytes) {
    absl::StatusOr<std::unique_ptr<Executable>> exe =
        cache.GetOrCompile(key, 1, Threading::kOwnPool, [&] {
          ++compiles;
          return Empty(bytes);
        });
    EXPECT_TRUE(exe.ok());
  };
  get("a", 100);
  get("b", 100);
  get("a", 100);  // hit; "b" is now the least recent
  get("c", 100);  // evicts "b"
  EXPECT_EQ(compiles, 3);
  get("a", 100);
  EXPECT_EQ(compiles, 3);
  get("b", 100);
  EXPECT_EQ(compiles, 4);
  EXPECT_EQ(cache.counters().evictions, 2);
  EXPECT_EQ(cache.counters().entries, 2);
  // Too big to keep: compiled every time.
  get("big", 2000);
  get("big", 2000);
  EXPECT_EQ(compiles, 6);
  // Bytes count too: two of 600 do not fit together.
  get("d", 600);
  get("e", 600);
  EXPECT_EQ(cache.counters().entries, 1);
  EXPECT_LE(cache.counters().bytes, 1000);
}

TEST(CompileCacheTest, FailedCompilesAreNotCached) {
  CompileCache cache(CompileCache::Limits{});
  int compiles = 0;
  const CompileCache::CompileFn failing =
      [&]() -> absl::StatusOr<std::unique_ptr<Executable>> {
    ++compiles;
    return absl::UnimplementedError("no");
  };
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<Executable>> exe =
        cache.GetOrCompile("k", 1, Threading::kOwnPool, failing);
    EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
  }
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(cache.counters().entries, 0);
}

TEST(CompileCacheTest, DisabledCacheAlwaysCompiles) {
  CompileCache::Limits limits;
  limits.max_entries = 0;
  CompileCache cache(limits);
  EXPECT_FALSE(cache.enabled());
  int compiles = 0;
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(cache
                    .GetOrCompile("k", 1, Threading::kOwnPool,
                                  [&] {
                                    ++compiles;
                                    return Empty(1);
                                  })
                    .ok());
  }
  EXPECT_EQ(compiles, 2);
}

}  // namespace
}  // namespace hgc
