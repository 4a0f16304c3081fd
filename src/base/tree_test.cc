// Tree-shaped trees: the path order from parents and names, whole paths
// on demand, and a Model's snapshot of a tree 100,000 deep.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
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

TEST(TreeOrder, AgreesWithSortingTheWholePathsOnRandomTrees) {
  // Names of bytes around '/' (0x2f) in random trees: the order from
  // parents and names is the order of the whole paths.
  const char kBytes[] = {'-', '.', '0', 'a', '\x01', '\xff'};
  uint64_t seed = 0x9e3779b97f4a7c15u;
  const auto next = [&seed](uint64_t n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed % n;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<TreeEntry> t = {Entry(0, "")};
    std::vector<uint32_t> dirs = {0};
    std::vector<std::string> paths = {"/"};
    for (int i = 0; i < 500; ++i) {
      const uint32_t parent = dirs[next(dirs.size())];
      std::string name;
      for (uint64_t n = 1 + next(3); n > 0; --n) name += kBytes[next(sizeof(kBytes))];
      bool taken = false;
      for (size_t j = 1; j < t.size(); ++j) taken = taken || (t[j].parent == parent && t[j].name == name);
      if (taken) continue;
      const bool dir = next(2) == 0;
      t.push_back(Entry(parent, name, dir ? "dir" : "file"));
      paths.push_back((parent == 0 ? "" : paths[parent]) + "/" + name);
      if (dir) dirs.push_back(static_cast<uint32_t>(t.size() - 1));
    }
    ASSERT_TRUE(internal::SortTreeByPath(&t));
    std::sort(paths.begin(), paths.end());
    EXPECT_EQ(Paths(t), paths) << "round " << round;
  }
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
