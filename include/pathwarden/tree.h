// File: pathwarden/tree.h
//
// A tree as a list of entries, one per object a process sees (mounts
// included): what Model::Snapshot() gives and what the scenario
// executors compare.
//
// Example:
//   for (const TreeEntry& e : model.Snapshot())
//     std::cout << e.path << " " << e.type << " " << std::oct << e.mode << "\n";

#ifndef PATHWARDEN_TREE_H_
#define PATHWARDEN_TREE_H_

#include <cstdint>
#include <string>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// TreeEntry
//
// One object of the final tree as the scenario's root process sees it,
// mounts included. `type` is "file", "dir", "symlink", "fifo", "socket",
// "char" or "block" (the scenario format's node type names). ACLs are PosixAcl::ToText() ("" when
// none). `size` is the content length of regular files (0 for others).
struct TreeEntry {
  std::string path;
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

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_TREE_H_
