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
};

// One half of utimensat's `times` (absent: times is NULL).
enum class TimeSpec : uint8_t { kNow, kOmit, kSet };

// openat(dirfd, path, flags, mode). Apply() gives the new fd.
struct Open {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;  // O_RDONLY
  uint32_t mode = 0644;
};
// close(fd).
struct Close {
  Fd fd = {};
};
// newfstatat(dirfd, path, flags): stat, and lstat (AT_SYMLINK_NOFOLLOW).
struct Stat {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
struct Lstat {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// faccessat2(dirfd, path, mode, flags): mode of R_OK|W_OK|X_OK (F_OK 0).
struct Access {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0;
  uint64_t flags = 0;
};
// execveat(dirfd, path, ..., flags | AT_EXECVE_CHECK): may it execute?
struct ExecCheck {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// mkdirat(dirfd, path, mode).
struct Mkdir {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0755;
};
// mknodat(dirfd, path, type | mode, makedev(major, minor)); `type` is
// S_IFREG (or 0), S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK.
struct Mknod {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t type = 0100000;  // S_IFREG
  uint32_t mode = 0644;
  uint32_t rdev_major = 1, rdev_minor = 3;
};
// symlinkat(target, dirfd, path).
struct Symlink {
  std::string target = {};
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// linkat(dirfd, oldpath, AT_FDCWD, newpath, flags).
struct Link {
  Fd dirfd = kAtFdcwd;
  std::string oldpath = {};
  std::string newpath = {};
  uint64_t flags = 0;
};
// unlinkat(dirfd, path, flags), and rmdir (unlinkat(..., AT_REMOVEDIR)).
struct Unlink {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
struct Rmdir {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// renameat2(dirfd, oldpath, AT_FDCWD, newpath, flags).
struct Rename {
  Fd dirfd = kAtFdcwd;
  std::string oldpath = {};
  std::string newpath = {};
  uint64_t flags = 0;
};
// truncate(path, 0), ftruncate(fd, 0).
struct Truncate {
  std::string path = {};
};
struct Ftruncate {
  Fd fd = {};
};
// fchmodat2(dirfd, path, mode, flags).
struct Chmod {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint32_t mode = 0;
  uint64_t flags = 0;
};
// fchownat(dirfd, path, uid, gid, flags) (-1 keeps an id); Lchown adds
// AT_SYMLINK_NOFOLLOW.
struct Chown {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  int64_t uid = -1, gid = -1;
  uint64_t flags = 0;
};
struct Lchown {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  int64_t uid = -1, gid = -1;
  uint64_t flags = 0;
};
// utimensat(dirfd, path, times, flags).
struct Utimensat {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::optional<std::array<TimeSpec, 2>> times = std::nullopt;
  uint64_t flags = 0;
};
// readlinkat(dirfd, path, ...).
struct Readlink {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
};
// chdir(path), fchdir(fd), chroot(path).
struct Chdir {
  std::string path = {};
};
struct Fchdir {
  Fd fd = {};
};
struct Chroot {
  std::string path = {};
};
// getxattrat(dirfd, path, flags, name, ...) (getxattr; lgetxattr adds
// AT_SYMLINK_NOFOLLOW; fgetxattr is dirfd fd, path "", AT_EMPTY_PATH), with
// a buffer large enough for any value.
struct Getxattr {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  uint64_t flags = 0;
};
// setxattrat(dirfd, path, flags, name, {value, xattr_flags}): `value` as
// the call passes it (system.posix_acl_* in the binary xattr form), and
// xattr_flags XATTR_CREATE | XATTR_REPLACE. Apply() stores it.
struct Setxattr {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  std::string value = {};
  uint32_t xattr_flags = 0;
  uint64_t flags = 0;
};
// listxattrat(dirfd, path, flags, ...), with a buffer large enough.
struct Listxattr {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  uint64_t flags = 0;
};
// removexattrat(dirfd, path, flags, name). Apply() removes it.
struct Removexattr {
  Fd dirfd = kAtFdcwd;
  std::string path = {};
  std::string name = {};
  uint64_t flags = 0;
};
// fallocate(fd, mode, offset, len): mode of FALLOC_FL_*.
struct Fallocate {
  Fd fd = {};
  uint32_t mode = 0;
  uint64_t offset = 0, len = 1;
};
// fchmod(fd, mode), fchown(fd, uid, gid) (-1 keeps an id), futimens(fd,
// times).
struct Fchmod {
  Fd fd = {};
  uint32_t mode = 0;
};
struct Fchown {
  Fd fd = {};
  int64_t uid = -1, gid = -1;
};
struct Futimens {
  Fd fd = {};
  std::optional<std::array<TimeSpec, 2>> times = std::nullopt;
};
// mount("tmpfs", path, "tmpfs", flags), mount(source, target, MS_BIND |
// flags), umount2(path, flags).
struct MountTmpfs {
  std::string path = {};
  uint64_t flags = 0;
};
struct BindMount {
  std::string source = {};
  std::string target = {};
  uint64_t flags = 0;
};
struct Umount {
  std::string path = {};
  uint64_t flags = 0;
};
// ioctl(fd, cmd, ...): the permission checks only.
struct Ioctl {
  Fd fd = {};
  uint32_t cmd = 0;
};
// bind() and connect() of a TCP socket on loopback.
struct BindTcp {
  uint32_t port = 0;
};
struct ConnectTcp {
  uint32_t port = 0;
};
// kill(target, 0); connect() to the abstract UNIX socket `target`
// listens on; passing `fd` to `target` over a UNIX socket (Apply() gives
// the fd the target receives).
struct Signal {
  Process target = {};
};
struct ConnectAbstract {
  Process target = {};
};
struct SendFd {
  Fd fd = {};
  Process target = {};
};
// landlock_create_ruleset() + landlock_add_rule() for each rule, in order
// + landlock_restrict_self(): one new layer.
struct Restrict {
  LandlockRuleset ruleset = {};
};

using Request =
    std::variant<Open, Close, Stat, Lstat, Access, ExecCheck, Mkdir, Mknod, Symlink, Link, Unlink,
                 Rmdir, Rename, Truncate, Ftruncate, Chmod, Chown, Lchown, Utimensat, Readlink,
                 Chdir, Fchdir, Chroot, MountTmpfs, BindMount, Umount, Ioctl, BindTcp, ConnectTcp,
                 Signal, ConnectAbstract, SendFd, Restrict, Getxattr, Setxattr, Listxattr,
                 Removexattr, Fallocate, Fchmod, Fchown, Futimens>;

// OpOf()
//
// The operation a request asks for.
Op OpOf(const Request& r);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_REQUEST_H_
