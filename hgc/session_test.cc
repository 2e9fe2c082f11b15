// Tests of hgc/session.h: the pipeline checked before a module is loaded,
// the stages in order, the entry graph's selection, and CompileEntry on a
// copy of the caller's module.
#include "hgc/session.h"

#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "hgc/test_graphs.h"
#include "ir/printer.h"

namespace hgc {
namespace {

TEST(SessionTest, CreateRejectsBadPipelines) {
  SessionOptions options;
  options.pipeline = "no-such-pass";
  EXPECT_FALSE(CompileSession::Create(options).ok());
  options.pipeline = "dce";
  options.pass_options.stop_after = "fusion";  // not in the pipeline
  absl::StatusOr<CompileSession> session = CompileSession::Create(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SessionTest, EmptyPipelineHasNoPasses) {
  SessionOptions options;
  options.pipeline = "";
  absl::StatusOr<CompileSession> session = CompileSession::Create(options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE(session->has_passes());
  Module module;
  BuildMlp(module, "mlp", 4, {8, 16});
  const std::string before = PrintModule(module);
  ASSERT_TRUE(session->Load(std::move(module), "").ok());
  ASSERT_TRUE(session->RunPasses().ok());
  EXPECT_EQ(PrintModule(session->module()), before);
  EXPECT_TRUE(session->pass_records().empty());
}

TEST(SessionTest, StagesRunThePassesThenCompile) {
  SessionOptions options;
  std::ostringstream dumps;
  options.pass_options.print_ir_after.insert("fusion");
  options.pass_options.time_passes = true;
  options.pass_options.dump_stream = &dumps;
  absl::StatusOr<CompileSession> session = CompileSession::Create(options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE(session->has_passes());
  Module module;
  BuildMlp(module, "first", 4, {8, 16});
  BuildMlp(module, "second", 4, {8, 16, 8});
  ASSERT_TRUE(session->Load(std::move(module), "@second").ok());
  EXPECT_EQ(session->entry().name(), "second");
  ASSERT_TRUE(session->RunPasses().ok());
  EXPECT_FALSE(session->pass_records().empty());
  EXPECT_TRUE(absl::StrContains(dumps.str(), "IR Dump After"));
  int fusions = 0;
  for (const auto& op : session->entry().ops()) {
    if (op->kind() == "fusion") ++fusions;
  }
  EXPECT_GT(fusions, 0);
  MemoryPlan plan = session->PlanMemory();
  EXPECT_GT(plan.estimate.total(), 0);
  EXPECT_LE(plan.buffers.arena_size, plan.buffers.sum_of_intermediates);
  EXPECT_TRUE(session->CheckMemoryBudget().ok());

  CompileStats stats;
  CompileOptions compile_options = session->options().compile_options;
  compile_options.stats = &stats;
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      session->Compile(compile_options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_GT(stats.native_steps + stats.fallback_steps, 0);
}

TEST(SessionTest, SelectEntryGraphNamesTheGraphs) {
  Module module;
  BuildMlp(module, "a", 2, {4, 4});
  BuildMlp(module, "b", 2, {4, 4});
  absl::StatusOr<const Graph*> first = SelectEntryGraph(module, "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->name(), "a");
  absl::StatusOr<const Graph*> missing = SelectEntryGraph(module, "c");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "no graph named @c (the module has: @a, @b)");
  missing = SelectEntryGraph(module, "@c", "m.graph");
  EXPECT_EQ(missing.status().message(),
            "no graph named @c in m.graph (it has: @a, @b)");
  EXPECT_FALSE(SelectEntryGraph(Module(), "").ok());
}

TEST(SessionTest, CompileEntryLeavesTheModuleAsItWas) {
  Module module;
  BuildMlp(module, "mlp", 4, {8, 16, 8});
  const std::string before = PrintModule(module);
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      CompileEntry(module, "mlp", SessionOptions());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(PrintModule(module), before);
}

}  // namespace
}  // namespace hgc
