#include "passes/pipeline_parser.h"

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(PipelineParserTest, ParsesPassesAndOptions) {
  absl::StatusOr<std::vector<PipelineEntry>> p =
      ParsePipeline(" a , b{opt=1}, c{x=y z=-3,w=1e5 }");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].name, "a");
  EXPECT_TRUE((*p)[0].options.empty());
  EXPECT_EQ((*p)[1].options,
            (std::vector<std::pair<std::string, std::string>>{{"opt", "1"}}));
  EXPECT_EQ((*p)[2].options.size(), 3u);
  EXPECT_EQ((*p)[2].options[1].second, "-3");
  EXPECT_EQ(PipelineToString(*p), "a,b{opt=1},c{x=y,z=-3,w=1e5}");
}

TEST(PipelineParserTest, EmptyIsAnEmptyPipeline) {
  EXPECT_TRUE(ParsePipeline("")->empty());
  EXPECT_TRUE(ParsePipeline("   ")->empty());
  EXPECT_TRUE(ParsePipeline("a{}")->at(0).options.empty());
}

TEST(PipelineParserTest, ErrorsSayWhatAndWhere) {
  auto error = [](absl::string_view text) {
    absl::StatusOr<std::vector<PipelineEntry>> p = ParsePipeline(text);
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(p.status().message());
  };
  EXPECT_EQ(error("a,,b"),
            "pipeline 'a,,b': expected a pass name, found ',' at column 3");
  EXPECT_NE(error("a{opt}").find("expected '=' after the option name"),
            std::string::npos);
  EXPECT_NE(error("a{opt=1").find("expected '}', found the end"),
            std::string::npos);
  EXPECT_NE(error("a{opt=}").find("expected an option value"),
            std::string::npos);
  EXPECT_NE(error("a b").find("expected ',' or the end"), std::string::npos);
  EXPECT_NE(error("a,").find("expected a pass name, found the end"),
            std::string::npos);
  EXPECT_NE(error("a{=1}").find("expected an option name"), std::string::npos);
}

}  // namespace
}  // namespace hgc
