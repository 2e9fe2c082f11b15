#include "ir/attribute.h"

#include <cmath>
#include <cstdlib>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(AttributeTest, PrintsEveryKind) {
  EXPECT_EQ(Attribute::Int(-3).ToString(), "-3");
  EXPECT_EQ(Attribute::Float(0.125).ToString(), "0.125");
  EXPECT_EQ(Attribute::Float(1.0).ToString(), "1.0");
  EXPECT_EQ(Attribute::Float(1e-5).ToString(), "1e-05");
  EXPECT_EQ(Attribute::Bool(true).ToString(), "true");
  EXPECT_EQ(Attribute::String("a\"b\\c\nd\te").ToString(),
            "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(Attribute::Type(DType::kU8).ToString(), "u8");
  EXPECT_EQ(Attribute::Symbol("fused_1").ToString(), "@fused_1");
  EXPECT_EQ(Attribute::IntList({1, -1, 3}).ToString(), "[1, -1, 3]");
  EXPECT_EQ(Attribute::MakeList({}).ToString(), "[]");
}

TEST(AttributeTest, FloatsPrintInShortestRoundTripForm) {
  for (double v : {0.1, 1.0 / 3, 1e300, -2.5e-3, 123456789.0, 5e-324}) {
    std::string s = FormatFloat(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    EXPECT_NE(s.find_first_of(".e"), std::string::npos) << s;
  }
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(-0.0), "-0.0");
}

TEST(AttributeTest, NumbersAndListsConvert) {
  EXPECT_EQ(Attribute::Int(2).as_number(), 2.0);
  Attribute mixed = Attribute::MakeList({Attribute::Int(1), Attribute::Float(0.5)});
  EXPECT_TRUE(mixed.is_number_list());
  EXPECT_FALSE(mixed.is_int_list());
  EXPECT_EQ(mixed.as_number_list(), (std::vector<double>{1.0, 0.5}));
  EXPECT_TRUE(Attribute::MakeList({}).is_int_list());
}

TEST(AttributeTest, EqualityKeepsIntAndFloatApart) {
  EXPECT_NE(Attribute::Int(1), Attribute::Float(1.0));
  EXPECT_EQ(Attribute::Float(std::nan("")), Attribute::Float(std::nan("")));
  EXPECT_NE(Attribute::Float(0.0), Attribute::Float(-0.0));
  EXPECT_EQ(Attribute::IntList({1, 2}), Attribute::IntList({1, 2}));
}

}  // namespace
}  // namespace hgc
