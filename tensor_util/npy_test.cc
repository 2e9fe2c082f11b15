#include "tensor_util/npy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"
#include "support/float16.h"

namespace hgc {
namespace {

std::string Header(int major, absl::string_view dict) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t len = dict.size();
  int width = major == 1 ? 2 : 4;
  for (int i = 0; i < width; ++i) out += static_cast<char>((len >> (8 * i)) & 0xFF);
  out += std::string(dict);
  return out;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

TEST(NpyTest, RoundTripsEveryDType) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kS32, DType::kS8,
                      DType::kU8, DType::kBool}) {
    Tensor t = *Tensor::Create(TensorType(dtype, {2, 3}));
    for (int64_t i = 0; i < 6; ++i) t.SetDouble(i, dtype == DType::kBool ? i % 2 : i - 2);
    std::string bytes = SerializeNpy(t);
    EXPECT_EQ((bytes.size() - t.size_in_bytes()) % 64, 0u);
    Tensor back = *ParseNpy(bytes, "t.npy");
    ASSERT_EQ(back.type(), t.type()) << DTypeName(dtype);
    EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.size_in_bytes()), 0);
  }
}

TEST(NpyTest, ScalarsAndVectorsUseNumpyTupleSyntax) {
  Tensor scalar = *Tensor::Create(TensorType(DType::kF32));
  EXPECT_NE(SerializeNpy(scalar).find("'shape': ()"), std::string::npos);
  Tensor vec = *Tensor::Create(TensorType(DType::kF32, {5}));
  EXPECT_NE(SerializeNpy(vec).find("'shape': (5,)"), std::string::npos);
  EXPECT_EQ(ParseNpy(SerializeNpy(vec), "v")->shape(), Shape({5}));
}

TEST(NpyTest, ReadsVersions2And3AndFortranOrder) {
  std::string data = Bytes<float>({1, 2, 3, 4, 5, 6});
  for (int major : {2, 3}) {
    Tensor t = *ParseNpy(
        Header(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n") + data,
        "t");
    EXPECT_EQ(t.data<float>()[5], 6.0f);
  }
  // Column-major [[1, 3, 5], [2, 4, 6]] stored as 1..6.
  Tensor f = *ParseNpy(
      Header(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n") + data,
      "f");
  EXPECT_EQ(f.data<float>()[1], 3.0f);
  EXPECT_EQ(f.data<float>()[3], 2.0f);
}

TEST(NpyTest, WritesBf16AsF32AndConformsF32ToBf16) {
  Tensor bf = *Tensor::Create(TensorType(DType::kBF16, {2}));
  bf.SetDouble(0, 1.5);
  bf.SetDouble(1, -3.0);
  Tensor back = *ParseNpy(SerializeNpy(bf), "b");
  EXPECT_EQ(back.dtype(), DType::kF32);
  EXPECT_EQ(back.data<float>()[0], 1.5f);

  Tensor f32 = *Tensor::Create(TensorType(DType::kF32, {2}));
  f32.mutable_data<float>()[0] = 1.0f + 1.0f / 256;  // a tie: rounds to 1.0
  const std::string file = SerializeNpy(f32);
  Tensor conformed = *ParseNpyAs(file, "f", TensorType(DType::kBF16, {2}), "x");
  EXPECT_EQ(conformed.GetDouble(0), 1.0);
  EXPECT_FALSE(ParseNpyAs(file, "f", TensorType(DType::kF32, {3}), "x").ok());
  absl::Status wrong =
      ParseNpyAs(file, "f", TensorType(DType::kS32, {2}), "x").status();
  EXPECT_EQ(wrong.message(),
            "input for %x must be s32[2] (integer data), found f32[2]");
}

TEST(NpyTest, RejectsDamagedFiles) {
  std::string good = SerializeNpy(*Tensor::Create(TensorType(DType::kF32, {4})));
  EXPECT_FALSE(ParseNpy("", "e").ok());
  EXPECT_FALSE(ParseNpy("not a numpy file", "e").ok());
  EXPECT_FALSE(ParseNpy(good.substr(0, good.size() - 1), "e").ok());  // short
  EXPECT_FALSE(ParseNpy(good + "x", "e").ok());                        // long
  EXPECT_FALSE(ParseNpy(good.substr(0, 12), "e").ok());                // header cut
  std::string v9 = good;
  v9[6] = 9;
  EXPECT_FALSE(ParseNpy(v9, "e").ok());
  absl::Status f64 = ParseNpy(
      Header(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }") +
          Bytes<double>({1.0}),
      "d.npy").status();
  EXPECT_NE(f64.message().find("f64 data is read only as the input of a "
                               "parameter"),
            std::string::npos)
      << f64;
  absl::Status c16 =
      ParseNpy(
          Header(1,
                 "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }") +
              Bytes<double>({1.0, 0.0}),
          "c.npy")
          .status();
  EXPECT_NE(c16.message().find("unsupported dtype '<c16'"), std::string::npos)
      << c16;
  EXPECT_FALSE(ParseNpy(Header(1, "{'descr': '<f4', 'shape': (1,), }") +
                            Bytes<float>({1}), "x").ok());
  // Dimensions whose product overflows must not wrap around.
  EXPECT_FALSE(ParseNpy(Header(1, "{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (4294967296, 4294967296, 4), }"),
                        "o").ok());
  EXPECT_FALSE(ParseNpy(Header(1, "{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (-1,), }"), "n").ok());
  EXPECT_EQ(ReadNpy("no/such/file.npy").status().code(),
            absl::StatusCode::kNotFound);
}

std::string Npy(absl::string_view descr, absl::string_view shape,
                absl::string_view data, bool fortran = false) {
  return Header(1, absl::StrCat("{'descr': '", descr, "', 'fortran_order': ",
                                fortran ? "True" : "False",
                                ", 'shape': ", shape, ", }")) +
         std::string(data);
}

TEST(NpyTest, ReadsBigEndianData) {
  std::string be;
  for (uint32_t bits : {FloatBits(1.5f), FloatBits(-2.0f)}) {
    for (int i = 3; i >= 0; --i) be += static_cast<char>(bits >> (8 * i));
  }
  Tensor t = *ParseNpy(Npy(">f4", "(2,)", be), "be");
  EXPECT_EQ(t.data<float>()[0], 1.5f);
  EXPECT_EQ(t.data<float>()[1], -2.0f);
}

TEST(NpyTest, ConvertsFloatDataToFloatParametersRoundingOnce) {
  // 1 + 2^-8 + 2^-40 is just above bf16's tie between 1 and 1 + 2^-7, and
  // 1 + 2^-11 + 2^-40 just above f16's between 1 and 1 + 2^-10: rounded
  // to f32 first (to nearest) each would land on its tie and go down.
  std::string data =
      Bytes<double>({0.1, 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-11 + 0x1p-40, 1e300});
  Tensor f32 = *ParseNpyAs(Npy("<f8", "(4,)", data), "d",
                           TensorType(DType::kF32, {4}), "x");
  EXPECT_EQ(f32.data<float>()[0], 0.1f);
  EXPECT_EQ(f32.data<float>()[1], 1 + 0x1p-8f);
  EXPECT_EQ(f32.data<float>()[3], std::numeric_limits<float>::infinity());
  Tensor bf = *ParseNpyAs(Npy("<f8", "(4,)", data), "d",
                          TensorType(DType::kBF16, {4}), "x");
  EXPECT_EQ(bf.GetDouble(1), 1 + 0x1p-7);
  Tensor h = *ParseNpyAs(Npy("<f8", "(4,)", data), "d",
                         TensorType(DType::kF16, {4}), "x");
  EXPECT_EQ(h.GetDouble(2), 1 + 0x1p-10);
  EXPECT_EQ(h.GetDouble(3), std::numeric_limits<double>::infinity());
  // f16 data for an f32 parameter is exact; column-major f64 is reordered.
  Tensor from_half =
      *ParseNpyAs(Npy("<f2", "(1,)", Bytes<uint16_t>({FloatToHalf(0.333f)})),
                  "h", TensorType(DType::kF32, {1}), "x");
  EXPECT_EQ(from_half.data<float>()[0], HalfToFloat(FloatToHalf(0.333f)));
  Tensor fortran =
      *ParseNpyAs(Npy("<f8", "(2, 3)", Bytes<double>({1, 4, 2, 5, 3, 6}), true),
                  "f", TensorType(DType::kF32, {2, 3}), "x");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(fortran.data<float>()[i], i + 1.0f);
}

TEST(NpyTest, ConvertsIntegerDataThatFits) {
  Tensor s32 = *ParseNpyAs(
      Npy("<i8", "(3,)", Bytes<int64_t>({-2147483648LL, 0, 2147483647})), "i",
      TensorType(DType::kS32, {3}), "m");
  EXPECT_EQ(s32.data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(s32.data<int32_t>()[2], std::numeric_limits<int32_t>::max());
  Tensor u8 = *ParseNpyAs(Npy("<u2", "(2,)", Bytes<uint16_t>({0, 255})), "u",
                          TensorType(DType::kU8, {2}), "m");
  EXPECT_EQ(u8.data<uint8_t>()[1], 255);
  Tensor s8 = *ParseNpyAs(Npy("<i2", "(2,)", Bytes<int16_t>({-128, 127})), "s",
                          TensorType(DType::kS8, {2}), "m");
  EXPECT_EQ(s8.data<int8_t>()[0], -128);
  std::string big_endian_minus_two("\xff\xff\xff\xff\xff\xff\xff\xfe", 8);
  Tensor be = *ParseNpyAs(Npy(">i8", "(1,)", big_endian_minus_two), "b",
                          TensorType(DType::kS32, {1}), "m");
  EXPECT_EQ(be.data<int32_t>()[0], -2);

  absl::Status too_big =
      ParseNpyAs(Npy("<i8", "(2,)", Bytes<int64_t>({1, 2147483648LL})), "i",
                 TensorType(DType::kS32, {2}), "m")
          .status();
  EXPECT_EQ(too_big.message(),
            "input for %m must be s32[2]: element 1 of the s64 data does not "
            "fit s32");
  EXPECT_FALSE(ParseNpyAs(Npy("<u2", "(1,)", Bytes<uint16_t>({256})), "u",
                          TensorType(DType::kU8, {1}), "m")
                   .ok());
  EXPECT_FALSE(ParseNpyAs(Npy("<i4", "(1,)", Bytes<int32_t>({-1})), "u",
                          TensorType(DType::kU8, {1}), "m")
                   .ok());
  // Above int64's range.
  EXPECT_FALSE(ParseNpyAs(Npy("<u8", "(1,)", Bytes<uint64_t>({1ULL << 63})),
                          "u", TensorType(DType::kS32, {1}), "m")
                   .ok());
}

TEST(NpyTest, RefusesDataOfTheWrongKind) {
  absl::Status s = ParseNpyAs(Npy("<f8", "(2,)", Bytes<double>({1, 2})), "d",
                              TensorType(DType::kS32, {2}), "m")
                       .status();
  EXPECT_EQ(s.message(),
            "input for %m must be s32[2] (integer data), found "
            "f64[2]");
  s = ParseNpyAs(Npy("<i8", "(2,)", Bytes<int64_t>({1, 2})), "i",
                 TensorType(DType::kF32, {2}), "x")
          .status();
  EXPECT_EQ(s.message(),
            "input for %x must be f32[2] (float data), found "
            "s64[2]");
  s = ParseNpyAs(Npy("|i1", "(2,)", Bytes<int8_t>({0, 1})), "i",
                 TensorType(DType::kBool, {2}), "c")
          .status();
  EXPECT_EQ(s.message(), "input for %c must be bool[2], found s8[2]");
  s = ParseNpyAs(Npy("<f8", "(3,)", Bytes<double>({1, 2, 3})), "d",
                 TensorType(DType::kF32, {2}), "x")
          .status();
  EXPECT_EQ(s.message(), "input for %x must be f32[2], found f64[3]");
}

TEST(NpyTest, RejectsRepeatedHeaderKeys) {
  absl::Status s =
      ParseNpy(Header(1, "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2,), 'shape': (3,), }") +
                   Bytes<float>({1, 2}),
               "r.npy")
          .status();
  EXPECT_EQ(s.message(),
            "r.npy: invalid .npy file: header key 'shape' appears more than "
            "once");
  s = ParseNpy(Header(1, "{'descr': '<f4', 'descr': '<f4', "
                         "'fortran_order': False, 'shape': (1,), }") +
                   Bytes<float>({1}),
               "d.npy")
          .status();
  EXPECT_NE(s.message().find("'descr' appears more than once"),
            std::string::npos);
}

TEST(NpyTest, RefusesDirectoriesFifosAndDevicesWithoutBlocking) {
  absl::Status dir = ReadNpy(::testing::TempDir()).status();
  EXPECT_EQ(dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dir.message().find("not a regular file (a directory)"),
            std::string::npos)
      << dir;
  std::string fifo = ::testing::TempDir() + "/npy_test_fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::Status f = ReadNpy(fifo).status();  // no writer: must not hang
  EXPECT_NE(f.message().find("not a regular file (a FIFO)"), std::string::npos)
      << f;
  ::unlink(fifo.c_str());
  // /dev/zero would be read without end.
  absl::Status zero = ReadNpy("/dev/zero").status();
  EXPECT_NE(zero.message().find("not a regular file"), std::string::npos)
      << zero;
}

}  // namespace
}  // namespace hgc
