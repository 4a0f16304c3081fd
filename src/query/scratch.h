// A directory the user lets `explain --verify --scratch DIR` change: a
// changing query is run on the kernel there only when it can touch
// nothing outside it, and the tree is put back exactly afterwards
// (names, types, contents, modes, owners, ACLs and other xattrs, access
// and modification times; a ctime cannot be set from userspace).

#ifndef PATHWARDEN_SRC_QUERY_SCRATCH_H_
#define PATHWARDEN_SRC_QUERY_SCRATCH_H_

#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "pathwarden/result.h"
#include "src/query/query.h"

namespace pathwarden::query {

// TreeState
//
// Everything below (and of) a directory that a changing call could
// change, to put it back.
struct TreeState {
  struct Entry {
    std::string rel;  // "" for the directory itself
    struct stat st {};
    std::string link;     // symlink body
    std::string content;  // regular file
    std::vector<std::pair<std::string, std::string>> xattrs;  // sorted
  };
  std::string root;
  std::vector<Entry> entries;  // parents before children
};

// Capture()
//
// Reads without changing access times (O_NOATIME). Errors: a tree too
// large to keep (over 10,000 entries or 64 MiB of contents), a mount point
// inside it, a device node, a file with links outside it.
Result<TreeState, std::string> Capture(const std::string& root);

// Restore()
//
// Puts `before` back: renames and exchanges undone (by inode: an inode
// under a name not its own goes back to its own), names added removed
// (and a name now holding another type of file), names removed made
// again (hard links as links), contents, xattrs, owners, modes, access
// and modification times set. Errors: what could not be put back.
Result<void, std::string> Restore(const TreeState& before);

// Differences()
//
// What differs between two states, ctimes and inode numbers aside ("" when
// nothing): for the check after Restore().
std::string Differences(const TreeState& a, const TreeState& b);

// Contained()
//
// Whether query `q` (relative paths from `cwd`) can touch nothing but
// what lies strictly below `root`: every path lexically below it, its
// parent resolving (symlinks followed) below it, and no symlink as the
// last component of a call that would follow it. "" when contained, else
// why not.
std::string Contained(const Query& q, const std::string& root, const std::string& cwd);

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_SCRATCH_H_
