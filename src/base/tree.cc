// Tree-shaped final trees: whole paths built on demand, and the path order
// found from parents and names (src/base/tree_order.h).

#include <algorithm>
#include <cstring>
#include <string_view>

#include "pathwarden/tree.h"
#include "src/base/tree_order.h"

namespace pathwarden {
namespace internal {
namespace {

// Whether key `a` sorts before key `b`: a key is a child's name, with a
// "/" after it when it stands for what is below the child. Names hold no
// "/", so the slash is compared with the other name's byte at that place.
bool KeyLess(std::string_view a, bool a_below, std::string_view b, bool b_below) {
  const size_t m = std::min(a.size(), b.size());
  if (m > 0) {
    const int c = std::memcmp(a.data(), b.data(), m);
    if (c != 0) return c < 0;
  }
  if (a.size() == b.size()) return !a_below && b_below;  // "n" before "n/"
  if (a.size() < b.size()) {
    if (!a_below) return true;  // a prefix of b
    return '/' < static_cast<unsigned char>(b[m]);
  }
  if (!b_below) return false;
  return static_cast<unsigned char>(a[m]) < '/';
}

}  // namespace

std::vector<uint32_t> PathOrder(const std::vector<uint32_t>& parent,
                                const std::vector<std::string_view>& name) {
  const size_t n = parent.size();
  std::vector<uint32_t> order;
  if (n == 0) return order;
  // Children of each node, in one array (first[p]..first[p + 1]).
  std::vector<uint32_t> first(n + 1, 0);
  for (size_t i = 1; i < n; ++i)
    if (parent[i] < n && parent[i] != i) ++first[parent[i] + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<uint32_t> kids(first[n]);
  {
    std::vector<uint32_t> at(first.begin(), first.end() - 1);
    for (size_t i = 1; i < n; ++i)
      if (parent[i] < n && parent[i] != i) kids[at[parent[i]]++] = static_cast<uint32_t>(i);
  }
  struct Item {
    uint32_t node;
    bool below;  // what is below `node`, not `node` itself
  };
  std::vector<Item> stack{{0, true}};
  std::vector<Item> level;
  std::vector<bool> seen(n, false);
  order.reserve(n);
  order.push_back(0);
  seen[0] = true;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    if (!it.below) {
      order.push_back(it.node);
      continue;
    }
    level.clear();
    for (uint32_t k = first[it.node]; k < first[it.node + 1]; ++k) {
      const uint32_t c = kids[k];
      if (seen[c]) continue;  // fail closed on a malformed tree: once each
      seen[c] = true;
      level.push_back({c, false});
      if (first[c + 1] > first[c]) level.push_back({c, true});
    }
    std::sort(level.begin(), level.end(), [&](const Item& a, const Item& b) {
      return KeyLess(name[a.node], a.below, name[b.node], b.below);
    });
    stack.insert(stack.end(), level.rbegin(), level.rend());
  }
  return order;
}

bool SortTreeByPath(std::vector<TreeEntry>* tree) {
  const size_t n = tree->size();
  if (n == 0) return true;
  std::vector<uint32_t> parent(n);
  std::vector<std::string_view> name(n);
  for (size_t i = 0; i < n; ++i) {
    parent[i] = (*tree)[i].parent;
    name[i] = (*tree)[i].name;
  }
  const std::vector<uint32_t> order = PathOrder(parent, name);
  if (order.size() != n) return false;
  std::vector<uint32_t> renumber(n);
  for (size_t i = 0; i < n; ++i) renumber[order[i]] = static_cast<uint32_t>(i);
  std::vector<TreeEntry> sorted;
  sorted.reserve(n);
  for (uint32_t old : order) {
    sorted.push_back(std::move((*tree)[old]));
    sorted.back().parent = renumber[sorted.back().parent];
  }
  sorted[0].parent = 0;
  *tree = std::move(sorted);
  return true;
}

}  // namespace internal

bool TreeIsWellFormed(const std::vector<TreeEntry>& tree) {
  if (tree.empty()) return true;
  if (tree[0].parent != 0 || !tree[0].name.empty() || tree[0].type != "dir") return false;
  for (size_t i = 1; i < tree.size(); ++i) {
    const TreeEntry& e = tree[i];
    if (e.parent >= i || tree[e.parent].type != "dir") return false;
    if (e.name.empty() || e.name.find('/') != std::string::npos) return false;
  }
  return true;
}

std::string TreePath(const std::vector<TreeEntry>& tree, size_t i) {
  if (i >= tree.size()) return "";
  if (i == 0) return "/";
  // The chain up to the root; a parent at or after its child (a malformed
  // tree) ends it rather than looping.
  std::vector<size_t> chain;
  size_t length = 0;
  for (size_t at = i; at != 0;) {
    chain.push_back(at);
    length += tree[at].name.size() + 1;
    const size_t up = tree[at].parent;
    if (up >= at) break;
    at = up;
  }
  std::string path;
  path.reserve(length);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    path += '/';
    path += tree[*it].name;
  }
  return path;
}

long TreeIndex(const std::vector<TreeEntry>& tree, const std::string& path) {
  if (tree.empty() || path.empty() || path[0] != '/') return -1;
  size_t at = 0;
  size_t pos = 1;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    const std::string_view component(path.data() + pos, end - pos);
    pos = end + 1;
    if (component.empty()) continue;
    size_t found = tree.size();
    for (size_t j = at + 1; j < tree.size(); ++j)
      if (tree[j].parent == at && tree[j].name == component) {
        found = j;
        break;
      }
    if (found == tree.size()) return -1;
    at = found;
  }
  return static_cast<long>(at);
}

}  // namespace pathwarden
