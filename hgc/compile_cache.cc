#include "hgc/compile_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "support/aligned_buffer.h"
#include "support/cpu_features.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Compares [data, data + bytes) with zero.
bool CompareWithZero(const uint8_t* data, int64_t bytes) {
  static constexpr uint8_t kZeros[4096] = {};
  for (int64_t left = bytes; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(left, 4096));
    if (std::memcmp(data, kZeros, n) != 0) return false;
    data += n;
    left -= static_cast<int64_t>(n);
  }
  return true;
}

// pagemap entries: bit 63, the page is present; bit 62, it is swapped out.
constexpr uint64_t kPagePresentOrSwapped = uint64_t{3} << 62;

}  // namespace

bool IsAllZero(const Tensor& tensor) {
  const uint8_t* data = tensor.raw();
  const int64_t bytes = tensor.size_in_bytes();
  // Small buffers live on the heap, among pages already touched.
  if (bytes < kLazyZeroThreshold) return CompareWithZero(data, bytes);
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CompareWithZero(data, bytes);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + static_cast<uintptr_t>(bytes);
  const uintptr_t last = (end - 1) / page;
  bool zero = true;
  uint64_t entries[512];
  for (uintptr_t p = begin / page; zero && p <= last;) {
    const uintptr_t want = std::min<uintptr_t>(512, last + 1 - p);
    const ssize_t got = pread(fd, entries, want * sizeof(uint64_t),
                              static_cast<off_t>(p * sizeof(uint64_t)));
    if (got != static_cast<ssize_t>(want * sizeof(uint64_t))) {
      const uintptr_t from = std::max(begin, p * page);
      zero = CompareWithZero(reinterpret_cast<const uint8_t*>(from),
                             static_cast<int64_t>(end - from));
      break;
    }
    for (uintptr_t i = 0; zero && i < want; ++i, ++p) {
      // A page neither present nor swapped out was never written.
      if ((entries[i] & kPagePresentOrSwapped) == 0) continue;
      const uintptr_t from = std::max(begin, p * page);
      const uintptr_t to = std::min(end, (p + 1) * page);
      zero = CompareWithZero(reinterpret_cast<const uint8_t*>(from),
                             static_cast<int64_t>(to - from));
    }
  }
  close(fd);
  return zero;
}

std::string NormalizeValueNames(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  absl::flat_hash_map<absl::string_view, int> numbers;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c != '%') {
      out += c;
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && IsNameChar(text[end])) ++end;
    const absl::string_view name = text.substr(i + 1, end - i - 1);
    const int number =
        numbers.emplace(name, static_cast<int>(numbers.size())).first->second;
    absl::StrAppend(&out, "%", number);
    i = end - 1;
  }
  return out;
}

std::string CompileCacheKey(const Module& module,
                            const CompileCacheKeyOptions& options) {
  // Fields end in NUL, which the printed module never holds.
  const absl::string_view end_of_field("\0", 1);
  return absl::StrCat(
      NormalizeValueNames(PrintModule(module)), end_of_field, options.entry,
      end_of_field, options.pipeline, end_of_field, options.num_threads, " ",
      static_cast<int>(options.threading), " ", IsaName(MaxIsa()));
}

// A compiled program as the cache keeps it: constant slots of const
// parameters dropped (their types kept), those of the init steps copied.
struct CompileCache::Snapshot {
  Program program;
  std::vector<bool> param_slot;
  std::vector<TensorType> slot_types;
  std::vector<bool> init_slot;
  // Init slots holding only zeros (the init steps' results, as compiled):
  // allocated afresh, as zero, which costs nothing until written.
  std::vector<bool> zero_slot;
  std::shared_ptr<void> code_owner;
  int64_t bytes = 0;  // of the constants the snapshot holds

  static std::shared_ptr<const Snapshot> Of(const Executable& executable) {
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->program = executable.program();
    snapshot->code_owner = executable.code_owner();
    std::vector<Tensor>& constants = snapshot->program.constants;
    snapshot->param_slot.assign(constants.size(), false);
    snapshot->init_slot.assign(constants.size(), false);
    snapshot->zero_slot.assign(constants.size(), false);
    for (int64_t slot : snapshot->program.param_constant_slot) {
      if (slot >= 0) snapshot->param_slot[slot] = true;
    }
    for (const Step& step : snapshot->program.init_steps) {
      for (const BufferRef& ref : step.buffers) {
        if (ref.kind == BufferRef::Kind::kConstant) {
          snapshot->init_slot[ref.index] = true;
        }
      }
    }
    for (size_t i = 0; i < constants.size(); ++i) {
      snapshot->slot_types.push_back(constants[i].type());
      if (snapshot->param_slot[i]) {
        constants[i] = Tensor();
        continue;
      }
      if (snapshot->init_slot[i] && IsAllZero(constants[i])) {
        snapshot->zero_slot[i] = true;
        constants[i] = Tensor();
        continue;
      }
      // The first executable's SetConstants writes the init steps' slots.
      if (snapshot->init_slot[i]) constants[i] = constants[i].Clone();
      snapshot->bytes += constants[i].size_in_bytes();
    }
    return snapshot;
  }

  absl::StatusOr<std::unique_ptr<Executable>> Instantiate(
      int num_threads, Threading threading) const {
    Program copy = program;
    for (size_t i = 0; i < copy.constants.size(); ++i) {
      if (param_slot[i] || zero_slot[i]) {
        HGC_ASSIGN_OR_RETURN(copy.constants[i], Tensor::Create(slot_types[i]));
      } else if (init_slot[i]) {
        copy.constants[i] = copy.constants[i].Clone();
      }
    }
    return std::make_unique<Executable>(std::move(copy), code_owner,
                                        num_threads, threading);
  }
};

CompileCache& CompileCache::Global() {
  static CompileCache* const cache = [] {
    Limits limits;
    const char* env = std::getenv("HGC_COMPILE_CACHE");
    if (env != nullptr && absl::string_view(env) == "0") limits.max_entries = 0;
    return new CompileCache(limits);
  }();
  return *cache;
}

absl::StatusOr<std::unique_ptr<Executable>> CompileCache::GetOrCompile(
    const std::string& key, int num_threads, Threading threading,
    const CompileFn& compile) {
  if (!enabled()) return compile();
  std::shared_ptr<InFlight> flight;
  std::shared_ptr<const Snapshot> snapshot;
  {
    absl::MutexLock lock(&mu_);
    while (true) {
      if (auto it = entries_.find(key); it != entries_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.lru_position);
        ++counters_.hits;
        snapshot = it->second.snapshot;
        break;
      }
      auto [it, inserted] = in_flight_.try_emplace(key);
      if (inserted) {
        it->second = flight = std::make_shared<InFlight>();
        ++counters_.misses;
        break;
      }
      // Another thread compiles this key: wait, then look again (a failed
      // compile leaves no entry, and this thread compiles in turn).
      ++counters_.waits;
      std::shared_ptr<InFlight> other = it->second;
      mu_.Await(absl::Condition(&other->done));
    }
  }
  if (snapshot != nullptr) return snapshot->Instantiate(num_threads, threading);

  absl::StatusOr<std::unique_ptr<Executable>> compiled = compile();
  std::shared_ptr<const Snapshot> made;
  if (compiled.ok()) made = Snapshot::Of(**compiled);
  absl::MutexLock lock(&mu_);
  if (made != nullptr) Insert(key, std::move(made));
  flight->done = true;
  in_flight_.erase(key);
  return compiled;
}

void CompileCache::Insert(const std::string& key,
                          std::shared_ptr<const Snapshot> snapshot) {
  if (snapshot->bytes > limits_.max_bytes) return;
  counters_.bytes += snapshot->bytes;
  lru_.push_front(key);
  entries_[key] = Entry{std::move(snapshot), lru_.begin()};
  while (static_cast<int64_t>(entries_.size()) > limits_.max_entries ||
         counters_.bytes > limits_.max_bytes) {
    auto oldest = entries_.find(lru_.back());
    counters_.bytes -= oldest->second.snapshot->bytes;
    entries_.erase(oldest);
    lru_.pop_back();
    ++counters_.evictions;
  }
}

CompileCache::Counters CompileCache::counters() const {
  absl::MutexLock lock(&mu_);
  Counters counters = counters_;
  counters.entries = static_cast<int64_t>(entries_.size());
  return counters;
}

void CompileCache::Clear() {
  absl::MutexLock lock(&mu_);
  entries_.clear();
  lru_.clear();
  counters_.bytes = 0;
}

}  // namespace hgc
