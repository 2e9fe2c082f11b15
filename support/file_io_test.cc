#include "support/file_io.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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
  std::filesystem::remove_all(dir);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

// What `dir` holds, name by name: "dir", "fifo", "link", or a file's mode,
// inode and bytes.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> entries;
  for (const std::string& name : List(dir)) {
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      entries[name] = "?";
    } else if (S_ISDIR(st.st_mode)) {
      entries[name] = "dir";
    } else if (S_ISFIFO(st.st_mode)) {
      entries[name] = "fifo";
    } else if (S_ISLNK(st.st_mode)) {
      entries[name] = "link";
    } else {
      std::ostringstream s;
      s << "mode " << std::oct << (st.st_mode & 07777) << std::dec << " inode "
        << st.st_ino << ": " << Slurp(path);
      entries[name] = s.str();
    }
  }
  return entries;
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

TEST(WriteFilesAtomicallyTest, ReplacesEarlierFilesAndKeepsNoBackup) {
  std::string dir = FreshDir("write_over");
  WriteFile(dir + "/a", "old a");
  WriteFile(dir + "/b", "old b");
  ASSERT_TRUE(
      WriteFilesAtomically({{dir + "/a", "1"}, {dir + "/b", "22"}}).ok());
  EXPECT_EQ(Slurp(dir + "/a"), "1");
  EXPECT_EQ(Slurp(dir + "/b"), "22");
  EXPECT_EQ(List(dir).size(), 2u);  // no temporary file or backup left
}

TEST(WriteFilesAtomicallyTest, ADirectoryInTheWayWritesNothing) {
  // The second name is a directory: the first must not appear.
  std::string dir = FreshDir("write_dir_in_way");
  ASSERT_EQ(::mkdir((dir + "/b").c_str(), 0755), 0);
  auto before = Snapshot(dir);
  absl::Status s =
      WriteFilesAtomically({{dir + "/a", "new a"}, {dir + "/b", "new b"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "cannot write '" + dir + "/b': a directory is in the way");
  EXPECT_EQ(Snapshot(dir), before);
  EXPECT_FALSE(Exists(dir + "/a"));

  // ... and an earlier first file keeps its bytes.
  WriteFile(dir + "/a", "old a");
  before = Snapshot(dir);
  s = WriteFilesAtomically({{dir + "/a", "new a"}, {dir + "/b", "new b"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Snapshot(dir), before);
  EXPECT_EQ(Slurp(dir + "/a"), "old a");
}

TEST(WriteFilesAtomicallyTest, AReadOnlyFileInTheWayWritesNothing) {
  std::string dir = FreshDir("write_read_only");
  WriteFile(dir + "/a", "old a");
  WriteFile(dir + "/b", "old b");
  ASSERT_EQ(::chmod((dir + "/b").c_str(), 0444), 0);
  auto before = Snapshot(dir);
  absl::Status s =
      WriteFilesAtomically({{dir + "/a", "new a"}, {dir + "/b", "new b"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "cannot write '" + dir + "/b': a read-only file is in the way");
  EXPECT_EQ(Snapshot(dir), before);
  EXPECT_EQ(Slurp(dir + "/a"), "old a");
  EXPECT_EQ(Slurp(dir + "/b"), "old b");
}

TEST(WriteFilesAtomicallyTest, OtherThingsInTheWayWriteNothing) {
  std::string dir = FreshDir("write_in_way");
  WriteFile(dir + "/a", "old a");
  WriteFile(dir + "/file", "old file");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("a", (dir + "/link").c_str()), 0);
  auto before = Snapshot(dir);
  struct Case {
    std::string name;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{
           {"fifo", "a FIFO is in the way"},
           {"link", "a symbolic link is in the way"},
           {"file/b", "Not a directory"},
           {"missing/b", "No such file or directory"},
       }) {
    absl::Status s = WriteFilesAtomically(
        {{dir + "/a", "new a"}, {dir + "/" + c.name, "new"}});
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.message(),
              "cannot write '" + dir + "/" + c.name + "': " + c.reason);
    EXPECT_EQ(Snapshot(dir), before) << c.name;
  }
}

TEST(WriteFilesAtomicallyTest, AShortWriteLeavesNoTruncatedFile) {
  // A file-size limit makes write() fail part-way, as a full disk does.
  std::string dir = FreshDir("write_short");
  WriteFile(dir + "/a", "old a");
  WriteFile(dir + "/b", "old b");
  auto before = Snapshot(dir);
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFilesAtomically({{dir + "/a", "new a"},
                                         {dir + "/b", std::string(5000, 'x')},
                                         {dir + "/c", "new c"}});
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "cannot write '" + dir + "/b': File too large");
  EXPECT_EQ(Snapshot(dir), before);
}

TEST(WriteFilesAtomicallyTest, ARenameFailingMidwayIsUndone) {
  // The third name becomes a directory after the checks (a race): the
  // first two renames are undone, the earlier file restored as it was.
  std::string dir = FreshDir("write_rollback");
  WriteFile(dir + "/a", "old a");
  auto before = Snapshot(dir);
  std::vector<size_t> renames;
  absl::Status s = file_io_internal::WriteFilesAtomically(
      {{dir + "/a", "new a"}, {dir + "/b", "new b"}, {dir + "/c", "new c"}},
      [&](size_t i) {
        renames.push_back(i);
        if (i == 2) ::mkdir((dir + "/c").c_str(), 0755);
      });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(renames, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "cannot write '" + dir + "/c': Is a directory");
  before["c"] = "dir";
  EXPECT_EQ(Snapshot(dir), before);  // the same inode, mode and bytes
}

TEST(WriteFilesAtomicallyTest, LeavesATakenTemporaryNameAlone) {
  std::string dir = FreshDir("write_taken_temp");
  std::string taken = dir + "/.a.tmp-" + std::to_string(::getpid());
  WriteFile(taken, "someone else's");
  ASSERT_TRUE(WriteFilesAtomically({{dir + "/a", "new a"}}).ok());
  EXPECT_EQ(Slurp(dir + "/a"), "new a");
  EXPECT_EQ(Slurp(taken), "someone else's");
  EXPECT_EQ(List(dir).size(), 2u);
}

}  // namespace
}  // namespace hgc
