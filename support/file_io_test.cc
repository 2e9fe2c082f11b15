#include "support/file_io.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace hgc {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The names in `dir`, without "." and "..".
std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

std::string FreshDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" + name;
  ::mkdir(dir.c_str(), 0755);
  for (const std::string& f : List(dir)) ::unlink((dir + "/" + f).c_str());
  return dir;
}

TEST(ReadRegularFileTest, ReadsAFile) {
  std::string dir = FreshDir("read_ok");
  ASSERT_TRUE(WriteFilesAtomically({{dir + "/a", "hello"}}).ok());
  absl::StatusOr<std::string> text = ReadRegularFile(dir + "/a", 100);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello");
}

TEST(ReadRegularFileTest, ReportsWhatIsWrong) {
  absl::Status missing = ReadRegularFile("/no/such/file", 100).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.message(),
            "cannot open '/no/such/file': No such file or directory");
  absl::Status dir = ReadRegularFile(::testing::TempDir(), 100).status();
  EXPECT_EQ(dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dir.message().find("not a regular file (a directory)"),
            std::string::npos)
      << dir;
  absl::Status zero = ReadRegularFile("/dev/zero", 100).status();
  EXPECT_NE(zero.message().find("not a regular file (a character device)"),
            std::string::npos)
      << zero;
  std::string big = FreshDir("read_big") + "/big";
  ASSERT_TRUE(WriteFilesAtomically({{big, std::string(101, 'x')}}).ok());
  absl::Status too_large = ReadRegularFile(big, 100).status();
  EXPECT_EQ(too_large.message(),
            "cannot read '" + big + "': file is larger than 100 bytes");
}

TEST(ReadRegularFileTest, AFifoWithoutWriterDoesNotHang) {
  std::string fifo = FreshDir("read_fifo") + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::Status s = ReadRegularFile(fifo, 100).status();
  EXPECT_NE(s.message().find("not a regular file (a FIFO)"), std::string::npos)
      << s;
}

TEST(WriteFilesAtomicallyTest, WritesEveryFile) {
  std::string dir = FreshDir("write_ok");
  ASSERT_TRUE(
      WriteFilesAtomically({{dir + "/a", "1"}, {dir + "/b", "22"}}).ok());
  EXPECT_EQ(Slurp(dir + "/a"), "1");
  EXPECT_EQ(Slurp(dir + "/b"), "22");
  EXPECT_EQ(List(dir).size(), 2u);  // no temporary files left
}

TEST(WriteFilesAtomicallyTest, AFailureLeavesNothingNew) {
  std::string dir = FreshDir("write_fail");
  absl::Status s =
      WriteFilesAtomically({{dir + "/a", "1"}, {dir + "/missing/b", "2"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "cannot write '" + dir + "/missing/b': No such file or directory");
  EXPECT_TRUE(List(dir).empty());
}

TEST(WriteFilesAtomicallyTest, AShortWriteLeavesNoTruncatedFile) {
  // A file-size limit makes write() fail part-way, as a full disk does.
  std::string dir = FreshDir("write_short");
  ASSERT_TRUE(WriteFilesAtomically({{dir + "/a", "old"}}).ok());
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFilesAtomically(
      {{dir + "/a", "new"}, {dir + "/b", std::string(5000, 'x')}});
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write '" + dir + "/b': File too large");
  EXPECT_EQ(Slurp(dir + "/a"), "old");
  EXPECT_EQ(List(dir), std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace hgc
