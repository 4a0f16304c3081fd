// Trees in path order without whole paths: the order their paths would
// sort in, found from parents and names alone, with an explicit stack (no
// recursion, however deep the tree).

#ifndef PATHWARDEN_SRC_BASE_TREE_ORDER_H_
#define PATHWARDEN_SRC_BASE_TREE_ORDER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "pathwarden/tree.h"

namespace pathwarden::internal {

// PathOrder()
//
// The nodes 0..n-1 of a tree (node 0 the root; `parent[i]` the node
// holding node i, `name[i]` its name, without "/") in the order their
// whole paths sort bytewise. A directory's subtree is not contiguous in
// that order: "/a" < "/a-b" < "/a/c" ('-' sorts before '/'), so each
// directory's children are ordered as the keys "name" (the child) and
// "name/" (what is below it). Nodes not reachable from the root (a parent
// cycle) are left out. O(n log n) time, O(n) memory.
std::vector<uint32_t> PathOrder(const std::vector<uint32_t>& parent,
                                const std::vector<std::string_view>& name);

// SortTreeByPath()
//
// Puts `tree` (entry 0 the root, parents as indices into `tree` in any
// order) in path order, its parents renumbered. False, and `tree` as it
// was, when some entry is not reachable from the root.
bool SortTreeByPath(std::vector<TreeEntry>* tree);

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_TREE_ORDER_H_
