// /proc/PID/mountinfo: the mount tree of a process's namespace, as the
// kernel prints it (Documentation/filesystems/proc.rst 3.5;
// Linux: fs/proc_namespace.c show_mountinfo()).

#ifndef PATHWARDEN_SRC_VFS_MOUNTINFO_H_
#define PATHWARDEN_SRC_VFS_MOUNTINFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::vfs {

// OverlayOptions
//
// An overlay mount's layers and the options that change its answers, as
// ovl_show_options() prints them (Linux: fs/overlayfs/params.c): the
// layer paths are the strings the mounter gave, which may be relative to
// its working directory and are as its mount namespace and root saw them.
// An option that is not printed has the module's default
// (/sys/module/overlay/parameters/).
struct OverlayOptions {
  std::vector<std::string> lower;  // topmost first, each unescaped ("\\:" is ':')
  size_t data_only = 0;            // of which the last ones, after "::"
  std::string upper, work;         // both "" for an overlay without an upper layer
  std::string redirect_dir;        // "on", "follow", "nofollow", "off"; "" not printed
  bool userxattr = false;          // its own xattrs are user.overlay.*, not trusted.overlay.*
  bool metacopy = false;           // "metacopy=on" printed
  bool default_permissions = false;
  bool volatile_upper = false;     // "volatile"
};

// MountInfo
//
// One line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root
// rw,errors=continue".
struct MountInfo {
  uint32_t id = 0;
  uint32_t parent = 0;
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string root;        // of the mount, inside its filesystem
  std::string mountpoint;  // relative to the process's root
  uint32_t flags = 0;      // kMnt* (ro, noexec, nosuid, nodev, nosymfollow)
  std::string fstype;      // "ext4"; "fuse.sshfs" keeps its subtype
  std::string source;
  std::string super_options;
  bool sb_readonly = false;  // "ro" among the superblock's options
  bool idmapped = false;     // "idmapped" among the mount's options
  std::optional<OverlayOptions> overlay;  // for fstype "overlay"

  // The superblock's option `name` ("default_permissions"), alone or as
  // "name=value".
  bool HasSuperOption(std::string_view name) const;
  // The value of superblock option "name=value"; nullopt when absent.
  std::optional<std::string_view> SuperOptionValue(std::string_view name) const;
};

// ParseMountInfo()
//
// Every line of `text`, in order. Octal escapes (\040 for a space, \011,
// \012, \134) are decoded. Errors: "FILE:LINE:COL: what" for a line that
// does not have the kernel's shape.
Result<std::vector<MountInfo>, std::string> ParseMountInfo(std::string_view text,
                                                           std::string_view file);

// SwapFile
//
// A swap file /proc/swaps lists (Linux: mm/swapfile.c swap_show()): its
// path as the reader's root sees it, or "" when no name reaches it (a
// name removed: " (deleted)"; a line not of the kernel's shape).
struct SwapFile {
  std::string path;
};

// ParseSwaps()
//
// The swap files of /proc/swaps' `text`: after a header, a line an area,
// its name (octal escapes as in mountinfo), its type ("file" or
// "partition"; partitions are left out), sizes and priority.
std::vector<SwapFile> ParseSwaps(std::string_view text);

// WhyNotModelled()
//
// "" for a filesystem type whose permissions are its modes, ACLs and
// attributes as statx and the ACL xattrs show them (generic_permission()
// and the VFS's own checks decide, no ->permission of its own); for any
// other type, why not, in words; and for an idmapped mount of any type
// (its owners are translated by the mount's idmapping, which the model
// does not hold). docs/architecture.md lists both.
std::string WhyNotModelled(const MountInfo& m);

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_MOUNTINFO_H_
