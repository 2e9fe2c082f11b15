#include "codegen/llvm/object_cache.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/llvm/jit.h"
#include "gtest/gtest.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace hgc {
namespace codegen {
namespace {

// A fresh directory under the test's temporary directory.
std::string NewDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : ".", "/", name);
  EXPECT_EQ(system(absl::StrCat("rm -rf '", dir, "'").c_str()), 0);
  return dir;
}

std::unique_ptr<ObjectCache> OpenCache(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<ObjectCache>> cache = ObjectCache::Open(dir);
  EXPECT_TRUE(cache.ok()) << cache.status();
  return cache.ok() ? std::move(cache).value() : nullptr;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// The names in `dir`, less "." and "..".
std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

TEST(ObjectCacheTest, MissThenStoreThenHit) {
  const std::string dir = NewDir("hit");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(cache->Load("k1").has_value());
  ASSERT_TRUE(cache->Store("k1", std::string("obj\0ect", 7)).ok());
  std::optional<std::string> loaded = cache->Load("k1");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, std::string("obj\0ect", 7));
  EXPECT_FALSE(cache->Load("k2").has_value());
  const ObjectCache::Counters counters = cache->counters();
  EXPECT_EQ(counters.hits, 1);
  EXPECT_EQ(counters.misses, 2);
  EXPECT_EQ(counters.stores, 1);
  EXPECT_EQ(counters.corrupt, 0);
  // The entry and nothing else: the temporary file was renamed.
  EXPECT_EQ(List(dir), std::vector<std::string>{"k1.o"});
}

TEST(ObjectCacheTest, CorruptEntryIsAMissAndIsRewritten) {
  const std::string dir = NewDir("corrupt");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->Store("key", "the object code").ok());
  const std::string path = dir + "/key.o";
  std::string entry = ReadAll(path);
  entry.back() ^= 1;  // one bit of the payload
  WriteAll(path, entry);
  EXPECT_FALSE(cache->Load("key").has_value());
  EXPECT_EQ(cache->counters().corrupt, 1);
  ASSERT_TRUE(cache->Store("key", "the object code").ok());
  EXPECT_EQ(cache->Load("key").value_or(""), "the object code");
}

TEST(ObjectCacheTest, TruncatedOrForeignEntryIsAMiss) {
  const std::string dir = NewDir("truncated");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->Store("key", std::string(1000, 'x')).ok());
  const std::string path = dir + "/key.o";
  const std::string entry = ReadAll(path);
  for (size_t length : {entry.size() - 1, size_t{30}, size_t{10}, size_t{0}}) {
    WriteAll(path, entry.substr(0, length));
    EXPECT_FALSE(cache->Load("key").has_value()) << length;
  }
  WriteAll(path, entry + "more");
  EXPECT_FALSE(cache->Load("key").has_value());
  WriteAll(path, "\x7f" "ELF and whatever follows it in an object file");
  EXPECT_FALSE(cache->Load("key").has_value());
  EXPECT_EQ(cache->counters().corrupt, 6);
  EXPECT_EQ(cache->counters().hits, 0);
}

TEST(ObjectCacheTest, RefusesKeysThatAreNotNames) {
  const std::string dir = NewDir("keys");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  for (const char* key : {"", "../x", "a/b", "a.b"}) {
    EXPECT_EQ(cache->Store(key, "x").code(),
              absl::StatusCode::kInvalidArgument)
        << key;
    EXPECT_FALSE(cache->Load(key).has_value()) << key;
  }
  EXPECT_TRUE(List(dir).empty());
}

TEST(ObjectCacheTest, CreatesAMissingDirectoryForTheUserAlone) {
  const std::string parent = NewDir("created");
  const std::string dir = parent + "/a/b/";
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->dir(), parent + "/a/b");
  struct stat info;
  ASSERT_EQ(stat(cache->dir().c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST(ObjectCacheTest, RefusesADirectoryOthersMayWriteTo) {
  const std::string dir = NewDir("unsafe");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  for (mode_t mode : {0777, 0770, 0702}) {
    ASSERT_EQ(chmod(dir.c_str(), mode), 0);
    absl::StatusOr<std::unique_ptr<ObjectCache>> cache =
        ObjectCache::Open(dir);
    EXPECT_EQ(cache.status().code(), absl::StatusCode::kFailedPrecondition)
        << std::oct << mode;
    EXPECT_NE(cache.status().message().find("others may write"),
              std::string::npos)
        << cache.status();
  }
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  EXPECT_TRUE(ObjectCache::Open(dir).ok());
  // A file is not a directory.
  WriteAll(dir + "/file", "x");
  EXPECT_EQ(ObjectCache::Open(dir + "/file").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Writers racing on one key, with a reader beside them: every load is a
// miss (before the first rename) or one writer's object whole.
TEST(ObjectCacheTest, RacingWritersLeaveWholeEntries) {
  const std::string dir = NewDir("race");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  constexpr int kWriters = 4;
  constexpr int kStores = 100;
  auto object_of = [](int writer) {
    return std::string(1000 + 4096 * writer, static_cast<char>('a' + writer));
  };
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!done) {
      std::optional<std::string> loaded = cache->Load("shared");
      if (!loaded.has_value()) continue;
      const int writer = loaded->empty() ? -1 : (*loaded)[0] - 'a';
      if (writer < 0 || writer >= kWriters || *loaded != object_of(writer)) {
        ++torn;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kStores; ++i) {
        EXPECT_TRUE(cache->Store("shared", object_of(w)).ok());
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(cache->counters().corrupt, 0);
  EXPECT_EQ(cache->counters().stores, kWriters * kStores);
  EXPECT_TRUE(cache->Load("shared").has_value());
  EXPECT_EQ(List(dir), std::vector<std::string>{"shared.o"});
}

// i32 name(i32 x) { return x + addend; } in a module of its own.
ContextAndModule AddModule(const std::string& name, int addend) {
  ContextAndModule m;
  m.context = std::make_unique<llvm::LLVMContext>();
  m.module = std::make_unique<llvm::Module>(name, *m.context);
  llvm::Type* i32 = llvm::Type::getInt32Ty(*m.context);
  llvm::Function* fn =
      llvm::Function::Create(llvm::FunctionType::get(i32, {i32}, false),
                             llvm::Function::ExternalLinkage, name, *m.module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*m.context, "entry", fn));
  b.CreateRet(b.CreateAdd(fn->getArg(0), b.getInt32(addend)));
  return m;
}

TEST(ObjectCacheKeyTest, DependsOnTheModuleTargetAndOptions) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  const IrCompilerOptions options;
  const std::string key =
      ObjectCacheKey(*AddModule("f", 1).module, *spec, options);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(ObjectCacheKey(*AddModule("f", 1).module, *spec, options), key);
  EXPECT_NE(ObjectCacheKey(*AddModule("f", 2).module, *spec, options), key);
  EXPECT_NE(ObjectCacheKey(*AddModule("g", 1).module, *spec, options), key);
  TargetSpec other_cpu = *spec;
  other_cpu.cpu = "x86-64";
  EXPECT_NE(ObjectCacheKey(*AddModule("f", 1).module, other_cpu, options),
            key);
  TargetSpec fewer_features = *spec;
  fewer_features.llvm_features = std::vector<std::string>{"-avx512f"};
  EXPECT_NE(
      ObjectCacheKey(*AddModule("f", 1).module, fewer_features, options), key);
  IrCompilerOptions o0;
  o0.opt_level = 0;
  EXPECT_NE(ObjectCacheKey(*AddModule("f", 1).module, *spec, o0), key);
}

bool SameList(const std::optional<ObjectCache::ObjectList>& a,
              const ObjectCache::ObjectList& b) {
  return a.has_value() && a->check == b.check && a->objects == b.objects;
}

TEST(ObjectListTest, MissThenStoreThenHitBesideTheObjects) {
  const std::string dir = NewDir("list");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(cache->LoadObjectList("graph").has_value());
  const ObjectCache::ObjectList list = {"c0ffee", {"k1", "k2"}};
  ASSERT_TRUE(cache->StoreObjectList("graph", list).ok());
  EXPECT_TRUE(SameList(cache->LoadObjectList("graph"), list));
  EXPECT_FALSE(cache->LoadObjectList("other").has_value());
  // A list is not an object, nor an object a list.
  EXPECT_FALSE(cache->Load("graph").has_value());
  ASSERT_TRUE(cache->Store("k1", "object").ok());
  EXPECT_FALSE(cache->LoadObjectList("k1").has_value());
  std::vector<std::string> names = List(dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"graph.objs", "k1.o"}));
  for (const ObjectCache::ObjectList& bad :
       std::vector<ObjectCache::ObjectList>{{"c0ffee", {"k1", "../k2"}},
                                            {"c0ffee", {}},
                                            {"", {"k1"}},
                                            {"c0 ffee", {"k1"}}}) {
    EXPECT_EQ(cache->StoreObjectList("graph", bad).code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(cache->StoreObjectList("a/b", list).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(SameList(cache->LoadObjectList("graph"), list));
}

TEST(ObjectListTest, CorruptListIsAMissAndIsRewritten) {
  const std::string dir = NewDir("list_corrupt");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  const ObjectCache::ObjectList list = {"c0ffee", {"k1", "k2"}};
  ASSERT_TRUE(cache->StoreObjectList("graph", list).ok());
  const std::string path = dir + "/graph.objs";
  const std::string entry = ReadAll(path);
  std::string flipped = entry;
  flipped.back() ^= 1;
  // Whole entries whose payloads are not lists: a name that is not a key,
  // a check without objects.
  ASSERT_TRUE(cache->Store("bad_name", "c0ffee\nk1\n../k2").ok());
  ASSERT_TRUE(cache->Store("no_objects", "c0ffee").ok());
  for (const std::string& bad :
       {flipped, entry.substr(0, entry.size() - 1), entry + "\nk3",
        ReadAll(dir + "/bad_name.o"), ReadAll(dir + "/no_objects.o"),
        std::string()}) {
    WriteAll(path, bad);
    EXPECT_FALSE(cache->LoadObjectList("graph").has_value()) << bad;
  }
  ASSERT_TRUE(cache->StoreObjectList("graph", list).ok());
  EXPECT_TRUE(SameList(cache->LoadObjectList("graph"), list));
}

TEST(GraphObjectsKeyTest, DependsOnTheDescriptionTargetAndOptions) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  const IrCompilerOptions options;
  const std::string key = GraphObjectsKey("graph @g", *spec, options);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(GraphObjectsKey("graph @g", *spec, options), key);
  EXPECT_NE(GraphObjectsKey("graph @h", *spec, options), key);
  TargetSpec other_cpu = *spec;
  other_cpu.cpu = "x86-64";
  EXPECT_NE(GraphObjectsKey("graph @g", other_cpu, options), key);
  IrCompilerOptions o0;
  o0.opt_level = 0;
  EXPECT_NE(GraphObjectsKey("graph @g", *spec, o0), key);
}

using I32Fn = int32_t (*)(int32_t);

// The keys AddModules reports load, in another JIT, as AddObjects.
TEST(ObjectCacheJitTest, ObjectKeysOfAddModulesLoadIntoAnotherJit) {
  const std::string dir = NewDir("jit_keys");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  JitOptions options;
  options.object_cache = cache.get();
  absl::StatusOr<std::unique_ptr<Jit>> first = Jit::Create(*spec, options);
  ASSERT_TRUE(first.ok()) << first.status();
  std::vector<ContextAndModule> modules;
  modules.push_back(AddModule("plus5", 5));
  modules.push_back(AddModule("plus7", 7));
  ASSERT_TRUE((*first)->AddModules(std::move(modules), 1).ok());
  const std::vector<std::string> keys = (*first)->object_keys();
  ASSERT_EQ(keys.size(), 2u);
  std::vector<std::string> objects;
  for (const std::string& key : keys) {
    objects.push_back(cache->Load(key).value_or(""));
  }
  absl::StatusOr<std::unique_ptr<Jit>> second = Jit::Create(*spec, options);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->AddObjects(objects).ok());
  EXPECT_EQ((*second)->objects_from_cache(), 2);
  EXPECT_EQ((*second)->objects_compiled(), 0);
  absl::StatusOr<I32Fn> plus5 = (*second)->LookupFunction<I32Fn>("plus5");
  absl::StatusOr<I32Fn> plus7 = (*second)->LookupFunction<I32Fn>("plus7");
  ASSERT_TRUE(plus5.ok() && plus7.ok());
  EXPECT_EQ((*plus5)(37) + (*plus7)(0), 49);

  // Without a cache (tests run without HGC_CACHE_DIR) there are no keys.
  absl::StatusOr<std::unique_ptr<Jit>> uncached = Jit::Create(*spec);
  ASSERT_TRUE(uncached.ok());
  ASSERT_EQ((*uncached)->object_cache(), nullptr);
  std::vector<ContextAndModule> more;
  more.push_back(AddModule("plus9", 9));
  ASSERT_TRUE((*uncached)->AddModules(std::move(more), 1).ok());
  EXPECT_TRUE((*uncached)->object_keys().empty());
}

// Two JITs sharing a cache (as two processes share a directory): the
// second compiles nothing, and the cached code computes the same.
TEST(ObjectCacheJitTest, SecondJitLoadsEveryObjectFromTheCache) {
  const std::string dir = NewDir("jit");
  std::unique_ptr<ObjectCache> cache = OpenCache(dir);
  ASSERT_NE(cache, nullptr);
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  JitOptions options;
  options.object_cache = cache.get();
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<std::unique_ptr<Jit>> jit = Jit::Create(*spec, options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ((*jit)->object_cache(), cache.get());
    std::vector<ContextAndModule> modules;
    modules.push_back(AddModule("plus3", 3));
    modules.push_back(AddModule("plus40", 40));
    ASSERT_TRUE((*jit)->AddModules(std::move(modules), 2).ok());
    EXPECT_EQ((*jit)->objects_compiled(), round == 0 ? 2 : 0);
    EXPECT_EQ((*jit)->objects_from_cache(), round == 0 ? 0 : 2);
    absl::StatusOr<I32Fn> plus3 = (*jit)->LookupFunction<I32Fn>("plus3");
    absl::StatusOr<I32Fn> plus40 = (*jit)->LookupFunction<I32Fn>("plus40");
    ASSERT_TRUE(plus3.ok() && plus40.ok());
    EXPECT_EQ((*plus3)(39), 42);
    EXPECT_EQ((*plus40)(2), 42);
  }
  EXPECT_EQ(List(dir).size(), 2u);

  // Dumping kernels optimizes every module, so it bypasses the cache.
  options.dump_dir = NewDir("dump");
  ASSERT_EQ(mkdir(options.dump_dir.c_str(), 0700), 0);
  absl::StatusOr<std::unique_ptr<Jit>> dumping = Jit::Create(*spec, options);
  ASSERT_TRUE(dumping.ok());
  EXPECT_EQ((*dumping)->object_cache(), nullptr);
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
