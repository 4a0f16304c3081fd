#include "src/scenario/errnos.h"

#include <bitset>
#include <cerrno>
#include <initializer_list>

#include "pathwarden/errno.h"

namespace pathwarden {
namespace {

// Errno values on Linux stop at EHWPOISON (133).
using ErrnoSet = std::bitset<160>;

ErrnoSet Of(std::initializer_list<int> errs) {
  ErrnoSet s;
  for (int e : errs) s.set(static_cast<size_t>(e));
  return s;
}

// What resolving a path can fail with (path_resolution(7)), and a dirfd.
const ErrnoSet kPath = Of({EACCES, EFAULT, ELOOP, ENAMETOOLONG, ENOENT, ENOMEM, ENOTDIR, EBADF,
                           EINVAL, EIO, ESTALE});
// Creating a name (mkdir(2), mknod(2), symlink(2), link(2), open(2)).
const ErrnoSet kCreate = Of({EDQUOT, EEXIST, ENOSPC, EPERM, EROFS, EMLINK});
// The xattr calls (getxattr(2), setxattr(2), listxattr(2), removexattr(2)).
const ErrnoSet kXattr = Of({E2BIG, ENODATA, EOPNOTSUPP, ERANGE, EPERM, EROFS, EEXIST, ENOSPC,
                            EDQUOT});
// Calls on an fd: fchmod(2), fchown(2), futimens(2), fallocate(2).
const ErrnoSet kFd = Of({EBADF, EIO, EPERM, EROFS, EINVAL});

ErrnoSet Set(Op op) {
  switch (op) {
    case Op::kOpen:  // open(2), openat
      return kPath | kCreate |
             Of({EBUSY, EFBIG, EINTR, EISDIR, EMFILE, ENFILE, ENODEV, ENXIO, EOPNOTSUPP,
                 EOVERFLOW, ETXTBSY, EAGAIN});
    case Op::kClose:  // close(2)
      return Of({EBADF, EINTR, EIO, ENOSPC, EDQUOT});
    case Op::kStat:  // stat(2), newfstatat
    case Op::kLstat:
      return kPath | Of({EOVERFLOW});
    case Op::kAccess:  // access(2), faccessat2
      return kPath | Of({EPERM, EROFS, ETXTBSY});
    case Op::kMkdir:  // mkdir(2), mkdirat
    case Op::kMknod:  // mknod(2), mknodat
    case Op::kSymlink:  // symlink(2), symlinkat
      return kPath | kCreate;
    case Op::kLink:  // link(2), linkat
      return kPath | kCreate | Of({EXDEV});
    case Op::kUnlink:  // unlink(2), unlinkat (AT_REMOVEDIR: rmdir's)
      return kPath | Of({EBUSY, EISDIR, EPERM, EROFS, ENOTEMPTY, EEXIST});
    case Op::kRmdir:  // rmdir(2)
      return kPath | Of({EBUSY, ENOTEMPTY, EEXIST, EPERM, EROFS});
    case Op::kRename:  // rename(2), renameat2
      return kPath | kCreate | Of({EBUSY, EISDIR, ENOTEMPTY, EXDEV, EOPNOTSUPP});
    case Op::kTruncate:  // truncate(2)
      return kPath | Of({EFBIG, EINTR, EISDIR, EPERM, EROFS, ETXTBSY});
    case Op::kFtruncate:  // ftruncate(2): EINVAL for an fd not open for writing
      return Of({EACCES, EBADF, EFBIG, EINTR, EINVAL, EIO, EISDIR, EPERM, EROFS, ETXTBSY});
    case Op::kChmod:  // chmod(2), fchmodat
      return kPath | Of({EOPNOTSUPP, EPERM, EROFS});
    case Op::kChown:  // chown(2), fchownat
    case Op::kLchown:
      return kPath | Of({EPERM, EROFS});
    case Op::kReadlink:  // readlink(2), readlinkat
      return kPath;
    case Op::kChdir:  // chdir(2)
      return kPath;
    case Op::kFchdir:  // fchdir(2)
      return Of({EACCES, EBADF, ENOTDIR, EIO});
    case Op::kChroot:  // chroot(2)
      return kPath | Of({EPERM});
    case Op::kExecCheck:  // execve(2), execveat(AT_EXECVE_CHECK)
      return kPath | Of({E2BIG, EAGAIN, EISDIR, ELIBBAD, EMFILE, ENFILE, ENOEXEC, EPERM,
                         ETXTBSY});
    case Op::kIoctl:  // ioctl(2); Landlock's LANDLOCK_ACCESS_FS_IOCTL_DEV: EACCES
      return Of({EACCES, EBADF, EFAULT, EINVAL, ENOTTY, EPERM, ENODEV, ENXIO, ENOSYS, EIO});
    case Op::kBindTcp:  // bind(2)
      return Of({EACCES, EADDRINUSE, EADDRNOTAVAIL, EAFNOSUPPORT, EBADF, EINVAL, ENOTSOCK,
                 EPERM});
    case Op::kConnectTcp:  // connect(2)
      return Of({EACCES, EPERM, EADDRINUSE, EADDRNOTAVAIL, EAFNOSUPPORT, EAGAIN, EALREADY,
                 EBADF, ECONNREFUSED, EINPROGRESS, EINTR, EISCONN, ENETUNREACH, ENOTSOCK,
                 EPROTOTYPE, ETIMEDOUT, EINVAL});
    case Op::kSignal:  // kill(2)
      return Of({EINVAL, EPERM, ESRCH});
    case Op::kConnectAbstract:  // connect(2) on AF_UNIX, unix(7)
      return Of({EACCES, EPERM, ECONNREFUSED, EAGAIN, EBADF, EINVAL, ENOENT, EPROTOTYPE,
                 EISCONN, ENOTSOCK});
    case Op::kSendFd:  // sendmsg(2) with SCM_RIGHTS, unix(7)
      return Of({EACCES, EPERM, EBADF, EINVAL, ECONNREFUSED, ENOTCONN, EPIPE, EMSGSIZE,
                 ETOOMANYREFS, EAGAIN, ENOMEM});
    case Op::kMountTmpfs:  // mount(2); ENOSPC: fs.mount-max
    case Op::kBindMount:
      return kPath | Of({EBUSY, EMFILE, ENODEV, ENOTBLK, ENXIO, EPERM, EROFS, ENOSPC, EXDEV});
    case Op::kUmount:  // umount2(2)
      return kPath | Of({EAGAIN, EBUSY, EPERM});
    case Op::kRestrict:  // landlock_create_ruleset(2), _add_rule(2), _restrict_self(2);
                         // each rule's path opened O_PATH first, as a sandbox does
      return kPath | Of({E2BIG, EBADF, EBADFD, EFAULT, EINVAL, ENOMSG, EOPNOTSUPP, EPERM, ENOMEM,
                 EACCES});
    case Op::kUtimensat:  // utimensat(2)
      return kPath | Of({EPERM, EROFS, ESRCH});
    case Op::kGetxattr:
    case Op::kSetxattr:
    case Op::kListxattr:
    case Op::kRemovexattr:
      return kPath | kXattr;
    case Op::kFallocate:  // fallocate(2)
      return kFd | Of({EFBIG, EINTR, ENODEV, ENOSPC, ENOSYS, EOPNOTSUPP, ESPIPE, ETXTBSY,
                       EISDIR, EACCES});
    case Op::kFchmod:  // fchmod(2)
      return kFd | Of({EOPNOTSUPP});
    case Op::kFchown:  // fchown(2)
      return kFd | Of({ENOENT});
    case Op::kFutimens:  // futimens(2)
      return kFd | Of({EACCES, EFAULT, ESRCH});
  }
  return {};
}

}  // namespace

bool LinuxReturns(Op op, int err) {
  if (err == 0) return true;
  if (err < 0 || static_cast<size_t>(err) >= ErrnoSet().size()) return false;
  return Set(op).test(static_cast<size_t>(err));
}

std::string LinuxErrnoList(Op op) {
  const ErrnoSet s = Set(op);
  std::string out;
  for (size_t e = 1; e < s.size(); ++e) {
    if (!s.test(e)) continue;
    if (!out.empty()) out += ' ';
    out += ErrnoName(static_cast<int>(e));
  }
  return out;
}

}  // namespace pathwarden
