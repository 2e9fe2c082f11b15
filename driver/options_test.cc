#include "driver/options.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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
                                   "--graph=@second", "--cache-dir", "c"});
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
  EXPECT_EQ(o.cache_dir, "c");
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

// The message of a parse that must fail, or "(parsed)".
std::string ErrorOf(const std::vector<std::string>& args) {
  absl::StatusOr<DriverOptions> options = ParseOptions(args);
  return options.ok() ? "(parsed)" : std::string(options.status().message());
}

TEST(OptionsTest, ValueErrorsNameTheFlagAsWritten) {
  EXPECT_EQ(ErrorOf({"m.graph", "-seed=x"}),
            "invalid value 'x' for '--seed' (expected an integer in [0, "
            "9223372036854775807]) (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--pass-pipeline="}),
            "--pass-pipeline is empty (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--emit", "{flag}"}),
            "unsupported --emit kind '{flag}' (supported: ir, loops, llvm, "
            "asm) (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--run", "--threads=0"}),
            "invalid value '0' for '--threads' (expected an integer in [1, "
            "1024]) (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--stats=1"}),
            "flag '--stats' takes no value (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--graph"}),
            "flag '--graph' needs a value (see 'hgc --help')");
}

TEST(OptionsTest, KnowsOnlyHgcFlagsInHgcSpelling) {
  // absl's spelling and absl's own flags are not hgc's.
  EXPECT_EQ(ErrorOf({"m.graph", "--print_ir_after=cse"}),
            "unknown flag '--print_ir_after=cse' (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--flagfile=f"}),
            "unknown flag '--flagfile=f' (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--helpfull"}),
            "unknown flag '--helpfull' (see 'hgc --help')");
  // Only a switch has a --no- form.
  EXPECT_EQ(ErrorOf({"m.graph", "--no-stats"}),
            "unknown flag '--no-stats' (see 'hgc --help')");
  EXPECT_EQ(ErrorOf({"m.graph", "--no-verify-each=1"}),
            "flag '--no-verify-each' takes no value (see 'hgc --help')");
}

TEST(OptionsTest, RepeatedFlagsAddUpAndNothingCarriesOver) {
  DriverOptions o = *ParseOptions(
      {"m.graph", "--emit=ir", "--emit", "loops", "--seed=3", "--seed=4",
       "--no-verify-each", "--verify-each", "-O2", "--pipeline=O2"});
  EXPECT_TRUE(o.emit_ir);
  EXPECT_TRUE(o.emit_loops);
  EXPECT_EQ(o.seed, 4u);
  EXPECT_TRUE(o.verify_each);
  EXPECT_EQ(o.pipeline, "O2");
  // A second parse starts from the defaults.
  DriverOptions fresh = *ParseOptions({"m.graph"});
  EXPECT_FALSE(fresh.emit_loops);
  EXPECT_EQ(fresh.seed, 0u);
  EXPECT_EQ(fresh.pipeline, "");
}

TEST(OptionsTest, ParsesOnnxDimsAndShapesInOrder) {
  DriverOptions o = *ParseOptions(
      {"m.onnx", "--dim", "batch=4", "--dim=seq=128", "--input-shape",
       "x=1,2,3", "--input-shape=mask=0", "--dim=a=b=2"});
  EXPECT_EQ(o.dims, (std::vector<std::pair<std::string, int64_t>>{
                        {"batch", 4}, {"seq", 128}, {"a=b", 2}}));
  ASSERT_EQ(o.input_shapes.size(), 2u);
  EXPECT_EQ(o.input_shapes[0].first, "x");
  EXPECT_EQ(o.input_shapes[0].second, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(o.input_shapes[1].first, "mask");
  EXPECT_EQ(o.input_shapes[1].second, (std::vector<int64_t>{0}));
  // A later parse starts empty.
  EXPECT_TRUE(ParseOptions({"m.onnx"})->dims.empty());
  EXPECT_TRUE(ParseOptions({"m.onnx"})->input_shapes.empty());
}

TEST(OptionsTest, RejectsBadOnnxDimsAndShapes) {
  for (const char* bad : {"N=0", "N=-1", "N=x", "=4", "N=", "N",
                          "N=9223372036854775808"}) {
    EXPECT_EQ(ErrorOf({"m.onnx", "--dim", bad}),
              absl::StrCat("--dim expects NAME=N with N a positive integer, "
                           "found '",
                           bad, "' (see 'hgc --help')"));
  }
  for (const char* bad : {"x=", "x=1,,2", "x=1,-2", "x=1,2,", "x", "=1"}) {
    EXPECT_EQ(ErrorOf({"m.onnx", "--input-shape", bad}),
              absl::StrCat("--input-shape expects NAME=D0,D1,... with each D "
                           "a non-negative integer, found '",
                           bad, "' (see 'hgc --help')"));
  }
  EXPECT_EQ(ErrorOf({"m.onnx", "--dim"}),
            "flag '--dim' needs a value (see 'hgc --help')");
}

TEST(OptionsTest, OnnxLiteralIsOffUnlessGiven) {
  EXPECT_FALSE(ParseOptions({"m.onnx"})->onnx_literal);
  EXPECT_TRUE(ParseOptions({"m.onnx", "--onnx-literal"})->onnx_literal);
}

TEST(OptionsTest, HelpDocumentsEveryFlag) {
  std::string help = HelpText();
  for (const char* flag :
       {"--emit=ir", "--run", "--check", "--input", "--seed", "--output-dir",
        "--graph", "--threads", "--rtol", "--atol", "--help", "--pipeline",
        "--pass-pipeline", "-O0", "-O2", "--print-ir-after-all",
        "--print-ir-after=", "--verify-each", "--no-verify-each",
        "--time-passes", "--stop-after", "--list-passes", "--stats",
        "--target-cpu=", "--dim NAME=N", "--input-shape NAME=D0,D1,...",
        "--cache-dir DIR", "--onnx-literal"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
  // Every flag declared with --run, in its command-line spelling.
  const std::string hgc_file = absl::FindCommandLineFlag("run")->Filename();
  int flags = 0;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename() != hgc_file) continue;
    ++flags;
    const std::string written =
        absl::StrReplaceAll(absl::StrCat("-", name), {{"_", "-"}});
    EXPECT_NE(help.find(written), std::string::npos) << written;
  }
  EXPECT_EQ(flags, 30);
}

}  // namespace
}  // namespace hgc
