// Tree differences as check --both and the fuzzer report them.

#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "src/scenario/tree_diff.h"

namespace pathwarden {
namespace {

TreeEntry Root() {
  TreeEntry e;
  e.type = "dir";
  e.mode = 0755;
  e.nlink = 2;
  return e;
}

TreeEntry Entry(uint32_t parent, std::string name, std::string type, uint32_t mode) {
  TreeEntry e;
  e.parent = parent;
  e.name = std::move(name);
  e.type = std::move(type);
  e.mode = mode;
  e.nlink = 1;
  return e;
}

TreeEntry File(std::string name, uint32_t mode) { return Entry(0, std::move(name), "file", mode); }

// A chain of `depth` directories "d" below the root, then a file "f" of
// `mode` at the bottom: in path order, the file is the last entry.
std::vector<TreeEntry> Chain(size_t depth, uint32_t mode) {
  std::vector<TreeEntry> t = {Root()};
  for (size_t i = 0; i < depth; ++i)
    t.push_back(Entry(static_cast<uint32_t>(t.size() - 1), "d", "dir", 0755));
  t.push_back(Entry(static_cast<uint32_t>(t.size() - 1), "f", "file", mode));
  return t;
}

TEST(DiffTreesTest, EqualTreesHaveNoDifference) {
  const std::vector<TreeEntry> t = {Root(), File("a", 0644), File("b", 0600)};
  EXPECT_TRUE(DiffTrees(t, t).empty());
}

TEST(DiffTreesTest, NamesWhatOnlyOneSideHasAndWhatDiffers) {
  TreeEntry acl = File("c", 0640);
  acl.acl = "u::rw-,g::r--,g:50:r--,m::r--,o::---";
  const std::vector<TreeEntry> engine = {Root(), File("a", 0644), File("c", 0640)};
  const std::vector<TreeEntry> kernel = {Root(), File("b", 0644), acl};
  EXPECT_EQ(DiffTrees(engine, kernel),
            (std::vector<std::string>{
                "/a: engine file 0644 0:0 nlink 1 size 0, kernel: none",
                "/b: engine: none, kernel file 0644 0:0 nlink 1 size 0",
                "/c: engine file 0640 0:0 nlink 1 size 0, kernel file 0640 0:0 nlink 1 size 0 "
                "acl u::rw-,g::r--,g:50:r--,m::r--,o::---"}));
}

TEST(DiffTreesTest, AMissingSubtreeIsEveryObjectOfItInPathOrder) {
  // "/a-b" sorts between "/a" and "/a/x" ('-' before '/'): the lines come
  // in the order the whole paths sort, as they always did.
  const std::vector<TreeEntry> engine = {Root(), Entry(0, "a", "dir", 0755),
                                         Entry(1, "x", "file", 0644), Entry(0, "a-b", "file", 0644)};
  const std::vector<TreeEntry> kernel = {Root(), Entry(0, "a-b", "file", 0600)};
  size_t count = 0;
  EXPECT_EQ(DiffTrees(engine, kernel, SIZE_MAX, &count),
            (std::vector<std::string>{
                "/a: engine dir 0755 0:0 nlink 1, kernel: none",
                "/a-b: engine file 0644 0:0 nlink 1 size 0, kernel file 0600 0:0 nlink 1 size 0",
                "/a/x: engine file 0644 0:0 nlink 1 size 0, kernel: none"}));
  EXPECT_EQ(count, 3u);
  // With a limit, the first lines, and the count of all.
  EXPECT_EQ(DiffTrees(engine, kernel, 1, &count).size(), 1u);
  EXPECT_EQ(count, 3u);
}

TEST(DiffTreesTest, ADeepTreeDifferingAtTheBottomSaysWhereWithItsWholePath) {
  // 100,000 directories deep: whole paths would cost 10 GB; the trees are
  // compared by parent and name, and only the differing line has a path.
  constexpr size_t kDepth = 100000;
  const std::vector<TreeEntry> engine = Chain(kDepth, 0644);
  const std::vector<TreeEntry> kernel = Chain(kDepth, 0600);
  EXPECT_TRUE(DiffTrees(engine, engine).empty());
  size_t count = 0;
  const std::vector<std::string> lines = DiffTrees(engine, kernel, 10, &count);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(count, 1u);
  std::string path;
  for (size_t i = 0; i < kDepth; ++i) path += "/d";
  path += "/f";
  EXPECT_EQ(lines[0], path + ": engine file 0644 0:0 nlink 1 size 0, kernel file 0600 0:0 nlink 1 size 0");
  // One level less on the kernel's side: the engine's bottom directory
  // and its file are missing there.
  std::vector<TreeEntry> shorter = Chain(kDepth - 1, 0644);
  const std::vector<std::string> missing = DiffTrees(engine, shorter, 10, &count);
  EXPECT_EQ(count, 3u);  // the last "d" and the "f" in it, and the "f" one level up
  ASSERT_EQ(missing.size(), 3u);
  const std::string up = path.substr(0, path.size() - 4);  // without "/d/f"
  EXPECT_EQ(missing[0], up + "/d: engine dir 0755 0:0 nlink 1, kernel: none");
  EXPECT_EQ(missing[1], up + "/d/f: engine file 0644 0:0 nlink 1 size 0, kernel: none");
  EXPECT_EQ(missing[2], up + "/f: engine: none, kernel file 0644 0:0 nlink 1 size 0");
}

TEST(DiffTreesTest, AMalformedTreeDiffers) {
  std::vector<TreeEntry> loop = {Root(), Entry(2, "a", "dir", 0755), Entry(1, "b", "dir", 0755)};
  const std::vector<TreeEntry> good = {Root()};
  size_t count = 0;
  EXPECT_EQ(DiffTrees(loop, good, SIZE_MAX, &count),
            (std::vector<std::string>{"/: the engine tree is malformed"}));
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(DiffTrees(good, loop), (std::vector<std::string>{"/: the kernel tree is malformed"}));
}

TEST(TreeDifferencesTest, MatchesByNameNotByIndex) {
  // The same objects numbered differently: no difference.
  const std::vector<TreeEntry> a = {Root(), Entry(0, "x", "dir", 0755), Entry(1, "f", "file", 0644),
                                    Entry(0, "y", "dir", 0700), Entry(3, "g", "file", 0600)};
  const std::vector<TreeEntry> b = {Root(), Entry(0, "x", "dir", 0755), Entry(0, "y", "dir", 0700),
                                    Entry(2, "g", "file", 0600), Entry(1, "f", "file", 0644)};
  std::vector<internal::TreeDifference> d;
  ASSERT_TRUE(internal::TreeDifferences(a, b, &d));
  EXPECT_TRUE(d.empty());
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
