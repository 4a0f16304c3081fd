// Final trees, described and compared: what `check --both` and the fuzzer
// report when the engine's tree and the kernel's differ.

#include "src/scenario/tree_diff.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "pathwarden/executor.h"
#include "src/base/tree_order.h"

namespace pathwarden {
namespace internal {
namespace {

// A new field must be compared in SameObject(); this size (GCC 12, x86-64)
// makes the compiler say so.
static_assert(sizeof(TreeEntry) == 232, "TreeEntry changed: update SameObject()");

// The children of every entry, sorted by name: kids[first[i]..first[i + 1]).
struct Children {
  std::vector<uint32_t> first, kids;
};

Children ChildrenOf(const std::vector<TreeEntry>& t) {
  Children c;
  const size_t n = t.size();
  c.first.assign(n + 1, 0);
  for (size_t i = 1; i < n; ++i) ++c.first[t[i].parent + 1];
  for (size_t i = 0; i < n; ++i) c.first[i + 1] += c.first[i];
  c.kids.resize(c.first[n]);
  std::vector<uint32_t> at(c.first.begin(), c.first.end() - 1);
  for (size_t i = 1; i < n; ++i) c.kids[at[t[i].parent]++] = static_cast<uint32_t>(i);
  for (size_t i = 0; i < n; ++i)
    std::sort(c.kids.begin() + c.first[i], c.kids.begin() + c.first[i + 1],
              [&](uint32_t a, uint32_t b) { return t[a].name < t[b].name; });
  return c;
}

}  // namespace

bool SameObject(const TreeEntry& a, const TreeEntry& b) {
  return a.name == b.name && a.type == b.type && a.mode == b.mode && a.uid == b.uid &&
         a.gid == b.gid && a.nlink == b.nlink && a.size == b.size && a.target == b.target &&
         a.rdev_major == b.rdev_major && a.rdev_minor == b.rdev_minor && a.acl == b.acl &&
         a.default_acl == b.default_acl && a.xattrs == b.xattrs;
}

bool TreeDifferences(const std::vector<TreeEntry>& engine, const std::vector<TreeEntry>& kernel,
                     std::vector<TreeDifference>* out) {
  out->clear();
  if (!TreeIsWellFormed(engine) || !TreeIsWellFormed(kernel)) return false;
  const size_t ne = engine.size(), nk = kernel.size();
  // Match the objects by name from the roots down, a pair at a time.
  std::vector<long> kernel_of(ne, -1), engine_of(nk, -1);
  if (ne > 0 && nk > 0) {
    const Children ce = ChildrenOf(engine), ck = ChildrenOf(kernel);
    kernel_of[0] = 0;
    engine_of[0] = 0;
    std::vector<std::pair<uint32_t, uint32_t>> pairs{{0, 0}};
    while (!pairs.empty()) {
      const auto [e, k] = pairs.back();
      pairs.pop_back();
      uint32_t a = ce.first[e], b = ck.first[k];
      while (a < ce.first[e + 1] && b < ck.first[k + 1]) {
        const TreeEntry& x = engine[ce.kids[a]];
        const TreeEntry& y = kernel[ck.kids[b]];
        if (x.name < y.name) {
          ++a;
        } else if (y.name < x.name) {
          ++b;
        } else {
          kernel_of[ce.kids[a]] = ck.kids[b];
          engine_of[ck.kids[b]] = ce.kids[a];
          pairs.push_back({ce.kids[a], ck.kids[b]});
          ++a;
          ++b;
        }
      }
    }
  }
  // The union of both trees: the engine's entries, then the kernel's that
  // the engine does not have (each after its parent, so its parent's
  // number is known).
  std::vector<uint32_t> parent;
  std::vector<std::string_view> name;
  std::vector<long> union_of(nk, -1), kernel_only;
  parent.reserve(ne + nk);
  name.reserve(ne + nk);
  for (const TreeEntry& e : engine) {
    parent.push_back(e.parent);
    name.push_back(e.name);
  }
  for (size_t j = 0; j < nk; ++j) {
    if (engine_of[j] >= 0) {
      union_of[j] = engine_of[j];
      continue;
    }
    union_of[j] = static_cast<long>(parent.size());
    parent.push_back(j == 0 ? 0 : static_cast<uint32_t>(union_of[kernel[j].parent]));
    name.push_back(kernel[j].name);
    kernel_only.push_back(static_cast<long>(j));
  }
  for (uint32_t u : PathOrder(parent, name)) {
    TreeDifference d;
    if (u < ne) {
      d.engine = u;
      d.kernel = kernel_of[u];
    } else {
      d.kernel = kernel_only[u - ne];
    }
    if (d.engine >= 0 && d.kernel >= 0 && SameObject(engine[d.engine], kernel[d.kernel])) continue;
    out->push_back(d);
  }
  return true;
}

}  // namespace internal

std::string DescribeTreeEntry(const TreeEntry& e) {
  std::string s = fmt::format("{} 0{:o} {}:{} nlink {}", e.type, e.mode, e.uid, e.gid, e.nlink);
  if (e.type == "file") s += fmt::format(" size {}", e.size);
  if (e.type == "symlink") s += fmt::format(" -> \"{}\"", e.target);
  if (e.type == "char" || e.type == "block") s += fmt::format(" {}:{}", e.rdev_major, e.rdev_minor);
  if (!e.acl.empty()) s += " acl " + e.acl;
  if (!e.default_acl.empty()) s += " default " + e.default_acl;
  if (!e.xattrs.empty()) s += " xattrs " + e.xattrs;
  return s;
}

std::vector<std::string> DiffTrees(const std::vector<TreeEntry>& engine,
                                   const std::vector<TreeEntry>& kernel, size_t limit,
                                   size_t* count) {
  std::vector<std::string> out;
  std::vector<internal::TreeDifference> diffs;
  if (!internal::TreeDifferences(engine, kernel, &diffs)) {
    // Fail closed: a tree that cannot be compared differs.
    out.push_back(fmt::format("/: the {} tree is malformed",
                              TreeIsWellFormed(engine) ? "kernel" : "engine"));
    if (count != nullptr) *count = 1;
    return out;
  }
  if (count != nullptr) *count = diffs.size();
  for (const internal::TreeDifference& d : diffs) {
    if (out.size() >= limit) break;
    if (d.kernel < 0) {
      out.push_back(fmt::format("{}: engine {}, kernel: none", TreePath(engine, d.engine),
                                DescribeTreeEntry(engine[d.engine])));
    } else if (d.engine < 0) {
      out.push_back(fmt::format("{}: engine: none, kernel {}", TreePath(kernel, d.kernel),
                                DescribeTreeEntry(kernel[d.kernel])));
    } else {
      out.push_back(fmt::format("{}: engine {}, kernel {}", TreePath(engine, d.engine),
                                DescribeTreeEntry(engine[d.engine]),
                                DescribeTreeEntry(kernel[d.kernel])));
    }
  }
  return out;
}

}  // namespace pathwarden
