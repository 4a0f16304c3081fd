// The live host's idmapped mounts: the idmapping, read with statmount().
// Linux: fs/namespace.c statmount_mnt_uidmap(), kernel/user_namespace.c
// (the map lines), fs/mnt_idmapping.c (i_uid_into_vfsuid(): an inode's
// id goes down through the map; a caller's id comes up).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "src/vfs/host.h"

namespace pathwarden::vfs {
namespace {

// The UAPI of statmount() as of Linux 6.15 (include/uapi/linux/mount.h):
// Debian's headers are older. Only the fields read here are named.
constexpr unsigned kStatxMntIdUnique = 0x4000;
constexpr long kSysStatmount = 457;
constexpr uint64_t kStatmountMntUidmap = 0x2000;
constexpr uint64_t kStatmountMntGidmap = 0x4000;
struct MntIdReq {
  uint32_t size;
  uint32_t spare;
  uint64_t mnt_id;
  uint64_t param;
};
struct Statmount {
  uint32_t size, mnt_opts;
  uint64_t mask;
  uint32_t sb_dev_major, sb_dev_minor;
  uint64_t sb_magic;
  uint32_t sb_flags, fs_type;
  uint64_t mnt_id, mnt_parent_id;
  uint32_t mnt_id_old, mnt_parent_id_old;
  uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
  uint32_t mnt_root, mnt_point;
  uint64_t mnt_ns_id;
  uint32_t fs_subtype, sb_source, opt_num, opt_array, opt_sec_num, opt_sec_array;
  uint64_t supported_mask;
  uint32_t mnt_uidmap_num, mnt_uidmap, mnt_gidmap_num, mnt_gidmap;
  uint64_t spare2[43];
};

// `n` NUL-terminated "inside outside count" lines from `at`.
bool ParseMap(const char* at, const char* end, uint32_t n, std::vector<IdRange>* out) {
  for (uint32_t k = 0; k < n; ++k) {
    const size_t len = strnlen(at, static_cast<size_t>(end - at));
    if (at + len >= end) return false;
    std::istringstream line(std::string(at, len));
    uint64_t inside, outside, count;
    if (!(line >> inside >> outside >> count) || inside > UINT32_MAX || outside > UINT32_MAX ||
        count > UINT32_MAX)
      return false;
    out->push_back({static_cast<uint32_t>(inside), static_cast<uint32_t>(outside),
                    static_cast<uint32_t>(count)});
    at += len + 1;
  }
  return true;
}

}  // namespace

Result<SbIdmap, std::string> ReadMountIdmap(const std::string& host_mp, uint32_t mnt_id) {
  struct statx stx {};
  if (statx(AT_FDCWD, host_mp.c_str(), AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
            &stx) != 0 ||
      !(stx.stx_mask & STATX_MNT_ID) || stx.stx_mnt_id != mnt_id)
    return Unexpected(fmt::format("{} is not the mount mountinfo lists", host_mp));
  if (statx(AT_FDCWD, host_mp.c_str(), AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW, kStatxMntIdUnique,
            &stx) != 0 ||
      !(stx.stx_mask & kStatxMntIdUnique))
    return Unexpected(std::string("statx does not give the mount's unique id"));
  std::vector<char> buf(sizeof(Statmount) + 65536);
  MntIdReq req{sizeof req, 0, stx.stx_mnt_id, kStatmountMntUidmap | kStatmountMntGidmap};
  if (syscall(kSysStatmount, &req, buf.data(), buf.size(), 0) != 0)
    return Unexpected(fmt::format("statmount: {}", std::strerror(errno)));
  Statmount sm;
  std::memcpy(&sm, buf.data(), sizeof sm);
  if ((sm.mask & (kStatmountMntUidmap | kStatmountMntGidmap)) !=
      (kStatmountMntUidmap | kStatmountMntGidmap))
    return Unexpected(std::string("statmount does not give the idmapping (Linux before 6.15)"));
  const char* str = buf.data() + sizeof sm;
  const char* end = buf.data() + std::min<size_t>(sm.size, buf.size());
  SbIdmap m;
  if (!ParseMap(str + sm.mnt_uidmap, end, sm.mnt_uidmap_num, &m.uids) ||
      !ParseMap(str + sm.mnt_gidmap, end, sm.mnt_gidmap_num, &m.gids))
    return Unexpected(std::string("statmount's idmapping is not \"inside outside count\" lines"));
  return m;
}

}  // namespace pathwarden::vfs
