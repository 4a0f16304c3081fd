// A host tree walked relative to each directory (dir_walk.h).
// Linux: fs/namei.c follow_dotdot() ("..": up through a mount's root to
// the directory holding its mount point), fs/stat.c vfs_fstatat().

#include "src/query/dir_walk.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/base/dir_names.h"

namespace pathwarden::query {
namespace {

bool Same(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A directory opened for reading its names: O_NOATIME where the caller
// may (owner or CAP_FOWNER), so that listing changes nothing.
int OpenDir(int at, const char* name, int extra) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | extra;
  int fd = openat(at, name, flags | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = openat(at, name, flags);
  return fd;
}

}  // namespace

Result<DirWalk, std::string> DirWalk::Open(const std::string& path) {
  const int fd = OpenDir(AT_FDCWD, path.c_str(), 0);
  if (fd < 0) return Unexpected(fmt::format("open: {}", ErrnoName(errno)));
  Frame f{fd, {}};
  if (fstat(fd, &f.st) != 0) {
    const int err = errno;
    close(fd);
    return Unexpected(fmt::format("fstat: {}", ErrnoName(err)));
  }
  DirWalk w;
  w.frames_.push_back(f);
  return w;
}

DirWalk::DirWalk(DirWalk&& o) noexcept : frames_(std::move(o.frames_)) { o.frames_.clear(); }

DirWalk::~DirWalk() {
  for (const Frame& f : frames_)
    if (f.fd >= 0) close(f.fd);
}

Result<std::vector<DirEntry>, std::string> DirWalk::List() {
  // A descriptor of its own, at the directory's start.
  const int fd = OpenDir(frames_.back().fd, ".", 0);
  if (fd < 0) return Unexpected(fmt::format("open: {}", ErrnoName(errno)));
  std::vector<DirEntry> out;
  const int err = internal::ForEachDirEntry(fd, [&](std::string_view name, ino_t, unsigned char) {
    out.push_back({std::string(name), {}, 0});
  });
  close(fd);
  if (err != 0) return Unexpected(fmt::format("getdents64: {}", ErrnoName(err)));
  std::sort(out.begin(), out.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  for (DirEntry& e : out)
    if (fstatat(frames_.back().fd, e.name.c_str(), &e.st,
                AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0)
      e.err = errno;
  return out;
}

Result<void, std::string> DirWalk::Enter(const DirEntry& e) {
  Frame& here = frames_.back();
  const int fd = OpenDir(here.fd, e.name.c_str(), O_NOFOLLOW);
  if (fd < 0) return Unexpected(fmt::format("open: {}", ErrnoName(errno)));
  Frame f{fd, {}};
  if (fstat(fd, &f.st) != 0 || !Same(f.st, e.st)) {
    close(fd);
    return Unexpected(std::string("replaced since it was listed"));
  }
  // Deep down, the directory left behind is reopened through ".." later.
  if (frames_.size() > kKeptFds) {
    close(here.fd);
    here.fd = -1;
  }
  frames_.push_back(f);
  return {};
}

Result<void, std::string> DirWalk::Leave() {
  if (frames_.size() < 2) return Unexpected(std::string("at the top of the walk"));
  Frame child = frames_.back();
  frames_.pop_back();
  Frame& parent = frames_.back();
  if (parent.fd < 0) {
    const int fd = OpenDir(child.fd, "..", 0);
    struct stat st {};
    const bool same = fd >= 0 && fstat(fd, &st) == 0 && Same(st, parent.st);
    close(child.fd);
    if (!same) {
      if (fd >= 0) close(fd);
      // The walk cannot go on from here: no descriptor is left.
      for (const Frame& f : frames_)
        if (f.fd >= 0) close(f.fd);
      frames_.clear();
      frames_.push_back({-1, {}});
      return Unexpected(std::string("\"..\" is not the directory the walk came from: the tree "
                                    "moved under the walk"));
    }
    parent.fd = fd;
    return {};
  }
  close(child.fd);
  return {};
}

}  // namespace pathwarden::query
