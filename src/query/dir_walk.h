// Walking a host directory tree relative to each directory, whatever its
// depth: the entries of the directory the walk stands in are read by
// their names (fstatat() on its descriptor), a directory is entered by
// openat() of its name and left through "..", so no path the walk passes
// to the kernel is longer than one name. A path of PATH_MAX bytes or more
// is ENAMETOOLONG to every call that takes a path, but its object is
// there, and `map` must list it (src/query/map.h).
//
// Example:
//   auto w = DirWalk::Open("/srv");
//   auto kids = w->List();             // the names in /srv, with lstat
//   w->Enter((*kids)[0]);              // into /srv/<first>, a directory
//   w->Leave();                        // back to /srv, checked

#ifndef PATHWARDEN_SRC_QUERY_DIR_WALK_H_
#define PATHWARDEN_SRC_QUERY_DIR_WALK_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::query {

// DirEntry
//
// One name of a listed directory, with its fstatat(AT_SYMLINK_NOFOLLOW |
// AT_NO_AUTOMOUNT) (a mount point: the mounted root, as the walk sees
// it); `err` the errno when that failed (ENOENT: gone since listed).
struct DirEntry {
  std::string name;
  struct stat st {};
  int err = 0;
};

// DirWalk
//
// A position in the host's tree: a stack of directories from the one
// opened to the one the walk stands in. At most kKeptFds descriptors are
// held however deep the stack: a directory deeper than that is reopened
// through ".." of its child on the way back, and must be the same
// (device and inode) or Leave() fails -- the tree changed under the walk.
class DirWalk {
 public:
  static constexpr size_t kKeptFds = 32;

  // Open()
  //
  // Stands in directory `path` (symlinks in it followed, as the user
  // named it). Errors: it cannot be opened as a directory ("...: ENOTDIR").
  static Result<DirWalk, std::string> Open(const std::string& path);

  DirWalk(DirWalk&& o) noexcept;
  DirWalk& operator=(DirWalk&&) = delete;
  DirWalk(const DirWalk&) = delete;
  ~DirWalk();

  // The directory the walk stands in: its stat, and how deep (0: opened).
  const struct stat& here() const { return frames_.back().st; }
  size_t depth() const { return frames_.size() - 1; }

  // List()
  //
  // The names in the current directory but "." and "..", in bytewise
  // order, each with its stat. Errors: the directory cannot be read.
  Result<std::vector<DirEntry>, std::string> List();

  // Enter()
  //
  // Into the directory `e` of the current listing names, without
  // following a symlink (O_NOFOLLOW | O_DIRECTORY); it must still be what
  // was listed (device and inode). Errors: it cannot be opened or is
  // another object now (the walk stays where it was).
  Result<void, std::string> Enter(const DirEntry& e);

  // Leave()
  //
  // Back into the directory the current one was entered from. Errors:
  // at the top, or ".." is not that directory any more (it moved).
  Result<void, std::string> Leave();

 private:
  struct Frame {
    int fd = -1;  // -1: closed, reopened through ".." on the way back
    struct stat st {};
  };
  DirWalk() = default;

  std::vector<Frame> frames_;
};

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_DIR_WALK_H_
