// A scratch tree as text, for the tests that check a change to it was put
// back exactly (src/query/scratch_test.cc, tests/host/explain_changes_test.cc).

#ifndef PATHWARDEN_SRC_QUERY_LISTING_TEST_UTIL_H_
#define PATHWARDEN_SRC_QUERY_LISTING_TEST_UTIL_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "src/base/dir_names.h"

namespace pathwarden::query_testing {

// ListingOptions
//
// What a listing shows beyond type, mode, owner, size, links, access and
// modification times, symlink body, contents and xattrs.
struct ListingOptions {
  // Inode numbers (a rename is undone by inode), 0 for the names this says
  // were removed and made again; null: no inode numbers.
  std::function<bool(const std::string& rel)> remade;
  // A symlink's access time, put back after readlink() moved it; false:
  // left out (for trees whose symlinks a model reads on the host, which
  // moves it).
  bool symlink_atime = true;
};

// Listing()
//
// Everything of the tree under `root` a change may touch, one line per
// name, sorted, read without moving an access time (ctimes aside).
inline std::string Listing(const std::string& root, const ListingOptions& o,
                           const std::string& rel = "") {
  const std::string path = rel.empty() ? root : root + "/" + rel;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno) + "\n";
  const timespec atime = st.st_atim;
  if (S_ISLNK(st.st_mode) && !o.symlink_atime) st.st_atim = {};
  std::string line = fmt::format("{} {:o} {}:{} size {} nlink {} atime {}.{} mtime {}.{}",
                                 rel.empty() ? "." : rel, st.st_mode, st.st_uid, st.st_gid,
                                 st.st_size, st.st_nlink, st.st_atim.tv_sec, st.st_atim.tv_nsec,
                                 st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  if (o.remade) line += fmt::format(" ino {}", o.remade(rel) ? 0 : st.st_ino);
  char buf[4096];
  if (S_ISLNK(st.st_mode)) {
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    line += " -> " + std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
    if (o.symlink_atime) {
      const timespec times[2] = {atime, {0, UTIME_OMIT}};  // readlink() moved it
      utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
  } else if (S_ISREG(st.st_mode)) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOATIME | O_NOFOLLOW | O_CLOEXEC);
    const ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (fd >= 0) close(fd);
    line += " \"" + std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) + "\"";
  }
  const ssize_t len = llistxattr(path.c_str(), buf, sizeof buf);
  std::vector<std::string> names;
  for (ssize_t i = 0; i < len; i += static_cast<ssize_t>(std::strlen(buf + i)) + 1)
    names.emplace_back(buf + i);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    char value[1024];
    const ssize_t vl = lgetxattr(path.c_str(), n.c_str(), value, sizeof value);
    line += " " + n + "=";
    for (ssize_t i = 0; i < vl; ++i) line += fmt::format("{:02x}", static_cast<uint8_t>(value[i]));
  }
  std::string out = line + "\n";
  if (S_ISDIR(st.st_mode)) {
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOATIME | O_CLOEXEC);
    std::vector<std::string> kids;
    if (fd >= 0) {
      (void)internal::ForEachDirEntry(fd, [&](std::string_view name, ino_t, unsigned char) {
        kids.push_back(rel.empty() ? std::string(name) : rel + "/" + std::string(name));
      });
      close(fd);
    }
    std::sort(kids.begin(), kids.end());
    for (const std::string& k : kids) out += Listing(root, o, k);
  }
  return out;
}

}  // namespace pathwarden::query_testing

#endif  // PATHWARDEN_SRC_QUERY_LISTING_TEST_UTIL_H_
