// PassManager: verification after each pass, IR dumps, timing, stop-after.
#include "passes/pass_manager.h"

#include <sstream>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "passes/test_util.h"
#include "passes/verify_pass.h"

namespace hgc {
namespace {

using pass_test::Parse;

constexpr char kGraph[] = R"(
graph @g(%x: f32[4]) -> f32[4] {
  %y = relu(%x)
  return %y
}
)";

// A pass that renames nothing and reports a fixed "changed".
class NopPass : public Pass {
 public:
  explicit NopPass(std::string arg = "nop") : arg_(std::move(arg)) {}
  absl::string_view name() const override { return "Nop"; }
  absl::string_view argument() const override { return arg_; }
  absl::string_view description() const override { return "nothing"; }
  absl::StatusOr<bool> Run(Module& module) override {
    ++runs;
    return false;
  }
  int runs = 0;

 private:
  std::string arg_;
};

// A pass that breaks the IR: it makes the graph return a value of the wrong
// type.
class BreakPass : public Pass {
 public:
  absl::string_view name() const override { return "Break"; }
  absl::string_view argument() const override { return "break"; }
  absl::string_view description() const override { return "breaks the IR"; }
  absl::StatusOr<bool> Run(Module& module) override {
    Graph& g = *module.graphs()[0];
    g.SetDeclaredResultTypes({TensorType(DType::kS32, {4})});
    return true;
  }
};

class FailPass : public NopPass {
 public:
  FailPass() : NopPass("fail") {}
  absl::StatusOr<bool> Run(Module& module) override {
    return absl::UnimplementedError("not today");
  }
};

TEST(PassManagerTest, VerifierFailureNamesThePass) {
  Module m = Parse(kGraph);
  PassManager pm;
  pm.AddPass<BreakPass>();
  absl::Status s = pm.Run(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::StartsWith(s.message(), "after break: ")) << s;
}

TEST(PassManagerTest, VerifyEachCanBeTurnedOff) {
  Module m = Parse(kGraph);
  PassManagerOptions options;
  options.verify_each = false;
  PassManager pm(options);
  pm.AddPass<BreakPass>();
  EXPECT_TRUE(pm.Run(m).ok());
}

TEST(PassManagerTest, PassErrorsKeepTheirCodeAndNameThePass) {
  Module m = Parse(kGraph);
  PassManager pm;
  pm.AddPass<FailPass>();
  absl::Status s = pm.Run(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "fail: not today");
}

TEST(PassManagerTest, PrintsIrAfterNamedPassesWithMlirHeaders) {
  Module m = Parse(kGraph);
  std::ostringstream dump;
  PassManagerOptions options;
  options.print_ir_after = {"verify"};
  options.dump_stream = &dump;
  PassManager pm(options);
  pm.AddPass<NopPass>();
  pm.AddPass<VerifyPass>();
  ASSERT_TRUE(pm.Run(m).ok());
  EXPECT_EQ(dump.str(),
            "// -----// IR Dump After Verify (verify) //----- //\n" +
                PrintModule(m) + "\n");
}

TEST(PassManagerTest, PrintAfterAllAndTiming) {
  Module m = Parse(kGraph);
  std::ostringstream dump;
  PassManagerOptions options;
  options.print_ir_after_all = true;
  options.time_passes = true;
  options.dump_stream = &dump;
  PassManager pm(options);
  pm.AddPass<NopPass>();
  pm.AddPass<VerifyPass>();
  ASSERT_TRUE(pm.Run(m).ok());
  std::string text = dump.str();
  EXPECT_NE(text.find("IR Dump After Nop (nop)"), std::string::npos);
  EXPECT_NE(text.find("IR Dump After Verify (verify)"), std::string::npos);
  EXPECT_NE(text.find("Pass execution timing report"), std::string::npos);
  EXPECT_NE(text.find("Nop (nop)\n"), std::string::npos);
  EXPECT_NE(text.find("Verifier\n"), std::string::npos);
  EXPECT_NE(text.find("(100.0%)  Total\n"), std::string::npos);
  ASSERT_EQ(pm.records().size(), 2u);
  EXPECT_EQ(pm.records()[0].argument, "nop");
  EXPECT_FALSE(pm.records()[0].changed);
}

TEST(PassManagerTest, StopAfterStopsAtTheFirstRun) {
  Module m = Parse(kGraph);
  PassManagerOptions options;
  options.stop_after = "verify";
  PassManager pm(options);
  NopPass* first = pm.AddPass<NopPass>();
  pm.AddPass<VerifyPass>();
  NopPass* last = pm.AddPass<NopPass>();
  pm.AddPass<VerifyPass>();
  ASSERT_TRUE(pm.Run(m).ok());
  EXPECT_EQ(first->runs, 1);
  EXPECT_EQ(last->runs, 0);
  EXPECT_EQ(pm.records().size(), 2u);
  EXPECT_EQ(pm.PipelineString(), "nop,verify,nop,verify");
}

TEST(PassManagerTest, NamedPassesMustBeInThePipeline) {
  Module m = Parse(kGraph);
  PassManagerOptions options;
  options.stop_after = "cse";
  PassManager pm(options);
  NopPass* nop = pm.AddPass<NopPass>();
  absl::Status s = pm.Run(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no pass 'cse' in the pipeline 'nop'"),
            std::string::npos)
      << s;
  EXPECT_EQ(nop->runs, 0);
  pm.mutable_options().stop_after = "";
  pm.mutable_options().print_ir_after = {"dce"};
  EXPECT_FALSE(pm.Run(m).ok());
}

TEST(PassManagerTest, EmptyPipelineIsFine) {
  Module m = Parse(kGraph);
  PassManager pm;
  EXPECT_TRUE(pm.Run(m).ok());
  EXPECT_EQ(pm.PipelineString(), "");
}

}  // namespace
}  // namespace hgc
