#include "driver/options.h"

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(OptionsTest, DefaultsToEmittingIr) {
  DriverOptions o = *ParseOptions({"model.graph"});
  EXPECT_EQ(o.input_file, "model.graph");
  EXPECT_TRUE(o.emit_ir);
  EXPECT_FALSE(o.run);
}

TEST(OptionsTest, ParsesRunFlagsInBothSpellings) {
  DriverOptions o = *ParseOptions({"m.graph", "--run", "--seed", "7",
                                   "--threads=2", "--input", "%x=a.npy",
                                   "--input=w=b.npy", "--output-dir", "out",
                                   "--graph=@second"});
  EXPECT_TRUE(o.run);
  EXPECT_FALSE(o.emit_ir);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.threads, 2);
  ASSERT_EQ(o.inputs.size(), 2u);
  EXPECT_EQ(o.inputs[0].first, "x");
  EXPECT_EQ(o.inputs[0].second, "a.npy");
  EXPECT_EQ(o.inputs[1].first, "w");
  EXPECT_EQ(o.output_dir, "out");
  EXPECT_EQ(o.graph, "second");
}

TEST(OptionsTest, CheckImpliesRun) {
  DriverOptions o = *ParseOptions({"m.graph", "--check", "--rtol=0.01"});
  EXPECT_TRUE(o.run);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.rtol, 0.01);
}

TEST(OptionsTest, ParsesBench) {
  DriverOptions o = *ParseOptions({"m.graph", "--bench", "--threads", "4",
                                   "--bench-iters=50"});
  EXPECT_TRUE(o.bench);
  EXPECT_FALSE(o.emit_ir);
  EXPECT_FALSE(o.run);
  EXPECT_EQ(o.threads, 4);
  EXPECT_EQ(o.bench_iters, 50);
  EXPECT_FALSE(ParseOptions({"m.graph", "--bench=1"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--bench", "--bench-iters=0"}).ok());
}

TEST(OptionsTest, ParsesThreading) {
  EXPECT_EQ(ParseOptions({"m.graph", "--run"})->threading, Threading::kOwnPool);
  EXPECT_EQ(ParseOptions({"m.graph", "--run", "--threading=openmp"})->threading,
            Threading::kOpenMP);
  EXPECT_EQ(
      ParseOptions({"m.graph", "--run", "--threading", "pool"})->threading,
      Threading::kOwnPool);
  absl::StatusOr<DriverOptions> bad =
      ParseOptions({"m.graph", "--run", "--threading=tbb"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--threading"), std::string::npos)
      << bad.status();
}

TEST(OptionsTest, RejectsBadFlags) {
  EXPECT_FALSE(ParseOptions({}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--frobnicate"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--seed"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--seed=abc"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--threads=0"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--emit=bc"}).ok());
  EXPECT_TRUE(ParseOptions({"m.graph", "--emit=llvm"})->emit_llvm);
  EXPECT_EQ(ParseOptions({"m.graph", "--emit=asm", "--target-cpu",
                          "skylake-avx512"})
                ->target_cpu,
            "skylake-avx512");
  EXPECT_FALSE(ParseOptions({"m.graph", "--emit=llvm", "--target-cpu="}).ok());
  // It only changes the printed LLVM IR / assembly.
  EXPECT_FALSE(ParseOptions({"m.graph", "--run", "--target-cpu=znver3"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--input=noequals"}).ok());
  EXPECT_FALSE(ParseOptions({"a.graph", "b.graph"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--run=yes"}).ok());
  EXPECT_TRUE(ParseOptions({"--help"})->help);
}

TEST(OptionsTest, PassFlags) {
  DriverOptions o = *ParseOptions(
      {"m.graph", "--pipeline=canonicalize,fusion{max-ops=2}",
       "--print-ir-after-all", "--print-ir-after=cse,dce",
       "--print-ir-after", "fusion", "--no-verify-each", "--time-passes",
       "--stop-after=fusion", "--stats"});
  EXPECT_EQ(o.pipeline, "canonicalize,fusion{max-ops=2}");
  EXPECT_TRUE(o.print_ir_after_all);
  EXPECT_EQ(o.print_ir_after,
            (std::vector<std::string>{"cse", "dce", "fusion"}));
  EXPECT_FALSE(o.verify_each);
  EXPECT_TRUE(o.time_passes);
  EXPECT_EQ(o.stop_after, "fusion");
  EXPECT_TRUE(o.stats);
  EXPECT_EQ(ParseOptions({"m.graph", "-O2"})->pipeline, "O2");
  EXPECT_EQ(ParseOptions({"m.graph", "--pass-pipeline", "cse"})->pipeline,
            "cse");
  EXPECT_TRUE(ParseOptions({"m.graph"})->verify_each);
  EXPECT_TRUE(ParseOptions({"m.graph", "--verify-each=true"})->verify_each);
  EXPECT_FALSE(ParseOptions({"m.graph", "--verify-each=false"})->verify_each);
  EXPECT_TRUE(ParseOptions({"--list-passes"})->list_passes);
  EXPECT_EQ(ParseOptions({"-"})->input_file, "-");
}

TEST(OptionsTest, RejectsBadPassFlags) {
  EXPECT_FALSE(ParseOptions({"m.graph", "-O3"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "-O2", "--pipeline=cse"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--pipeline="}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--verify-each=maybe"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--time-passes=1"}).ok());
  EXPECT_TRUE(ParseOptions({"m.graph", "-O2", "--pipeline=O2"}).ok());
}

TEST(OptionsTest, HelpDocumentsEveryFlag) {
  std::string help = HelpText();
  for (const char* flag :
       {"--emit=ir", "--run", "--check", "--input", "--seed", "--output-dir",
        "--graph", "--threads", "--rtol", "--atol", "--help", "--pipeline",
        "--pass-pipeline", "-O0", "-O2", "--print-ir-after-all",
        "--print-ir-after=", "--verify-each", "--no-verify-each",
        "--time-passes", "--stop-after", "--list-passes", "--stats",
        "--target-cpu="}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace hgc
