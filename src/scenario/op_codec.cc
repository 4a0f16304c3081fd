// The operations' rows (op_codec.h). To add an operation, add its row in
// the Op enum's order: the static_asserts below check the order and that
// every request type has one, op_codec_test.cc the names and keys.

#include "src/scenario/op_codec.h"

#include <fcntl.h>
#include <sys/mount.h>

#include <cerrno>
#include <iterator>
#include <variant>

namespace pathwarden::scenario_internal {
namespace {

// What resolving a path can fail with (path_resolution(7)), and a dirfd.
constexpr ErrnoSet kPath = {EACCES, EFAULT, ELOOP, ENAMETOOLONG, ENOENT, ENOMEM, ENOTDIR, EBADF,
                            EINVAL, EIO, ESTALE};
// Creating a name (mkdir(2), mknod(2), symlink(2), link(2), open(2)).
constexpr ErrnoSet kCreate = {EDQUOT, EEXIST, ENOSPC, EPERM, EROFS, EMLINK};
// The xattr calls (getxattr(2), setxattr(2), listxattr(2), removexattr(2)).
constexpr ErrnoSet kXattr = {E2BIG, ENODATA, EOPNOTSUPP, ERANGE, EPERM, EROFS, EEXIST, ENOSPC,
                             EDQUOT};
// Calls on an fd: fchmod(2), fchown(2), futimens(2), fallocate(2).
constexpr ErrnoSet kFd = {EBADF, EIO, EPERM, EROFS, EINVAL};
// mount(2); ENOSPC: fs.mount-max.
constexpr ErrnoSet kMount = kPath | ErrnoSet{EBUSY, EMFILE, ENODEV, ENOTBLK, ENXIO, EPERM, EROFS,
                                             ENOSPC, EXDEV};

using F = FlagFamily;
using S = StepForm;
using A = QueryArg;
using E = Effect;
using L = Follow;

// clang-format off: a row per operation, its query form on its own line.
constexpr OpCodec kCodecs[] = {
    // open(2), openat
    {Op::kOpen, "open", {"path"}, {"dirfd", "flags", "mode", "fd"}, F::kOpen, S::kPath,
     kPath | kCreate | ErrnoSet{EBUSY, EFBIG, EINTR, EISDIR, EMFILE, ENFILE, ENODEV, ENXIO,
                                EOPNOTSUPP, EOVERFLOW, ETXTBSY, EAGAIN},
     {A::kPath, A::kOptMode},
     "(O_RDONLY by default; MODE octal, for O_CREAT: 0644 by default)", E::kReads,
     L::kUnlessNofollow},
    // close(2)
    {Op::kClose, "close", {"fd"}, {}, F::kNone, S::kFd, {EBADF, EINTR, EIO, ENOSPC, EDQUOT}},
    // stat(2), newfstatat
    {Op::kStat, "stat", {"path"}, {"dirfd", "flags"}, F::kAtNofollow, S::kPath,
     kPath | ErrnoSet{EOVERFLOW},
     {A::kPath}, {}, E::kReads, L::kUnlessNofollow},
    {Op::kLstat, "lstat", {"path"}, {"dirfd", "flags"}, F::kAtNofollow, S::kPath,
     kPath | ErrnoSet{EOVERFLOW},
     {A::kPath}, {}, E::kReads, L::kNever},
    // access(2), faccessat2
    {Op::kAccess, "access", {"path"}, {"dirfd", "flags"}, F::kAccess, S::kPath,
     kPath | ErrnoSet{EPERM, EROFS, ETXTBSY},
     {A::kPath}, "(faccessat2; F_OK by default)", E::kReads, L::kUnlessNofollow},
    // mkdir(2), mkdirat
    {Op::kMkdir, "mkdir", {"path"}, {"dirfd", "mode"}, F::kNone, S::kPathModeOnly,
     kPath | kCreate,
     {A::kPath, A::kOptMode}, "(0755 by default)", E::kNames, L::kNever},
    // mknod(2), mknodat
    {Op::kMknod, "mknod", {"path"}, {"dirfd", "mode", "type", "rdev"}, F::kNone, S::kMknod,
     kPath | kCreate,
     {A::kPath, A::kFileType, A::kOptMode}, "(0644 by default)", E::kNames, L::kNever},
    // symlink(2), symlinkat
    {Op::kSymlink, "symlink", {"path", "target"}, {"dirfd"}, F::kNone, S::kPathTarget,
     kPath | kCreate,
     {A::kPath, A::kTarget}, {}, E::kNames, L::kNever},
    // link(2), linkat
    {Op::kLink, "link", {"path", "path2"}, {"dirfd", "flags"}, F::kLink, S::kTwoPaths,
     kPath | kCreate | ErrnoSet{EXDEV},
     {A::kPath, A::kPath2}, {}, E::kNames, L::kIfFollowFlag},
    // unlink(2), unlinkat (AT_REMOVEDIR: rmdir's)
    {Op::kUnlink, "unlink", {"path"}, {"dirfd", "flags"}, F::kUnlink, S::kPath,
     kPath | ErrnoSet{EBUSY, EISDIR, EPERM, EROFS, ENOTEMPTY, EEXIST},
     {A::kPath}, {}, E::kNames, L::kNever},
    // rmdir(2)
    {Op::kRmdir, "rmdir", {"path"}, {"dirfd"}, F::kNone, S::kPath,
     kPath | ErrnoSet{EBUSY, ENOTEMPTY, EEXIST, EPERM, EROFS},
     {A::kPath}, {}, E::kNames, L::kNever},
    // rename(2), renameat2
    {Op::kRename, "rename", {"path", "path2"}, {"dirfd", "flags"}, F::kRename, S::kTwoPaths,
     kPath | kCreate | ErrnoSet{EBUSY, EISDIR, ENOTEMPTY, EXDEV, EOPNOTSUPP},
     {A::kPath, A::kPath2}, {}, E::kNames, L::kNever},
    // truncate(2)
    {Op::kTruncate, "truncate", {"path"}, {}, F::kNone, S::kPath,
     kPath | ErrnoSet{EFBIG, EINTR, EISDIR, EPERM, EROFS, ETXTBSY},
     {A::kPath}, {}, E::kNames, L::kAlways},
    // ftruncate(2): EINVAL for an fd not open for writing
    {Op::kFtruncate, "ftruncate", {"fd"}, {}, F::kNone, S::kFd,
     {EACCES, EBADF, EFBIG, EINTR, EINVAL, EIO, EISDIR, EPERM, EROFS, ETXTBSY}},
    // chmod(2), fchmodat
    {Op::kChmod, "chmod", {"path", "mode"}, {"dirfd", "flags"}, F::kAtNofollow, S::kPathMode,
     kPath | ErrnoSet{EOPNOTSUPP, EPERM, EROFS},
     {A::kPath, A::kMode}, {}, E::kNames, L::kUnlessNofollow},
    // chown(2), fchownat
    {Op::kChown, "chown", {"path"}, {"dirfd", "uid", "gid", "flags"}, F::kAtNofollow,
     S::kPathOwner, kPath | ErrnoSet{EPERM, EROFS},
     {A::kPath, A::kOwner}, "(-1 keeps the id)", E::kNames, L::kUnlessNofollow},
    {Op::kLchown, "lchown", {"path"}, {"dirfd", "uid", "gid", "flags"}, F::kAtNofollow,
     S::kPathOwner, kPath | ErrnoSet{EPERM, EROFS},
     {A::kPath, A::kOwner}, "(-1 keeps the id)", E::kNames, L::kNever},
    // readlink(2), readlinkat
    {Op::kReadlink, "readlink", {"path"}, {"dirfd", "flags"}, F::kNone, S::kPath, kPath,
     {A::kPath}, {}, E::kReads, L::kNever},
    // chdir(2)
    {Op::kChdir, "chdir", {"path"}, {}, F::kNone, S::kPath, kPath,
     {A::kPath}, {}, E::kReads, L::kAlways},
    // execve(2), execveat(AT_EXECVE_CHECK)
    {Op::kExecCheck, "exec_check", {"path"}, {"dirfd", "flags"}, F::kAtNofollow, S::kPath,
     kPath | ErrnoSet{E2BIG, EAGAIN, EISDIR, ELIBBAD, EMFILE, ENFILE, ENOEXEC, EPERM, ETXTBSY},
     {A::kPath}, {}, E::kReads, L::kUnlessNofollow},
    // ioctl(2); Landlock's LANDLOCK_ACCESS_FS_IOCTL_DEV: EACCES
    {Op::kIoctl, "ioctl", {"fd", "cmd"}, {}, F::kNone, S::kFdCmd,
     {EACCES, EBADF, EFAULT, EINVAL, ENOTTY, EPERM, ENODEV, ENXIO, ENOSYS, EIO}},
    // bind(2)
    {Op::kBindTcp, "bind_tcp", {"port"}, {}, F::kNone, S::kPort,
     {EACCES, EADDRINUSE, EADDRNOTAVAIL, EAFNOSUPPORT, EBADF, EINVAL, ENOTSOCK, EPERM},
     {A::kPort}, "(0 to 65535)"},
    // connect(2)
    {Op::kConnectTcp, "connect_tcp", {"port"}, {}, F::kNone, S::kPort,
     {EACCES, EPERM, EADDRINUSE, EADDRNOTAVAIL, EAFNOSUPPORT, EAGAIN, EALREADY, EBADF,
      ECONNREFUSED, EINPROGRESS, EINTR, EISCONN, ENETUNREACH, ENOTSOCK, EPROTOTYPE, ETIMEDOUT,
      EINVAL},
     {A::kPort}, "(0 to 65535)"},
    // kill(2)
    {Op::kSignal, "signal", {"target"}, {}, F::kNone, S::kTarget, {EINVAL, EPERM, ESRCH}},
    // connect(2) on AF_UNIX, unix(7)
    {Op::kConnectAbstract, "connect_abstract", {"target"}, {}, F::kNone, S::kTarget,
     {EACCES, EPERM, ECONNREFUSED, EAGAIN, EBADF, EINVAL, ENOENT, EPROTOTYPE, EISCONN,
      ENOTSOCK}},
    // sendmsg(2) with SCM_RIGHTS, unix(7)
    {Op::kSendFd, "send_fd", {"fd", "target"}, {}, F::kNone, S::kFdToTarget,
     {EACCES, EPERM, EBADF, EINVAL, ECONNREFUSED, ENOTCONN, EPIPE, EMSGSIZE, ETOOMANYREFS,
      EAGAIN, ENOMEM}},
    // mount(2)
    {Op::kMountTmpfs, "mount_tmpfs", {"path"}, {"flags"}, F::kMount, S::kPath, kMount,
     {}, {}, E::kOther, L::kAlways},
    {Op::kBindMount, "bind_mount", {"path", "path2"}, {"flags"}, F::kBind, S::kTwoPaths, kMount,
     {}, {}, E::kOther, L::kAlways},
    // umount2(2)
    {Op::kUmount, "umount", {"path"}, {"flags"}, F::kUmount, S::kPath,
     kPath | ErrnoSet{EAGAIN, EBUSY, EPERM},
     {}, {}, E::kOther, L::kUnlessNofollow},
    // landlock_create_ruleset(2), _add_rule(2), _restrict_self(2); each
    // rule's path opened O_PATH first, as a sandbox does
    {Op::kRestrict, "restrict", {"layer"}, {}, F::kNone, S::kRestrict,
     kPath | ErrnoSet{E2BIG, EBADF, EBADFD, EFAULT, EINVAL, ENOMSG, EOPNOTSUPP, EPERM, ENOMEM,
                      EACCES}},
    // utimensat(2)
    {Op::kUtimensat, "utimensat", {"path"}, {"dirfd", "flags", "times"}, F::kAtNofollow,
     S::kPath, kPath | ErrnoSet{EPERM, EROFS, ESRCH},
     {}, {}, E::kOther, L::kUnlessNofollow},
    // chroot(2)
    {Op::kChroot, "chroot", {"path"}, {}, F::kNone, S::kPath, kPath | ErrnoSet{EPERM},
     {}, {}, E::kOther, L::kAlways},
    // fchdir(2)
    {Op::kFchdir, "fchdir", {"fd"}, {}, F::kNone, S::kFd, {EACCES, EBADF, ENOTDIR, EIO}},
    // getxattr(2) and the rest of the family
    {Op::kGetxattr, "getxattr", {"path", "name"}, {"dirfd", "flags"}, F::kAtNofollow,
     S::kPathName, kPath | kXattr,
     {A::kPath, A::kName}, {}, E::kReads, L::kUnlessNofollow},
    {Op::kSetxattr, "setxattr", {"path", "name"},
     {"dirfd", "flags", "value", "value_hex", "acl", "xattr_flags"}, F::kAtNofollow,
     S::kPathNameValue, kPath | kXattr,
     {A::kPath, A::kName, A::kOptValue}, {}, E::kNames, L::kUnlessNofollow},
    {Op::kListxattr, "listxattr", {"path"}, {"dirfd", "flags"}, F::kAtNofollow, S::kPath,
     kPath | kXattr,
     {A::kPath}, {}, E::kReads, L::kUnlessNofollow},
    {Op::kRemovexattr, "removexattr", {"path", "name"}, {"dirfd", "flags"}, F::kAtNofollow,
     S::kPathName, kPath | kXattr,
     {A::kPath, A::kName}, {}, E::kNames, L::kUnlessNofollow},
    // fallocate(2)
    {Op::kFallocate, "fallocate", {"fd"}, {"flags", "offset", "len"}, F::kFallocate,
     S::kFdRange,
     kFd | ErrnoSet{EFBIG, EINTR, ENODEV, ENOSPC, ENOSYS, EOPNOTSUPP, ESPIPE, ETXTBSY, EISDIR,
                    EACCES}},
    // fchmod(2)
    {Op::kFchmod, "fchmod", {"fd", "mode"}, {}, F::kNone, S::kFdMode, kFd | ErrnoSet{EOPNOTSUPP}},
    // fchown(2)
    {Op::kFchown, "fchown", {"fd"}, {"uid", "gid"}, F::kNone, S::kFdOwner,
     kFd | ErrnoSet{ENOENT}},
    // futimens(2)
    {Op::kFutimens, "futimens", {"fd"}, {"times"}, F::kNone, S::kFd,
     kFd | ErrnoSet{EACCES, EFAULT, ESRCH}},
    // mount_setattr(2)
    {Op::kMountSetattr, "mount_setattr", {"path"}, {"dirfd", "flags", "attr_set", "attr_clr"},
     F::kMountSetattr, S::kPathAttrs,
     kPath | ErrnoSet{E2BIG, EBADF, EBUSY, EINVAL, ENOENT, ENOMEM, EOPNOTSUPP, EPERM},
     {A::kPath, A::kAttrs, A::kOptAttrs},
     "(ATTRS: MOUNT_ATTR_* names joined by |, or 0; the first set, the second cleared)",
     E::kOther, L::kUnlessNofollow},
};

// clang-format on

// The rows stand in the enum's order, so an Op indexes them.
constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kCodecs); ++i)
    if (static_cast<size_t>(kCodecs[i].op) != i) return false;
  return true;
}
static_assert(InEnumOrder(), "kCodecs: one row per Op, in the enum's order");
static_assert(std::size(kCodecs) == std::variant_size_v<Request>,
              "kCodecs: one row per request type");

// The operations `explain` takes, in the order its help and its errors
// list them (reads first, then changes by kind, the network last).
constexpr Op kQueryOrder[] = {
    Op::kOpen,      Op::kStat,        Op::kLstat,   Op::kReadlink,   Op::kChdir,
    Op::kExecCheck, Op::kAccess,      Op::kMkdir,   Op::kMknod,      Op::kSymlink,
    Op::kLink,      Op::kRename,      Op::kUnlink,  Op::kRmdir,      Op::kTruncate,
    Op::kChmod,     Op::kChown,       Op::kLchown,  Op::kGetxattr,   Op::kListxattr,
    Op::kSetxattr,  Op::kRemovexattr, Op::kBindTcp, Op::kConnectTcp, Op::kMountSetattr,
};
// Each operation with a query form stands there once, and no other.
constexpr bool QueryOrderComplete() {
  for (const OpCodec& c : kCodecs) {
    int seen = 0;
    for (Op op : kQueryOrder) seen += op == c.op;
    if (seen != (c.query[0] != QueryArg::kNone ? 1 : 0)) return false;
  }
  return true;
}
static_assert(QueryOrderComplete(), "kQueryOrder: every operation with a query form, once");

// A row for a value past the enum's end: no name, no keys, no errno.
constexpr OpCodec kUnknown = {Op{}, "?", {}, {}, F::kNone, S::kPath, {}};

}  // namespace

std::span<const OpCodec> OpCodecs() { return kCodecs; }

std::span<const Op> QueryOps() { return kQueryOrder; }

bool ChangesNothing(const OpCodec& c, uint64_t flags) {
  if (c.effect != Effect::kReads) return false;
  if (c.flags != FlagFamily::kOpen) return true;
  // Any bit of O_TMPFILE (__O_TMPFILE without O_DIRECTORY is EINVAL, and
  // still not counted as reading only).
  return (flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~uint64_t{O_DIRECTORY}))) == 0;
}

bool FollowsLast(const OpCodec& c, uint64_t flags) {
  switch (c.follow) {
    case Follow::kNever: return false;
    case Follow::kAlways: return true;
    case Follow::kIfFollowFlag: return (flags & AT_SYMLINK_FOLLOW) != 0;
    case Follow::kUnlessNofollow: break;
  }
  const uint64_t nofollow = c.flags == FlagFamily::kOpen     ? uint64_t{O_NOFOLLOW}
                            : c.flags == FlagFamily::kUmount ? uint64_t{UMOUNT_NOFOLLOW}
                                                             : uint64_t{AT_SYMLINK_NOFOLLOW};
  return (flags & nofollow) == 0;
}

const OpCodec& CodecOf(Op op) {
  const auto i = static_cast<size_t>(op);
  return i < std::size(kCodecs) ? kCodecs[i] : kUnknown;
}

}  // namespace pathwarden::scenario_internal
