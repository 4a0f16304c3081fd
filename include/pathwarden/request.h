// File: pathwarden/request.h
//
// Requests: one typed request per family of system calls the library
// decides, with the arguments the call takes (Linux values: O_*, AT_*,
// RENAME_*, MS_*, MNT_*), a dirfd by handle (kAtFdcwd: the working
// directory), and processes by handle. A Request is any one of them;
// Model::Evaluate() and Model::Apply() take it.
//
// Example:
//   Decision d = model.Evaluate(alice, Open{.path = "/srv/www/index.html",
//                                           .flags = O_WRONLY});
//   Decision m = model.Apply(root, Mkdir{.path = "/tmp/x", .mode = 0700});

#ifndef PATHWARDEN_REQUEST_H_
#define PATHWARDEN_REQUEST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "pathwarden/handles.h"
#include "pathwarden/ruleset.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Op
//
// The operation of a request (and of a scenario step).
enum class Op : uint8_t {
  kOpen,
  kClose,
  kStat,
  kLstat,
  kAccess,
  kMkdir,
  kMknod,
  kSymlink,
  kLink,
  kUnlink,
  kRmdir,
  kRename,
  kTruncate,
  kFtruncate,
  kChmod,
  kChown,
  kLchown,
  kReadlink,
  kChdir,
  kExecCheck,
  kIoctl,
  kBindTcp,
  kConnectTcp,
  kSignal,
  kConnectAbstract,
  kSendFd,
  kMountTmpfs,
  kBindMount,
  kUmount,
  kRestrict,
  // Extensions of the scenario format.
  kUtimensat,
  kChroot,
  kFchdir,
  kGetxattr,
  kSetxattr,
  kListxattr,
  kRemovexattr,
  kFallocate,
  kFchmod,
  kFchown,
  kFutimens,
  kMountSetattr,
};

// One half of utimensat's `times` (absent: times is NULL).
enum class TimeSpec : uint8_t { kNow, kOmit, kSet };

// openat(dirfd, path, flags, mode). Apply() gives the new fd.
struct Open {
  static constexpr Op kOp = Op::kOpen;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;  // O_RDONLY
  uint32_t mode = 0644;
};
// close(fd).
struct Close {
  static constexpr Op kOp = Op::kClose;
  Fd fd = {};
};
// newfstatat(dirfd, path, flags): stat, and lstat (AT_SYMLINK_NOFOLLOW).
struct Stat {
  static constexpr Op kOp = Op::kStat;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
struct Lstat {
  static constexpr Op kOp = Op::kLstat;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// faccessat2(dirfd, path, mode, flags): mode of R_OK|W_OK|X_OK (F_OK 0).
struct Access {
  static constexpr Op kOp = Op::kAccess;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0;
  uint64_t flags = 0;
};
// execveat(dirfd, path, ..., flags | AT_EXECVE_CHECK): may it execute?
struct ExecCheck {
  static constexpr Op kOp = Op::kExecCheck;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// mkdirat(dirfd, path, mode).
struct Mkdir {
  static constexpr Op kOp = Op::kMkdir;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0755;
};
// mknodat(dirfd, path, type | mode, makedev(major, minor)); `type` is
// S_IFREG (or 0), S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK.
struct Mknod {
  static constexpr Op kOp = Op::kMknod;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t type = 0100000;  // S_IFREG
  uint32_t mode = 0644;
  uint32_t rdev_major = 1, rdev_minor = 3;
};
// symlinkat(target, dirfd, path).
struct Symlink {
  static constexpr Op kOp = Op::kSymlink;
  std::string target = {};
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// linkat(dirfd, oldpath, AT_FDCWD, newpath, flags).
struct Link {
  static constexpr Op kOp = Op::kLink;
  Fd dirfd = kAtFdcwd;
  std::string oldpath = {};
  std::string newpath = {};
  uint64_t flags = 0;
};
// unlinkat(dirfd, path, flags), and rmdir (unlinkat(..., AT_REMOVEDIR)).
struct Unlink {
  static constexpr Op kOp = Op::kUnlink;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
struct Rmdir {
  static constexpr Op kOp = Op::kRmdir;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// renameat2(dirfd, oldpath, AT_FDCWD, newpath, flags).
struct Rename {
  static constexpr Op kOp = Op::kRename;
  Fd dirfd = kAtFdcwd;
  std::string oldpath = {};
  std::string newpath = {};
  uint64_t flags = 0;
};
// truncate(path, 0), ftruncate(fd, 0).
struct Truncate {
  static constexpr Op kOp = Op::kTruncate;
  std::string path = {};
};
struct Ftruncate {
  static constexpr Op kOp = Op::kFtruncate;
  Fd fd = {};
};
// fchmodat2(dirfd, path, mode, flags).
struct Chmod {
  static constexpr Op kOp = Op::kChmod;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0;
  uint64_t flags = 0;
};
// fchownat(dirfd, path, uid, gid, flags) (-1 keeps an id); Lchown adds
// AT_SYMLINK_NOFOLLOW.
struct Chown {
  static constexpr Op kOp = Op::kChown;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  int64_t uid = -1, gid = -1;
  uint64_t flags = 0;
};
struct Lchown {
  static constexpr Op kOp = Op::kLchown;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  int64_t uid = -1, gid = -1;
  uint64_t flags = 0;
};
// utimensat(dirfd, path, times, flags).
struct Utimensat {
  static constexpr Op kOp = Op::kUtimensat;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::optional<std::array<TimeSpec, 2>> times = std::nullopt;
  uint64_t flags = 0;
};
// readlinkat(dirfd, path, ...).
struct Readlink {
  static constexpr Op kOp = Op::kReadlink;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// chdir(path), fchdir(fd), chroot(path).
struct Chdir {
  static constexpr Op kOp = Op::kChdir;
  std::string path = {};
};
struct Fchdir {
  static constexpr Op kOp = Op::kFchdir;
  Fd fd = {};
};
struct Chroot {
  static constexpr Op kOp = Op::kChroot;
  std::string path = {};
};
// getxattrat(dirfd, path, flags, name, ...) (getxattr; lgetxattr adds
// AT_SYMLINK_NOFOLLOW; fgetxattr is dirfd fd, path "", AT_EMPTY_PATH), with
// a buffer large enough for any value.
struct Getxattr {
  static constexpr Op kOp = Op::kGetxattr;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  uint64_t flags = 0;
};
// setxattrat(dirfd, path, flags, name, {value, xattr_flags}): `value` as
// the call passes it (system.posix_acl_* in the binary xattr form), and
// xattr_flags XATTR_CREATE | XATTR_REPLACE. Apply() stores it.
struct Setxattr {
  static constexpr Op kOp = Op::kSetxattr;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  std::string value = {};
  uint32_t xattr_flags = 0;
  uint64_t flags = 0;
};
// listxattrat(dirfd, path, flags, ...), with a buffer large enough.
struct Listxattr {
  static constexpr Op kOp = Op::kListxattr;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// removexattrat(dirfd, path, flags, name). Apply() removes it.
struct Removexattr {
  static constexpr Op kOp = Op::kRemovexattr;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  uint64_t flags = 0;
};
// fallocate(fd, mode, offset, len): mode of FALLOC_FL_*.
struct Fallocate {
  static constexpr Op kOp = Op::kFallocate;
  Fd fd = {};
  uint32_t mode = 0;
  uint64_t offset = 0, len = 1;
};
// fchmod(fd, mode), fchown(fd, uid, gid) (-1 keeps an id), futimens(fd,
// times).
struct Fchmod {
  static constexpr Op kOp = Op::kFchmod;
  Fd fd = {};
  uint32_t mode = 0;
};
struct Fchown {
  static constexpr Op kOp = Op::kFchown;
  Fd fd = {};
  int64_t uid = -1, gid = -1;
};
struct Futimens {
  static constexpr Op kOp = Op::kFutimens;
  Fd fd = {};
  std::optional<std::array<TimeSpec, 2>> times = std::nullopt;
};
// mount("tmpfs", path, "tmpfs", flags), mount(source, target, MS_BIND |
// flags), umount2(path, flags).
struct MountTmpfs {
  static constexpr Op kOp = Op::kMountTmpfs;
  std::string path = {};
  uint64_t flags = 0;
};
struct BindMount {
  static constexpr Op kOp = Op::kBindMount;
  std::string source = {};
  std::string target = {};
  uint64_t flags = 0;
};
struct Umount {
  static constexpr Op kOp = Op::kUmount;
  std::string path = {};
  uint64_t flags = 0;
};
// mount_setattr(dirfd, path, flags, {attr_set, attr_clr}): flags of
// AT_EMPTY_PATH | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
// attr_set and attr_clr of MOUNT_ATTR_* (pathwarden/uapi.h); no
// propagation change, and no user namespace for MOUNT_ATTR_IDMAP (unknown).
struct MountSetattr {
  static constexpr Op kOp = Op::kMountSetattr;
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
  uint64_t attr_set = 0, attr_clr = 0;
};
// ioctl(fd, cmd, ...): the permission checks only.
struct Ioctl {
  static constexpr Op kOp = Op::kIoctl;
  Fd fd = {};
  uint32_t cmd = 0;
};
// bind() and connect() of a TCP socket on loopback.
struct BindTcp {
  static constexpr Op kOp = Op::kBindTcp;
  uint32_t port = 0;
};
struct ConnectTcp {
  static constexpr Op kOp = Op::kConnectTcp;
  uint32_t port = 0;
};
// kill(target, 0); connect() to the abstract UNIX socket `target`
// listens on; passing `fd` to `target` over a UNIX socket (Apply() gives
// the fd the target receives).
struct Signal {
  static constexpr Op kOp = Op::kSignal;
  Process target = {};
};
struct ConnectAbstract {
  static constexpr Op kOp = Op::kConnectAbstract;
  Process target = {};
};
struct SendFd {
  static constexpr Op kOp = Op::kSendFd;
  Fd fd = {};
  Process target = {};
};
// landlock_create_ruleset() + landlock_add_rule() for each rule, in order
// + landlock_restrict_self(): one new layer.
struct Restrict {
  static constexpr Op kOp = Op::kRestrict;
  LandlockRuleset ruleset = {};
};

using Request =
    std::variant<Open, Close, Stat, Lstat, Access, ExecCheck, Mkdir, Mknod, Symlink, Link, Unlink,
                 Rmdir, Rename, Truncate, Ftruncate, Chmod, Chown, Lchown, Utimensat, Readlink,
                 Chdir, Fchdir, Chroot, MountTmpfs, BindMount, Umount, Ioctl, BindTcp, ConnectTcp,
                 Signal, ConnectAbstract, SendFd, Restrict, Getxattr, Setxattr, Listxattr,
                 Removexattr, Fallocate, Fchmod, Fchown, Futimens, MountSetattr>;

// OpOf()
//
// The operation a request asks for (each request type's kOp).
Op OpOf(const Request& r);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_REQUEST_H_
