#include "support/npy.h"

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
  Tensor scalar = *Tensor::Create(TensorType(DType::kF32, {}));
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
  Tensor conformed = *ConformToType(f32, TensorType(DType::kBF16, {2}), "x");
  EXPECT_EQ(conformed.GetDouble(0), 1.0);
  EXPECT_FALSE(ConformToType(f32, TensorType(DType::kF32, {3}), "x").ok());
  absl::Status wrong = ConformToType(f32, TensorType(DType::kS32, {2}), "x").status();
  EXPECT_NE(wrong.message().find("input for %x must be s32[2], found f32[2]"),
            std::string::npos) << wrong;
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
  EXPECT_NE(f64.message().find("unsupported dtype '<f8'"), std::string::npos);
  EXPECT_FALSE(ParseNpy(Header(1, "{'descr': '>f4', 'fortran_order': False, "
                                  "'shape': (1,), }") + Bytes<float>({1}),
                        "be").ok());
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
