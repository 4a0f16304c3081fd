// A directory's entries, read with getdents64() into a buffer on the
// stack. opendir() allocates 32 KiB per directory; under ASan each such
// allocation lands on fresh memory (its quarantine) and faults its pages
// in, which was a third of the time of the tests that list a scratch
// tree after every query (ExplainChangesTest, docs/performance.md §8).

#ifndef PATHWARDEN_SRC_BASE_DIR_NAMES_H_
#define PATHWARDEN_SRC_BASE_DIR_NAMES_H_

#include <dirent.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::internal {

// ForEachDirEntry()
//
// Calls `fn(name, ino, type)` (type: DT_DIR, DT_REG, ..., DT_UNKNOWN where
// the filesystem does not say) for each entry of the directory open at
// `fd` from its current offset (a descriptor just opened: all of them),
// "." and ".." left out, in the filesystem's order. `fd` stays open, at
// the end of the directory. 0, or the errno of getdents64() (ENOENT, a
// directory since removed, is none: the end, as glibc's readdir() has it).
template <typename Fn>
int ForEachDirEntry(int fd, Fn&& fn) {
  alignas(dirent64) char buf[8192];
  for (;;) {
    const ssize_t n = getdents64(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    // A directory removed has no entries (Linux: fs/readdir.c
    // iterate_dir() answers ENOENT for a dead directory): the end, as
    // glibc's readdir() takes it.
    if (n < 0 && errno == ENOENT) return 0;
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + at);
      at += e->d_reclen;
      const std::string_view name(e->d_name, std::strlen(e->d_name));
      if (name == "." || name == "..") continue;
      fn(name, static_cast<ino_t>(e->d_ino), e->d_type);
    }
  }
}

// ReadDirNames()
//
// The names ForEachDirEntry() gives, or its errno.
Result<std::vector<std::string>, int> ReadDirNames(int fd);

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_DIR_NAMES_H_
