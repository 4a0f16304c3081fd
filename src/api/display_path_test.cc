// World::DisplayPathOf(): the paths reasons name. Whole up to
// kDisplayPathMax bytes; past it "…" and the longest tail of whole
// components that fits; the same whatever this thread's cache of display
// paths holds (a chain asks for a child of its last path; a reader that
// raced a write clears it; a rename moves every path below).

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/vfs/world.h"

namespace pathwarden {
namespace {

constexpr size_t kMax = vfs::World::kDisplayPathMax;

// What DisplayPathOf() must give for a whole path, by the rule alone.
std::string Expected(const std::string& whole) {
  if (whole.size() <= kMax) return whole;
  size_t from = 0;
  while (whole.size() - from > kMax) from = whole.find('/', from + 1);
  return "\u2026" + whole.substr(from);
}

vfs::PathPos Pos(Node n) { return {n.mount, n.dentry}; }

struct Chain {
  Model m;
  std::vector<Node> nodes;  // top down
  // A chain `depth` deep whose names are `name(level)`.
  template <class Name>
  Chain(int depth, Name&& name) {
    Node at = m.Root();
    for (int i = 0; i < depth; ++i) {
      at = *m.Mkdir(at, name(i));
      nodes.push_back(at);
    }
  }
  const vfs::World& w() const { return m.impl().engine.world(); }
  std::string Display(Node n) const { return w().DisplayPathOf(Pos(n), w().root()); }
  std::string Whole(Node n) const { return w().PathOf(Pos(n), w().root()); }
};

TEST(DisplayPath, WholeUpToTheLimitThenTheTail) {
  // Names of 1 to 200 bytes: the cut falls on every kind of boundary.
  Chain c(400, [](int i) { return std::string(1 + (i * 37) % 200, char('a' + i % 26)); });
  size_t cut = 0;
  for (const Node& n : c.nodes) {  // top down: each walk ends at the cached parent
    const std::string whole = c.Whole(n);
    ASSERT_EQ(c.Display(n), Expected(whole)) << whole.size() << " bytes";
    cut += whole.size() > kMax;
  }
  EXPECT_GT(cut, 300u);
  // Cold, and in a random order: the same text.
  std::mt19937 rng(7);
  std::vector<Node> shuffled = c.nodes;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (const Node& n : shuffled) {
    vfs::World::ClearDisplayCache();
    ASSERT_EQ(c.Display(n), Expected(c.Whole(n)));
    ASSERT_EQ(c.Display(n), Expected(c.Whole(n)));  // warm
  }
  EXPECT_EQ(c.w().DisplayPathOf(c.w().root(), c.w().root()), "/");
}

TEST(DisplayPath, AChainPastPathMaxCostsItsTailNotItsDepth) {
  // 20,000 levels of "/d": 40,000 bytes, ten times PATH_MAX.
  Chain c(20000, [](int) { return std::string("d"); });
  for (size_t i = 0; i < c.nodes.size(); i += 997) {
    vfs::World::ClearDisplayCache();
    EXPECT_EQ(c.Display(c.nodes[i]), Expected(c.Whole(c.nodes[i])));
  }
  const std::string bottom = c.Display(c.nodes.back());
  EXPECT_EQ(bottom.size(), kMax + std::string("\u2026").size());
  EXPECT_EQ(bottom.substr(bottom.size() - 4), "/d/d");
}

TEST(DisplayPath, ARenameMovesEveryPathBelow) {
  Model m;
  const Node a = *m.Mkdir(m.Root(), "a");
  const Node b = *m.Mkdir(a, "b");
  const Node c = *m.Mkdir(b, "c");
  const vfs::World& w = m.impl().engine.world();
  EXPECT_EQ(w.DisplayPathOf(Pos(c), w.root()), "/a/b/c");
  EXPECT_EQ(w.DisplayPathOf(Pos(b), w.root()), "/a/b");
  ASSERT_TRUE(m.Apply(m.Init(), Rename{.oldpath = "/a", .newpath = "/x"}).allowed());
  EXPECT_EQ(w.DisplayPathOf(Pos(c), w.root()), "/x/b/c");
  EXPECT_EQ(w.DisplayPathOf(Pos(b), w.root()), "/x/b");
  // A creation moves no path: what was cached stays right.
  (void)*m.Mkdir(b, "new");
  EXPECT_EQ(w.DisplayPathOf(Pos(c), w.root()), "/x/b/c");
}

}  // namespace
}  // namespace pathwarden
