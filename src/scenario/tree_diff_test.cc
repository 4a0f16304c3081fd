// Tree differences as check --both and the fuzzer report them.

#include <gtest/gtest.h>

#include "pathwarden/executor.h"

namespace pathwarden {
namespace {

TreeEntry File(std::string path, uint32_t mode) {
  TreeEntry e;
  e.path = std::move(path);
  e.type = "file";
  e.mode = mode;
  e.nlink = 1;
  return e;
}

TEST(DiffTreesTest, EqualTreesHaveNoDifference) {
  const std::vector<TreeEntry> t = {File("/a", 0644), File("/b", 0600)};
  EXPECT_TRUE(DiffTrees(t, t).empty());
}

TEST(DiffTreesTest, NamesWhatOnlyOneSideHasAndWhatDiffers) {
  TreeEntry acl = File("/c", 0640);
  acl.acl = "u::rw-,g::r--,g:50:r--,m::r--,o::---";
  const std::vector<TreeEntry> engine = {File("/a", 0644), File("/c", 0640)};
  const std::vector<TreeEntry> kernel = {File("/b", 0644), acl};
  EXPECT_EQ(DiffTrees(engine, kernel),
            (std::vector<std::string>{
                "/a: engine file 0644 0:0 nlink 1 size 0, kernel: none",
                "/b: engine: none, kernel file 0644 0:0 nlink 1 size 0",
                "/c: engine file 0640 0:0 nlink 1 size 0, kernel file 0640 0:0 nlink 1 size 0 "
                "acl u::rw-,g::r--,g:50:r--,m::r--,o::---"}));
}

TEST(DescribeTreeEntryTest, SaysWhatEachTypeCarries) {
  TreeEntry link;
  link.type = "symlink";
  link.mode = 0777;
  link.nlink = 1;
  link.target = "../x";
  EXPECT_EQ(DescribeTreeEntry(link), "symlink 0777 0:0 nlink 1 -> \"../x\"");
  TreeEntry dev;
  dev.type = "char";
  dev.mode = 0666;
  dev.nlink = 1;
  dev.rdev_major = 1;
  dev.rdev_minor = 3;
  EXPECT_EQ(DescribeTreeEntry(dev), "char 0666 0:0 nlink 1 1:3");
}

}  // namespace
}  // namespace pathwarden
