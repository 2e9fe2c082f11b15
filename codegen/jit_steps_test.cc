// The graph's list of objects in the object cache (jit_steps.h), through
// Compile. HGC_CACHE_DIR is read once per process, so this test sets it
// before its first compile and keeps to one directory.
#include "codegen/jit_steps.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/compile.h"
#include "codegen/llvm/object_cache.h"
#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "support/source_location.h"
#include "tensor_util/random_fill.h"

namespace hgc {
namespace {

constexpr char kBlock[] = R"(
graph @block(%x: f32[16, 64], %w: f32[64, 64] const, %b: f32[64] const)
    -> f32[16, 64] {
  %h = matmul(%x, %w)
  %hb = add(%h, %b)
  %a = gelu(%hb)
  %s = softmax(%a) {axis = -1}
  return %s
}
)";

// Another graph: none of @block's step functions.
constexpr char kOther[] = R"(
graph @other(%x: f32[16, 64]) -> f32[16, 64] {
  %y = relu(%x)
  return %y
}
)";

struct Compiled {
  std::unique_ptr<Executable> executable;
  CompileStats stats;
  std::vector<Tensor> outputs;
};

// Parses `text`, runs O2, compiles it on `threads` threads and runs it on
// seeded inputs.
Compiled CompileAndRun(const char* text, int threads = 1) {
  Compiled c;
  SourceManager sm;
  absl::StatusOr<Module> module = ParseModule(text, "test.graph", sm);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return c;
  EXPECT_TRUE(RunPipeline("O2", GlobalPassRegistry(), *module).ok());
  const Graph& graph = *module->graphs().front();
  CompileOptions options;
  options.num_threads = threads;
  options.stats = &c.stats;
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      Compile(*module, graph, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return c;
  c.executable = *std::move(exe);
  std::vector<Tensor> inputs;
  for (int i = 0; i < graph.num_params(); ++i) {
    inputs.push_back(*RandomTensor(graph.param(i)->type(), 3, i));
  }
  EXPECT_TRUE(c.executable->SetConstants(inputs).ok());
  absl::StatusOr<std::vector<Tensor>> out = c.executable->Execute(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) c.outputs = *std::move(out);
  return c;
}

bool SameBits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size() || a.empty()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type() != b[i].type() ||
        std::memcmp(a[i].raw(), b[i].raw(), a[i].size_in_bytes()) != 0) {
      return false;
    }
  }
  return true;
}

// The keys of the lists in `dir`.
std::vector<std::string> Lists(const std::string& dir) {
  std::vector<std::string> keys;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return keys;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (absl::EndsWith(name, ".objs")) {
      keys.push_back(name.substr(0, name.size() - 5));
    }
  }
  closedir(d);
  return keys;
}

TEST(CachedGraphTest, HitEmitsNoIrMissesAreCompiledAndRewritten) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : ".", "/cache");
  ASSERT_EQ(system(absl::StrCat("rm -rf '", dir, "'").c_str()), 0);
  ASSERT_EQ(setenv("HGC_CACHE_DIR", dir.c_str(), 1), 0);

  const Compiled cold = CompileAndRun(kBlock);
  EXPECT_FALSE(cold.stats.graph_from_cache);
  EXPECT_GT(cold.stats.objects_compiled, 0);
  ASSERT_EQ(Lists(dir).size(), 1u);
  const std::string block_list = Lists(dir).front();

  // The list and every object it names: nothing emitted or compiled.
  const Compiled warm = CompileAndRun(kBlock);
  EXPECT_TRUE(warm.stats.graph_from_cache);
  EXPECT_EQ(warm.stats.objects_compiled, 0);
  EXPECT_EQ(warm.stats.llvm_modules, cold.stats.llvm_modules);
  EXPECT_EQ(warm.stats.objects_from_cache, cold.stats.llvm_modules);
  EXPECT_EQ(warm.stats.native_steps, cold.stats.native_steps);
  EXPECT_TRUE(SameBits(warm.outputs, cold.outputs));

  // Other options: another list.
  const Compiled two_threads = CompileAndRun(kBlock, 2);
  EXPECT_FALSE(two_threads.stats.graph_from_cache);
  EXPECT_EQ(Lists(dir).size(), 2u);

  // A corrupt list misses (the objects hit) and is rewritten.
  const std::string path = absl::StrCat(dir, "/", block_list, ".objs");
  std::ofstream(path, std::ios::app) << "x";
  const Compiled corrupt = CompileAndRun(kBlock);
  EXPECT_FALSE(corrupt.stats.graph_from_cache);
  EXPECT_EQ(corrupt.stats.objects_compiled, 0);
  EXPECT_TRUE(CompileAndRun(kBlock).stats.graph_from_cache);

  // A list whose objects are another graph's is a miss: the graph is
  // compiled whole, and its list rewritten.
  const std::vector<std::string> before = Lists(dir);
  CompileAndRun(kOther);
  std::string other_list;
  for (const std::string& key : Lists(dir)) {
    if (std::find(before.begin(), before.end(), key) == before.end()) {
      other_list = key;
    }
  }
  ASSERT_FALSE(other_list.empty());
  absl::StatusOr<std::unique_ptr<codegen::ObjectCache>> cache =
      codegen::ObjectCache::Open(dir);
  ASSERT_TRUE(cache.ok());
  std::optional<codegen::ObjectCache::ObjectList> block =
      (*cache)->LoadObjectList(block_list);
  std::optional<codegen::ObjectCache::ObjectList> other =
      (*cache)->LoadObjectList(other_list);
  ASSERT_TRUE(block.has_value() && other.has_value());
  EXPECT_NE(block->check, other->check);
  // Whether the list says so (its check) or not (the objects lack the
  // step functions).
  for (const std::string& check : {other->check, block->check}) {
    SCOPED_TRACE(check);
    ASSERT_TRUE(
        (*cache)->StoreObjectList(block_list, {check, other->objects}).ok());
    const Compiled mismatch = CompileAndRun(kBlock);
    EXPECT_FALSE(mismatch.stats.graph_from_cache);
    EXPECT_TRUE(SameBits(mismatch.outputs, cold.outputs));
    EXPECT_TRUE(CompileAndRun(kBlock).stats.graph_from_cache);
  }
}

}  // namespace
}  // namespace hgc
