// The pass registry: pipeline argument -> factory. Filled by one explicit
// list (passes/register_all_passes.cc), never by static initializers, so
// what is registered is greppable and needs no `alwayslink`.
#ifndef HGC_PASSES_PASS_REGISTRY_H_
#define HGC_PASSES_PASS_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "passes/pass.h"

namespace hgc {

class PassRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Pass>()>;

  // Registers P (default-constructible) under P().argument(). Registering
  // an argument twice is a programmer error (HGC_CHECK).
  template <typename P>
  void Register() {
    RegisterFactory([] { return std::unique_ptr<Pass>(new P()); });
  }
  void RegisterFactory(Factory factory);

  // A fresh instance of the pass with this argument, with default options.
  // InvalidArgument "unknown pass 'x'" (with a suggestion when one is close)
  // otherwise.
  absl::StatusOr<std::unique_ptr<Pass>> Create(
      absl::string_view argument) const;

  bool Contains(absl::string_view argument) const {
    return factories_.find(argument) != factories_.end();
  }
  // Registered arguments, sorted.
  std::vector<std::string> Arguments() const;

 private:
  std::map<std::string, Factory, std::less<>> factories_;
};

}  // namespace hgc

#endif  // HGC_PASSES_PASS_REGISTRY_H_
