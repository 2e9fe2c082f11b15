#include "passes/pass_registry.h"

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "passes/register_all_passes.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

TEST(PassRegistryTest, EveryPassIsRegisteredOnceWithConsistentNames) {
  const PassRegistry& registry = GlobalPassRegistry();
  std::vector<std::string> args = registry.Arguments();
  EXPECT_EQ(args,
            (std::vector<std::string>{
                "attention-fusion", "attention-k-scale", "attention-repeat-kv",
                "attention-reshapes", "attention-transposes", "canonicalize",
                "cse", "dce", "fold-constants", "fusion", "mlp-fusion",
                "quantized-matmul", "recognize-softmax", "softmax-last-axis",
                "verify", "widen-f16-matmul"}));
  for (const std::string& arg : args) {
    std::unique_ptr<Pass> pass = *registry.Create(arg);
    EXPECT_EQ(pass->argument(), arg);
    // CamelCase name, kebab-case argument (digits allowed: f16).
    EXPECT_TRUE(absl::ascii_isupper(pass->name()[0])) << pass->name();
    EXPECT_EQ(pass->name().find('-'), absl::string_view::npos);
    for (char c : arg) {
      EXPECT_TRUE(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')
          << arg;
    }
    EXPECT_FALSE(pass->description().empty());
    // Every documented option is accepted with its own current value.
    for (const PassOptionInfo& o : pass->options()) {
      EXPECT_TRUE(pass->SetOption(o.name, o.value).ok())
          << arg << " " << o.name;
    }
    EXPECT_FALSE(pass->SetOption("no-such-option", "1").ok());
  }
}

TEST(PassRegistryTest, UnknownPassesSuggestACloseOne) {
  absl::StatusOr<std::unique_ptr<Pass>> p =
      GlobalPassRegistry().Create("fold-constant");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("did you mean 'fold-constants'"),
            std::string::npos)
      << p.status();
  p = GlobalPassRegistry().Create("zzzzzzzzzz");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message().find("did you mean"), std::string::npos);
}

TEST(PassRegistryTest, OptionValuesAreChecked) {
  std::unique_ptr<Pass> p = *GlobalPassRegistry().Create("fold-constants");
  EXPECT_FALSE(p->SetOption("max-elements", "lots").ok());
  EXPECT_FALSE(p->SetOption("max-elements", "-1").ok());
  EXPECT_TRUE(p->SetOption("max-elements", "16").ok());
  std::unique_ptr<Pass> c = *GlobalPassRegistry().Create("canonicalize");
  EXPECT_TRUE(c->SetOption("exact-reciprocal-only", "true").ok());
  EXPECT_FALSE(c->SetOption("exact-reciprocal-only", "maybe").ok());
}

}  // namespace
}  // namespace hgc
