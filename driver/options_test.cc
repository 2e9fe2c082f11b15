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

TEST(OptionsTest, RejectsBadFlags) {
  EXPECT_FALSE(ParseOptions({}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--frobnicate"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--seed"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--seed=abc"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--threads=0"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--emit=llvm"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--input=noequals"}).ok());
  EXPECT_FALSE(ParseOptions({"a.graph", "b.graph"}).ok());
  EXPECT_FALSE(ParseOptions({"m.graph", "--run=yes"}).ok());
  EXPECT_TRUE(ParseOptions({"--help"})->help);
}

TEST(OptionsTest, HelpDocumentsEveryFlag) {
  std::string help = HelpText();
  for (const char* flag : {"--emit=ir", "--run", "--check", "--input",
                           "--seed", "--output-dir", "--graph", "--threads",
                           "--rtol", "--atol", "--help"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace hgc
