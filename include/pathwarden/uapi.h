// Linux UAPI values newer than Debian's 6.1 headers and glibc 2.36, as
// Linux 6.18 defines them (include/uapi/linux/*.h). Facts, not code.

#ifndef PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_
#define PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_

#include <cstdint>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

inline constexpr uint64_t kMsNosymfollow = 256;      // MS_NOSYMFOLLOW, Linux 5.10
inline constexpr uint32_t kAtExecveCheck = 0x10000;  // AT_EXECVE_CHECK, Linux 6.14

// mount_setattr(2), Linux 5.12 (include/uapi/linux/mount.h, fcntl.h):
// glibc 2.36's <sys/mount.h> and <linux/mount.h> cannot both be included.
inline constexpr uint32_t kAtRecursive = 0x8000;             // AT_RECURSIVE
inline constexpr uint64_t kMountAttrRdonly = 0x1;            // MOUNT_ATTR_RDONLY
inline constexpr uint64_t kMountAttrNosuid = 0x2;            // MOUNT_ATTR_NOSUID
inline constexpr uint64_t kMountAttrNodev = 0x4;             // MOUNT_ATTR_NODEV
inline constexpr uint64_t kMountAttrNoexec = 0x8;            // MOUNT_ATTR_NOEXEC
inline constexpr uint64_t kMountAttrAtime = 0x70;            // MOUNT_ATTR__ATIME (the mask)
inline constexpr uint64_t kMountAttrRelatime = 0x0;          // MOUNT_ATTR_RELATIME
inline constexpr uint64_t kMountAttrNoatime = 0x10;          // MOUNT_ATTR_NOATIME
inline constexpr uint64_t kMountAttrStrictatime = 0x20;      // MOUNT_ATTR_STRICTATIME
inline constexpr uint64_t kMountAttrNodiratime = 0x80;       // MOUNT_ATTR_NODIRATIME
inline constexpr uint64_t kMountAttrIdmap = 0x100000;        // MOUNT_ATTR_IDMAP
inline constexpr uint64_t kMountAttrNosymfollow = 0x200000;  // MOUNT_ATTR_NOSYMFOLLOW

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_
