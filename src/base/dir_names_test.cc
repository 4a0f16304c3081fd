#include "src/base/dir_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"

namespace pathwarden::internal {
namespace {

using DirNamesTest = base_testing::ScratchDirTest;

// More names than one getdents64() of the 8 KiB buffer returns: every one
// read, once, and neither "." nor "..".
TEST_F(DirNamesTest, EveryNameAcrossManyReads) {
  std::vector<std::string> made;
  for (int i = 0; i < 700; ++i) {
    made.push_back(std::string(40, 'a' + i % 26) + std::to_string(i));
    const int fd = open((dir_ + "/" + made.back()).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  const int fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto names = ReadDirNames(fd);
  ASSERT_TRUE(names) << names.error();
  EXPECT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);  // still open
  close(fd);
  std::sort(made.begin(), made.end());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, made);
}

TEST_F(DirNamesTest, TypesAndInodes) {
  ASSERT_EQ(mkdir((dir_ + "/d").c_str(), 0700), 0);
  ASSERT_EQ(symlink("d", (dir_ + "/l").c_str()), 0);
  ASSERT_EQ(mkfifo((dir_ + "/p").c_str(), 0600), 0);
  struct stat st {};
  ASSERT_EQ(lstat((dir_ + "/d").c_str(), &st), 0);
  const int fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::map<std::string, unsigned char> types;
  ino_t d_ino = 0;
  EXPECT_EQ(ForEachDirEntry(fd,
                            [&](std::string_view name, ino_t ino, unsigned char type) {
                              types[std::string(name)] = type;
                              if (name == "d") d_ino = ino;
                            }),
            0);
  // At the end: a second pass from there gives nothing.
  int more = 0;
  EXPECT_EQ(ForEachDirEntry(fd, [&](std::string_view, ino_t, unsigned char) { ++more; }), 0);
  close(fd);
  EXPECT_EQ(more, 0);
  EXPECT_EQ(types, (std::map<std::string, unsigned char>{{"d", DT_DIR}, {"l", DT_LNK}, {"p", DT_FIFO}}));
  EXPECT_EQ(d_ino, st.st_ino);
}

// getdents64() of a directory removed while open answers ENOENT on some
// filesystems: no entries, as readdir() says.
TEST_F(DirNamesTest, ARemovedDirectoryIsEmpty) {
  const std::string d = dir_ + "/gone";
  ASSERT_EQ(mkdir(d.c_str(), 0700), 0);
  const int fd = open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(rmdir(d.c_str()), 0);
  auto names = ReadDirNames(fd);
  close(fd);
  ASSERT_TRUE(names) << names.error();
  EXPECT_TRUE(names->empty());
}

TEST_F(DirNamesTest, NotADirectoryIsItsErrno) {
  const int fd = open((dir_ + "/f").c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  auto names = ReadDirNames(fd);
  close(fd);
  ASSERT_FALSE(names);
  EXPECT_EQ(names.error(), ENOTDIR);
  auto closed = ReadDirNames(fd);
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error(), EBADF);
}

}  // namespace
}  // namespace pathwarden::internal
