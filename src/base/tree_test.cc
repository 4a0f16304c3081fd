// Tree-shaped trees: the path order from parents and names, whole paths
// on demand, and a Model's snapshot of a tree 100,000 deep.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pathwarden/model.h"
#include "pathwarden/tree.h"
#include "src/base/tree_order.h"

namespace pathwarden {
namespace {

TreeEntry Entry(uint32_t parent, std::string name, std::string type = "dir") {
  TreeEntry e;
  e.parent = parent;
  e.name = std::move(name);
  e.type = std::move(type);
  return e;
}

std::vector<std::string> Paths(const std::vector<TreeEntry>& t) {
  std::vector<std::string> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(TreePath(t, i));
  return out;
}

TEST(TreeOrder, IsTheOrderOfTheWholePaths) {
  // Found in any order; "/a-b" and "/a.c" sort between "/a" and "/a/x"
  // ('-' and '.' before '/'), "/a0" after it.
  std::vector<TreeEntry> t = {Entry(0, ""),          Entry(0, "a0", "file"), Entry(0, "a"),
                              Entry(2, "x"),         Entry(3, "y", "file"),  Entry(0, "a-b"),
                              Entry(5, "z", "file"), Entry(0, "a.c", "file"), Entry(2, "\xff", "file")};
  ASSERT_TRUE(internal::SortTreeByPath(&t));
  ASSERT_TRUE(TreeIsWellFormed(t));
  std::vector<std::string> paths = Paths(t);
  std::vector<std::string> sorted = paths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(paths, sorted);
  EXPECT_EQ(paths, (std::vector<std::string>{"/", "/a", "/a-b", "/a-b/z", "/a.c", "/a/x", "/a/x/y",
                                             "/a/\xff", "/a0"}));
  EXPECT_EQ(TreeIndex(t, "/a/x/y"), 6);
  EXPECT_EQ(TreeIndex(t, "/"), 0);
  EXPECT_EQ(TreeIndex(t, "/a/nope"), -1);
}

TEST(TreeOrder, AnUnreachableEntryFailsAndLeavesTheTree) {
  std::vector<TreeEntry> t = {Entry(0, ""), Entry(2, "a"), Entry(1, "b")};
  const std::vector<TreeEntry> before = t;
  EXPECT_FALSE(internal::SortTreeByPath(&t));
  EXPECT_EQ(t, before);
  EXPECT_FALSE(TreeIsWellFormed(t));  // a parent after its child
}

TEST(TreeOrder, WellFormedNeedsARootAndNamesWithoutSlashes) {
  EXPECT_TRUE(TreeIsWellFormed({}));
  EXPECT_FALSE(TreeIsWellFormed({Entry(0, "x")}));
  EXPECT_FALSE(TreeIsWellFormed({Entry(0, ""), Entry(0, "a/b")}));
  EXPECT_FALSE(TreeIsWellFormed({Entry(0, ""), Entry(0, "")}));
  EXPECT_FALSE(TreeIsWellFormed({Entry(0, ""), Entry(0, "f", "file"), Entry(1, "g")}));
  EXPECT_TRUE(TreeIsWellFormed({Entry(0, ""), Entry(0, "d"), Entry(1, "g", "file")}));
}

TEST(TreeSnapshot, AModelTreeAHundredThousandDeep) {
  // Whole paths would cost 10 GB here; the snapshot has a name per entry.
  constexpr int kDepth = 100000;
  Model m;
  Node at = m.Root();
  for (int i = 0; i < kDepth; ++i) at = *m.Mkdir(at, "d", {.mode = 0755});
  (void)*m.Create(at, "f", {}, {.mode = 0600, .uid = 7});
  const std::vector<TreeEntry> t = m.Snapshot();
  ASSERT_EQ(t.size(), static_cast<size_t>(kDepth) + 2);
  ASSERT_TRUE(TreeIsWellFormed(t));
  for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i].parent, i - 1) << i;
  EXPECT_EQ(t.back().name, "f");
  EXPECT_EQ(t.back().uid, 7u);
  EXPECT_EQ(TreePath(t, t.size() - 1).size(), 2u * kDepth + 2);
}

}  // namespace
}  // namespace pathwarden
