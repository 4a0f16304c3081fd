// Final trees compared entry by entry, without whole paths and without
// recursion: the differences of two tree-shaped trees in path order.

#ifndef PATHWARDEN_SRC_SCENARIO_TREE_DIFF_H_
#define PATHWARDEN_SRC_SCENARIO_TREE_DIFF_H_

#include <vector>

#include "pathwarden/tree.h"

namespace pathwarden::internal {

// TreeDifference
//
// One object that differs: its entry in each tree, -1 on the side that
// does not have it.
struct TreeDifference {
  long engine = -1;
  long kernel = -1;
};

// TreeDifferences()
//
// Every object of `engine` or `kernel` that only one has or that the two
// describe differently (every field but the parent's index), in path
// order. The objects are matched by name from the roots down: linear in
// the entries (and a sort of each directory's children), whatever the
// depth. False when a tree is not well-formed (TreeIsWellFormed()).
bool TreeDifferences(const std::vector<TreeEntry>& engine, const std::vector<TreeEntry>& kernel,
                     std::vector<TreeDifference>* out);

// SameObject()
//
// Whether two entries describe the object the same way: every field but
// `parent` (an index, numbered per tree).
bool SameObject(const TreeEntry& a, const TreeEntry& b);

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_SCENARIO_TREE_DIFF_H_
