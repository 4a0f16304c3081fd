#include "src/query/dir_walk.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"

namespace pathwarden::query {
namespace {

// A scratch directory of this test's own, removed after (with trees
// deeper than PATH_MAX).
using DirWalkTest = base_testing::ScratchDirTest;

// A chain of `levels` directories named `name` below `top`, made relative
// to each.
void Chain(const std::string& top, int levels, const std::string& name = "d") {
  int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < levels; ++i) {
    ASSERT_EQ(mkdirat(fd, name.c_str(), 0755), 0);
    const int next = openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(next, 0);
    close(fd);
    fd = next;
  }
  close(fd);
}

TEST_F(DirWalkTest, ListsInNameOrderWithEachStat) {
  ASSERT_EQ(mkdir((dir_ + "/b").c_str(), 0755), 0);
  ASSERT_EQ(close(open((dir_ + "/a").c_str(), O_CREAT | O_WRONLY, 0600)), 0);
  ASSERT_EQ(symlink("b", (dir_ + "/c").c_str()), 0);
  auto w = DirWalk::Open(dir_);
  ASSERT_TRUE(w) << w.error();
  auto kids = w->List();
  ASSERT_TRUE(kids) << kids.error();
  ASSERT_EQ(kids->size(), 3u);
  EXPECT_EQ((*kids)[0].name, "a");
  EXPECT_TRUE(S_ISREG((*kids)[0].st.st_mode));
  EXPECT_TRUE(S_ISDIR((*kids)[1].st.st_mode));
  EXPECT_TRUE(S_ISLNK((*kids)[2].st.st_mode));  // not followed
  // A symlink is not entered, even to a directory.
  EXPECT_FALSE(w->Enter((*kids)[2]));
  ASSERT_TRUE(w->Enter((*kids)[1]));
  EXPECT_EQ(w->depth(), 1u);
  ASSERT_TRUE(w->Leave());
  EXPECT_FALSE(w->Leave());  // at the top
}

// Down past PATH_MAX and back, with fewer descriptors than levels: the
// directories left behind are reopened through "..".
TEST_F(DirWalkTest, GoesPastPathMaxAndBack) {
  const std::string name(64, 'n');
  const int levels = PATH_MAX / 65 + 10;
  static_assert(PATH_MAX / 65 + 10 > static_cast<int>(DirWalk::kKeptFds));
  Chain(dir_, levels, name);
  auto w = DirWalk::Open(dir_);
  ASSERT_TRUE(w) << w.error();
  const ino_t top = w->here().st_ino;
  for (int i = 0; i < levels; ++i) {
    auto kids = w->List();
    ASSERT_TRUE(kids) << i << ": " << kids.error();
    ASSERT_EQ(kids->size(), 1u) << i;
    ASSERT_TRUE(w->Enter((*kids)[0])) << i;
  }
  auto last = w->List();
  ASSERT_TRUE(last) << last.error();
  EXPECT_TRUE(last->empty());
  for (int i = 0; i < levels; ++i) ASSERT_TRUE(w->Leave()) << i;
  EXPECT_EQ(w->here().st_ino, top);
  EXPECT_EQ(w->depth(), 0u);
}

// A directory moved while the walk is below it: ".." is another
// directory now, and Leave() says so instead of going on elsewhere.
TEST_F(DirWalkTest, LeaveFailsWhenTheTreeMoved) {
  const int levels = static_cast<int>(DirWalk::kKeptFds) + 5;
  Chain(dir_, levels);
  ASSERT_EQ(mkdir((dir_ + "/elsewhere").c_str(), 0755), 0);
  auto w = DirWalk::Open(dir_);
  ASSERT_TRUE(w) << w.error();
  std::string path = dir_;
  for (int i = 0; i < levels; ++i) {
    auto kids = w->List();
    ASSERT_TRUE(kids) << kids.error();
    const DirEntry* d = nullptr;
    for (const DirEntry& e : *kids)
      if (e.name == "d") d = &e;
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(w->Enter(*d)) << i;
    path += "/d";
  }
  // The directory the walk stands in moves; its parent's descriptor is
  // not kept at this depth.
  ASSERT_EQ(rename(path.c_str(), (dir_ + "/elsewhere/d").c_str()), 0);
  auto r = w->Leave();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("moved"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace pathwarden::query
