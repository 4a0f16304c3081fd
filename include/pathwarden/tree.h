// File: pathwarden/tree.h
//
// A tree as a list of entries, one per object a process sees (mounts
// included): what Model::Snapshot() gives and what the scenario
// executors compare. The list is tree-shaped: each entry names its parent
// (an index into the list) and its own name, not its whole path, so a
// tree 100,000 directories deep costs memory in proportion to its entries
// (whole paths would cost the entries times the depth: gigabytes).
//
// Example:
//   const std::vector<TreeEntry> tree = model.Snapshot();
//   for (size_t i = 0; i < tree.size(); ++i)
//     std::cout << TreePath(tree, i) << " " << tree[i].type << "\n";

#ifndef PATHWARDEN_TREE_H_
#define PATHWARDEN_TREE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// TreeEntry
//
// One object of the final tree as the scenario's root process sees it,
// mounts included. `parent` is the index of the directory holding it in
// the same list, `name` its name there; the root is entry 0, named "",
// its own parent. `type` is "file", "dir", "symlink", "fifo", "socket",
// "char" or "block" (the scenario format's node type names). ACLs are PosixAcl::ToText() ("" when
// none). `size` is the content length of regular files (0 for others).
struct TreeEntry {
  uint32_t parent = 0;
  std::string name;
  std::string type;
  uint32_t mode = 0;  // permission bits with setuid/setgid/sticky
  uint32_t uid = 0, gid = 0;
  uint32_t nlink = 0;
  uint64_t size = 0;
  std::string target;                       // symlinks
  uint32_t rdev_major = 0, rdev_minor = 0;  // devices
  std::string acl, default_acl;
  // The other extended attributes, as read back by root: `name="value"`
  // by name, joined by ", " (bytes outside printable ASCII as \xHH); a
  // value that reads as an error shows it: `security.capability=<EINVAL>`.
  std::string xattrs;
  friend bool operator==(const TreeEntry&, const TreeEntry&) = default;
};

// A tree's entries are in path order: sorted as their whole paths would
// sort (bytewise), so every entry comes after its parent.

// TreeIsWellFormed()
//
// True when `tree` is empty, or when entry 0 is the root (named "", its
// own parent) and every other entry has a nonempty name without "/" and a
// parent before it that is a directory.
bool TreeIsWellFormed(const std::vector<TreeEntry>& tree);

// TreePath()
//
// The whole path of entry `i` ("/" for the root, "/a/b" below it): as long
// as the entry is deep, so build it only for the entries shown. "" when
// `i` is out of range. Requires a well-formed tree.
std::string TreePath(const std::vector<TreeEntry>& tree, size_t i);

// TreeIndex()
//
// The index of the entry whose path is `path` ("/a/b"), or -1 when there
// is none. Follows the components down from the root: for tests and small
// look-ups.
long TreeIndex(const std::vector<TreeEntry>& tree, const std::string& path);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_TREE_H_
