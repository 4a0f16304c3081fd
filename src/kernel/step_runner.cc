// One scenario step as the raw system call it names, in the acting child.
// Linux: the syscalls themselves; glibc wrappers are bypassed where they add checks.

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pathwarden/uapi.h"
#include "src/kernel/layer.h"
#include "src/kernel/process_server.h"
#include "src/kernel/tree_builder.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr long kSysFchmodat2 = 452;        // Linux 6.6; glibc 2.36 lacks it
// Linux 6.13 (x86-64 numbers; Debian's 6.1 headers lack them).
constexpr long kSysSetxattrat = 463;
constexpr long kSysGetxattrat = 464;
constexpr long kSysListxattrat = 465;
constexpr long kSysRemovexattrat = 466;
static_assert(sizeof(long) == 8 && __x86_64__, "the *xattrat numbers are x86-64's");

// struct xattr_args (include/uapi/linux/xattr.h, 6.13).
struct XattrArgs {
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

int Err(long r) { return r < 0 ? errno : 0; }

// A dirfd name that is not open becomes -1: the kernel then answers as for
// any bad descriptor (EBADF for a relative path; absolute paths ignore it).
int Dirfd(const StepSpec& step, const FdTable& fds) {
  if (step.dirfd.empty()) return AT_FDCWD;
  return fds.Find(step.dirfd);
}

// The verdict of the permission checks: what the driver answers once they
// pass is not the scenario's business.
int Ioctl(int fd, uint32_t cmd) {
  alignas(16) char buf[4096] = {};
  long r;
  if (cmd == FICLONE) {
    r = ioctl(fd, cmd, fd);
  } else if (cmd == FICLONERANGE) {
    file_clone_range range{};
    range.src_fd = fd;
    r = ioctl(fd, cmd, &range);
  } else {
    r = ioctl(fd, cmd, buf);
  }
  int err = Err(r);
  return err == EBADF || err == EACCES ? err : 0;
}

int Tcp(uint32_t port, bool connect_it) {
  int type = SOCK_STREAM | SOCK_CLOEXEC | (connect_it ? SOCK_NONBLOCK : 0);
  int so = socket(AF_INET, type, 0);
  if (so < 0) return errno;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  int err = Err(connect_it ? connect(so, sa, sizeof(addr)) : bind(so, sa, sizeof(addr)));
  close(so);
  // The policy's verdict: a busy port or no listener is not a denial.
  if (connect_it) return err == ECONNREFUSED || err == EINPROGRESS ? 0 : err;
  return err == EADDRINUSE ? 0 : err;
}

int ConnectAbstract(const std::string& name) {
  int so = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (so < 0) return errno;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int err = Err(connect(so, reinterpret_cast<sockaddr*>(&addr), len));
  close(so);
  return err;
}

// The xattr calls as their *at forms (which getxattr(), lgetxattr() and
// fgetxattr() are in 6.18: path_getxattrat() and its siblings), with
// buffers large enough for any value or list.
int Xattr(int dirfd, const StepSpec& step) {
  const char* path = step.path.c_str();
  const char* name = step.xattr_name.c_str();
  const unsigned flags = static_cast<unsigned>(step.flags);
  switch (step.op) {
    case Op::kGetxattr: {
      static char buf[65536];
      XattrArgs args{reinterpret_cast<uint64_t>(buf), sizeof(buf), 0};
      return Err(syscall(kSysGetxattrat, dirfd, path, flags, name, &args, sizeof(args)));
    }
    case Op::kSetxattr: {
      XattrArgs args{reinterpret_cast<uint64_t>(step.xattr_value.data()),
                     static_cast<uint32_t>(step.xattr_value.size()), step.xattr_flags};
      return Err(syscall(kSysSetxattrat, dirfd, path, flags, name, &args, sizeof(args)));
    }
    case Op::kListxattr: {
      static char buf[65536];
      return Err(syscall(kSysListxattrat, dirfd, path, flags, buf, sizeof(buf)));
    }
    case Op::kRemovexattr:
      return Err(syscall(kSysRemovexattrat, dirfd, path, flags, name));
    default: return EINVAL;
  }
}

// utimensat()'s times; futimens(fd, times) is utimensat(fd, NULL, times, 0).
int Utimens(int dirfd, const char* path, const StepSpec& step, int flags) {
  timespec times[2] = {};
  timespec* arg = nullptr;
  if (step.times) {
    for (int i = 0; i < 2; ++i) {
      switch ((*step.times)[static_cast<size_t>(i)]) {
        case TimeSpec::kNow: times[i] = {0, UTIME_NOW}; break;
        case TimeSpec::kOmit: times[i] = {0, UTIME_OMIT}; break;
        case TimeSpec::kSet: times[i] = {1000000000, 0}; break;
      }
    }
    arg = times;
  }
  return Err(syscall(SYS_utimensat, dirfd, path, arg, flags));
}

int Open(const StepSpec& step, int dirfd, FdTable* fds) {
  long fd = syscall(SYS_openat, dirfd, step.path.c_str(),
                    static_cast<int>(step.flags) | O_NONBLOCK, step.mode);
  int err = Err(fd);
  if (step.fd.empty()) {
    if (fd >= 0) close(static_cast<int>(fd));
  } else if (fd >= 0) {
    fds->Put(step.fd, static_cast<int>(fd));
  } else {
    // A failed open leaves the name closed, like any fd it replaced.
    int ignored;
    fds->Close(step.fd, &ignored);
  }
  return err;
}

}  // namespace

int RunStep(const ProcessTable& table, const StepSpec& step, const Request& req,
            FdTable* fds) {
  const char* path = step.path.c_str();
  const char* path2 = step.path2.c_str();
  const int dirfd = Dirfd(step, *fds);
  const int flags = static_cast<int>(step.flags);
  // The process making the call: the ids it names are its namespace's.
  const int self = table.IndexOf(step.as);
  // Steps on a named fd that is not open fail before any syscall.
  int fd = -1;
  switch (step.op) {
    case Op::kFtruncate:
    case Op::kIoctl:
    case Op::kFchdir:
      fd = fds->Find(step.fd);
      if (fd < 0) return EBADF;
      break;
    default:
      break;
  }
  struct stat st;
  switch (step.op) {
    case Op::kOpen:
      return Open(step, dirfd, fds);
    case Op::kClose: {
      int result = 0;
      return fds->Close(step.fd, &result) ? result : EBADF;
    }
    case Op::kStat:
      return Err(syscall(SYS_newfstatat, dirfd, path, &st, flags));
    case Op::kLstat:
      return Err(syscall(SYS_newfstatat, dirfd, path, &st, flags | AT_SYMLINK_NOFOLLOW));
    case Op::kAccess:
      return Err(syscall(SYS_faccessat2, dirfd, path, step.access_mode, flags));
    case Op::kMkdir:
      return Err(syscall(SYS_mkdirat, dirfd, path, step.mode));
    case Op::kMknod:
      return Err(syscall(SYS_mknodat, dirfd, path,
                         FileTypeBits(step.mknod_type) | step.mode,
                         makedev(step.rdev_major, step.rdev_minor)));
    case Op::kSymlink:
      return Err(syscall(SYS_symlinkat, step.target.c_str(), dirfd, path));
    case Op::kLink:
      return Err(syscall(SYS_linkat, dirfd, path, AT_FDCWD, path2, flags));
    case Op::kUnlink:
      return Err(syscall(SYS_unlinkat, dirfd, path, flags));
    case Op::kRmdir:
      return Err(syscall(SYS_unlinkat, dirfd, path, AT_REMOVEDIR));
    case Op::kRename:
      return Err(syscall(SYS_renameat2, dirfd, path, AT_FDCWD, path2, flags));
    case Op::kTruncate:
      return Err(syscall(SYS_truncate, path, 0));
    case Op::kFtruncate:
      return Err(syscall(SYS_ftruncate, fd, 0));
    case Op::kChmod:
      return Err(syscall(kSysFchmodat2, dirfd, path, step.mode, flags));
    case Op::kChown:
    case Op::kLchown:
      return Err(syscall(SYS_fchownat, dirfd, path, table.IdAsPassed(self, step.uid, false),
                         table.IdAsPassed(self, step.gid, true),
                         flags | (step.op == Op::kLchown ? AT_SYMLINK_NOFOLLOW : 0)));
    case Op::kReadlink: {
      char buf[4096];
      return Err(syscall(SYS_readlinkat, dirfd, path, buf, sizeof(buf)));
    }
    case Op::kChdir:
      return Err(syscall(SYS_chdir, path));
    case Op::kFchdir:
      return Err(syscall(SYS_fchdir, fd));
    case Op::kChroot:
      return Err(syscall(SYS_chroot, path));
    case Op::kExecCheck: {
      const char* argv[] = {path, nullptr};
      const char* envp[] = {nullptr};
      return Err(syscall(SYS_execveat, dirfd, path, argv, envp, flags | kAtExecveCheck));
    }
    case Op::kIoctl:
      return Ioctl(fd, step.cmd);
    case Op::kBindTcp:
      return Tcp(step.port, false);
    case Op::kConnectTcp:
      return Tcp(step.port, true);
    case Op::kSignal:
      return Err(kill(req.peer_pid, 0));
    case Op::kConnectAbstract:
      return ConnectAbstract(AbstractSocketName(table.supervisor, req.peer_index));
    case Op::kMountTmpfs:
      return Err(mount("tmpfs", path, "tmpfs", step.flags, nullptr));
    case Op::kBindMount:
      return Err(mount(path, path2, nullptr, MS_BIND | step.flags, nullptr));
    case Op::kUmount:
      return Err(umount2(path, flags));
    case Op::kMountSetattr: {
      // struct mount_attr (MOUNT_ATTR_SIZE_VER0): no propagation, no userns.
      struct {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
      } attr = {step.attr_set, step.attr_clr, 0, 0};
      return Err(syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof attr));
    }
    case Op::kRestrict: {
      LayerFailure failure;
      return EnforceLayer(*step.layer, {}, &failure);
    }
    case Op::kUtimensat:
      return Utimens(dirfd, path, step, flags);
    case Op::kGetxattr:
    case Op::kSetxattr:
    case Op::kListxattr:
    case Op::kRemovexattr:
      return Xattr(dirfd, step);
    // A named fd that is not open is -1: the kernel answers EBADF where
    // it looks at the fd (futimens() with both times UTIME_OMIT does not).
    case Op::kFallocate:
      return Err(syscall(SYS_fallocate, fds->Find(step.fd), static_cast<int>(step.flags),
                         step.offset, step.len));
    case Op::kFchmod:
      return Err(syscall(SYS_fchmod, fds->Find(step.fd), step.mode));
    case Op::kFchown:
      return Err(syscall(SYS_fchown, fds->Find(step.fd), table.IdAsPassed(self, step.uid, false),
                         table.IdAsPassed(self, step.gid, true)));
    case Op::kFutimens:
      return Utimens(fds->Find(step.fd), nullptr, step, 0);
    case Op::kSendFd:
      break;  // the supervisor carries it (RequestKind::kSendFd)
  }
  return EINVAL;
}

}  // namespace pathwarden::kernel_internal
