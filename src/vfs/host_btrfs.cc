// The live host's btrfs subvolumes: which one an inode belongs to, and
// whether it is read-only. Each subvolume shows its own anonymous st_dev
// under one superblock (mountinfo shows the superblock's); its flags are
// read once, with BTRFS_IOC_GET_SUBVOL_INFO on a directory of it, opened
// for reading: an open of a directory reads nothing and changes nothing
// (not even its access time), and the ioctl needs no privilege (Linux
// 4.18 on). Linux: fs/btrfs/ioctl.c btrfs_ioctl_get_subvol_info(),
// fs/btrfs/inode.c btrfs_permission(), btrfs_getattr() (the anonymous
// device).

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "src/vfs/host.h"

namespace pathwarden::vfs {
namespace {

// BTRFS_EMPTY_SUBVOL_DIR_OBJECTID: where a snapshot met a subvolume
// nested in its source, an empty directory of its own kind stands.
constexpr uint64_t kEmptySubvolDirIno = 2;

}  // namespace

void HostBackend::ReadSubvolFlags(const std::string& path, bool automount, Subvol* s) {
  s->why.clear();
  if (automount) {
    s->why = "its btrfs subvolume's flags are read by opening a directory of it, and this one is "
             "an automount point";
    return;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  btrfs_ioctl_get_subvol_info_args info{};
  // It answers 1, not 0, for every subvolume but the top one (6.18: the
  // last tree search's "not found exactly"), having filled it.
  if (fd < 0 || ioctl(fd, BTRFS_IOC_GET_SUBVOL_INFO, &info) < 0) {
    s->why = fmt::format("whether its btrfs subvolume is read-only cannot be read "
                         "(BTRFS_IOC_GET_SUBVOL_INFO on {}: {})",
                         path, std::strerror(errno));
  } else {
    s->readonly = (info.flags & BTRFS_ROOT_SUBVOL_RDONLY) != 0;
  }
  if (fd >= 0) close(fd);
}

uint32_t HostBackend::SubvolFlags(const Found& f, std::string* why) {
  if (S_ISDIR(f.mode) && f.ino == kEmptySubvolDirIno) {
    *why =
        "an empty btrfs placeholder where a snapshot met a subvolume nested in its source "
        "(BTRFS_EMPTY_SUBVOL_DIR_OBJECTID): its own inode operations, which create nothing and "
        "refuse renames into it; not modelled";
    return 0;
  }
  auto it = subvols_.find(f.dev);
  // A model that revalidates reads a subvolume's flag again at its root
  // (btrfs property set ro; a device number a new subvolume took over).
  if (it != subvols_.end() && revalidates_ && S_ISDIR(f.mode) &&
      f.ino == BTRFS_FIRST_FREE_OBJECTID && !f.path.empty() && it->second.slot <= kInodeSubvolMax)
    ReadSubvolFlags(std::string(f.path), f.automount, &it->second);
  if (it == subvols_.end()) {
    // Only a directory is opened: a file's subvolume is its directory's,
    // read before it.
    if (!S_ISDIR(f.mode) || f.path.empty()) {
      *why = "its btrfs subvolume's flags are read from a directory of it, and none was read";
      return 0;
    }
    Subvol s;
    s.slot = static_cast<uint32_t>(subvols_.size() + 1);
    if (s.slot > kInodeSubvolMax)
      s.why = fmt::format("more than {} btrfs subvolumes", kInodeSubvolMax);
    else
      ReadSubvolFlags(std::string(f.path), f.automount, &s);
    it = subvols_.emplace(f.dev, std::move(s)).first;
  }
  const Subvol& s = it->second;
  if (!s.why.empty()) {
    *why = s.why;
    return 0;
  }
  uint32_t flags = s.slot << kInodeSubvolShift;
  if (s.readonly) flags |= kInodeSubvolReadonly;
  if (S_ISDIR(f.mode) && f.ino == BTRFS_FIRST_FREE_OBJECTID) flags |= kInodeSubvolRoot;
  return flags;
}

}  // namespace pathwarden::vfs
