// The x86_64 system calls the tracer stops, read into model requests.

#include "src/trace/decode.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

namespace pathwarden::trace {
namespace {

// PATH_MAX: a path of this many bytes or more is ENAMETOOLONG; one byte
// more is read, so that the model sees it too long.
constexpr size_t kPathRead = 4097;

constexpr int kAtFdcwdNum = AT_FDCWD;

const std::unordered_map<long, const char*>& Names() {
  static const std::unordered_map<long, const char*> kNames = {
      {SYS_open, "open"}, {SYS_openat, "openat"}, {SYS_openat2, "openat2"},
      {SYS_creat, "creat"}, {SYS_stat, "stat"}, {SYS_lstat, "lstat"},
      {SYS_newfstatat, "newfstatat"}, {SYS_statx, "statx"}, {SYS_access, "access"},
      {SYS_faccessat, "faccessat"}, {SYS_faccessat2, "faccessat2"}, {SYS_execve, "execve"},
      {SYS_execveat, "execveat"}, {SYS_mkdir, "mkdir"}, {SYS_mkdirat, "mkdirat"},
      {SYS_mknod, "mknod"}, {SYS_mknodat, "mknodat"}, {SYS_symlink, "symlink"},
      {SYS_symlinkat, "symlinkat"}, {SYS_link, "link"}, {SYS_linkat, "linkat"},
      {SYS_unlink, "unlink"}, {SYS_unlinkat, "unlinkat"}, {SYS_rmdir, "rmdir"},
      {SYS_rename, "rename"}, {SYS_renameat, "renameat"}, {SYS_renameat2, "renameat2"},
      {SYS_truncate, "truncate"}, {SYS_ftruncate, "ftruncate"}, {SYS_chmod, "chmod"},
      {SYS_fchmod, "fchmod"}, {SYS_fchmodat, "fchmodat"}, {452, "fchmodat2"},
      {SYS_chown, "chown"}, {SYS_fchown, "fchown"}, {SYS_lchown, "lchown"},
      {SYS_fchownat, "fchownat"}, {SYS_readlink, "readlink"}, {SYS_readlinkat, "readlinkat"},
      {SYS_chdir, "chdir"}, {SYS_fchdir, "fchdir"}, {SYS_chroot, "chroot"},
      {SYS_mount, "mount"}, {SYS_umount2, "umount2"}, {SYS_utimensat, "utimensat"},
      {SYS_fallocate, "fallocate"}, {SYS_pivot_root, "pivot_root"}, {429, "move_mount"},
      {442, "mount_setattr"},
      {SYS_ioctl, "ioctl"}, {SYS_bind, "bind"}, {SYS_connect, "connect"}, {SYS_kill, "kill"},
      {SYS_tgkill, "tgkill"}, {SYS_tkill, "tkill"}, {SYS_setuid, "setuid"},
      {SYS_setgid, "setgid"}, {SYS_setreuid, "setreuid"}, {SYS_setregid, "setregid"},
      {SYS_setresuid, "setresuid"}, {SYS_setresgid, "setresgid"}, {SYS_setfsuid, "setfsuid"},
      {SYS_setfsgid, "setfsgid"}, {SYS_setgroups, "setgroups"}, {SYS_capset, "capset"},
      {SYS_prctl, "prctl"}, {444, "landlock_create_ruleset"}, {445, "landlock_add_rule"},
      {446, "landlock_restrict_self"}, {SYS_io_uring_setup, "io_uring_setup"},
  };
  return kNames;
}

int AsFd(uint64_t v) { return static_cast<int>(static_cast<int32_t>(v)); }

// Reads path argument `addr` into *out, or makes `d` a skip (EFAULT).
bool ReadPath(const Memory& m, uint64_t addr, std::string* out, Decoded* d) {
  bool truncated = false;
  if (!m.String(addr, kPathRead, out, &truncated)) {
    d->kind = Decoded::Kind::kSkip;
    d->why = "a path argument the tracer cannot read (the kernel answers EFAULT)";
    return false;
  }
  return true;
}

void Req(Decoded* d, Request r, int dirfd = kAtFdcwdNum) {
  d->kind = Decoded::Kind::kRequest;
  d->request = std::move(r);
  d->dirfd = dirfd;
}

// A request on a path, relative to its own dirfd.
template <typename T>
void ReqAt(Decoded* d, T r) {
  const int dirfd = r.dirfd.num;
  Req(d, std::move(r), dirfd);
}

// A request on an open file: the file is `fd`'s.
template <typename T>
void ReqFd(Decoded* d, T r) {
  const int fd = r.fd.num;
  Req(d, std::move(r));
  d->fd = fd;
}

// A request of one path argument and nothing else (truncate, chdir,
// chroot).
template <typename T>
void ReqPath(Decoded* d, const Memory& m, uint64_t addr) {
  T r;
  if (ReadPath(m, addr, &r.path, d)) Req(d, std::move(r));
}

// A call and its *at() form read alike: AtArgs[i] is the at form's
// argument i, which is the plain form's i - 1; the plain form's
// directory is AT_FDCWD.
struct AtArgs {
  const std::array<uint64_t, 6>& a;
  bool at;
  int dirfd() const { return at ? AsFd(a[0]) : kAtFdcwdNum; }
  uint64_t operator[](size_t i) const { return at ? a[i] : a[i - 1]; }
};

// `r.dirfd` and `r.path` from the call's directory and its path argument
// 1 (the at form's numbering); false, and `d` a skip, where the path
// cannot be read.
template <typename T>
bool ReadAtPath(const Memory& m, const AtArgs& x, T& r, Decoded* d) {
  r.dirfd = Fd{x.dirfd()};
  return ReadPath(m, x[1], &r.path, d);
}

// AT_EMPTY_PATH on "": the call acts on the dirfd's own file, which the
// model asks of the open file `abs_fd`.
template <typename T>
void EmptyPathIsTheFd(Decoded* d, T& r) {
  if (!r.path.empty() || !(r.flags & AT_EMPTY_PATH)) return;
  d->abs_fd = r.dirfd.num;
  r.dirfd = kAtFdcwd;
  r.flags &= ~static_cast<uint64_t>(AT_EMPTY_PATH);
}

// linkat() and renameat*(): a second directory other than the cwd is
// asked of the open file `abs_fd` too.
void SecondDirfd(Decoded* d, const AtArgs& x) {
  if (x.at && AsFd(x.a[2]) != kAtFdcwdNum) {
    d->abs_fd = AsFd(x.a[2]);
    d->abs_second = true;
  }
}

void DecodeOpen(Decoded* d, const Memory& m, int dirfd, uint64_t path, uint64_t flags,
                uint64_t mode) {
  Open o;
  o.dirfd = Fd{dirfd};
  if (!ReadPath(m, path, &o.path, d)) return;
  o.flags = flags & 0xffffffffu;
  o.mode = static_cast<uint32_t>(mode & 07777);
  d->open_flags = o.flags;
  Req(d, std::move(o), dirfd);
}

// newfstatat() and statx(): AT_EMPTY_PATH on "" is fstat() of the dirfd.
void DecodeStat(Decoded* d, const Memory& m, int dirfd, uint64_t path, uint64_t flags) {
  std::string p;
  if (!ReadPath(m, path, &p, d)) return;
  if (p.empty() && (flags & AT_EMPTY_PATH)) {
    d->kind = Decoded::Kind::kSkip;
    d->why = "fstat() of an open file: nothing to check";
    return;
  }
  const uint64_t rest = flags & ~static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW);
  if (flags & AT_SYMLINK_NOFOLLOW)
    Req(d, Lstat{.dirfd = Fd{dirfd}, .path = std::move(p), .flags = rest}, dirfd);
  else
    Req(d, Stat{.dirfd = Fd{dirfd}, .path = std::move(p), .flags = rest}, dirfd);
}

void DecodeSockaddr(Decoded* d, const Memory& m, uint64_t addr, uint64_t len) {
  sockaddr_storage ss{};
  const size_t n = std::min<uint64_t>(len, sizeof ss);
  if (n < sizeof(sa_family_t) || !m.Bytes(addr, &ss, n)) {
    d->kind = Decoded::Kind::kSkip;
    d->why = "a socket address the tracer cannot read";
    return;
  }
  d->family = ss.ss_family;
  if (ss.ss_family == AF_INET && n >= sizeof(sockaddr_in)) {
    d->port = ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  } else if (ss.ss_family == AF_INET6 && n >= sizeof(sockaddr_in6)) {
    d->port = ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  } else if (ss.ss_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(&ss);
    const size_t off = offsetof(sockaddr_un, sun_path);
    if (n > off && un->sun_path[0] == '\0') {
      d->abstract_name.assign(un->sun_path + 1, n - off - 1);
    } else if (n > off) {
      // A named socket: its path (bind makes a socket node).
      const size_t max = n - off;
      d->unix_path.assign(un->sun_path, strnlen(un->sun_path, max));
    }
  }
}

}  // namespace

std::string SyscallName(long nr) {
  auto it = Names().find(nr);
  return it != Names().end() ? it->second : fmt::format("syscall_{}", nr);
}

Decoded Decode(const Stop& s, const Memory& m) {
  Decoded d;
  d.call = SyscallName(s.nr);
  const auto& a = s.args;
  if (s.nr == -2) {
    d.call = "other-abi";
    d.kind = Decoded::Kind::kUnknown;
    d.why = "a system call of another ABI (i386 or x32), which the tracer does not read";
    return d;
  }
  switch (s.nr) {
    case SYS_open: DecodeOpen(&d, m, kAtFdcwdNum, a[0], a[1], a[2]); break;
    case SYS_creat:
      DecodeOpen(&d, m, kAtFdcwdNum, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1]);
      break;
    case SYS_openat: DecodeOpen(&d, m, AsFd(a[0]), a[1], a[2], a[3]); break;
    case SYS_openat2: {
      open_how how{};
      if (a[3] < sizeof how || !m.Bytes(a[2], &how, sizeof how)) {
        d.kind = Decoded::Kind::kUnknown;
        d.why = "openat2() with an open_how the tracer cannot read";
        break;
      }
      if (how.resolve != 0) {
        d.kind = Decoded::Kind::kUnknown;
        d.why = fmt::format("openat2() RESOLVE_* flags {:#x} are not modelled", how.resolve);
        break;
      }
      DecodeOpen(&d, m, AsFd(a[0]), a[1], how.flags, how.mode);
      break;
    }
    case SYS_stat: DecodeStat(&d, m, kAtFdcwdNum, a[0], 0); break;
    case SYS_lstat: DecodeStat(&d, m, kAtFdcwdNum, a[0], AT_SYMLINK_NOFOLLOW); break;
    case SYS_newfstatat: DecodeStat(&d, m, AsFd(a[0]), a[1], a[3]); break;
    case SYS_statx:
      // A statx asking for nothing is answered even where getattr would
      // refuse (fuse_getattr()): not the stat the model answers.
      if (a[3] == 0) {
        d.kind = Decoded::Kind::kSkip;
        d.why = "statx() asking for no field";
        break;
      }
      DecodeStat(&d, m, AsFd(a[0]), a[1], a[2] & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH));
      break;
    case SYS_access:
    case SYS_faccessat:
    case SYS_faccessat2: {
      const AtArgs x{a, s.nr != SYS_access};
      Access r;
      if (!ReadAtPath(m, x, r, &d)) break;
      r.mode = static_cast<uint32_t>(x[2]);
      r.flags = s.nr == SYS_faccessat2 ? a[3] : 0;
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_execve:
    case SYS_execveat: {
      const AtArgs x{a, s.nr == SYS_execveat};
      ExecCheck r;
      if (!ReadAtPath(m, x, r, &d)) break;
      r.flags = x.at ? (a[4] & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) : 0;
      ReqAt(&d, std::move(r));
      d.exec = true;
      break;
    }
    case SYS_mkdir:
    case SYS_mkdirat: {
      const AtArgs x{a, s.nr == SYS_mkdirat};
      Mkdir r;
      if (!ReadAtPath(m, x, r, &d)) break;
      r.mode = static_cast<uint32_t>(x[2] & 07777);
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_mknod:
    case SYS_mknodat: {
      const AtArgs x{a, s.nr == SYS_mknodat};
      Mknod r;
      if (!ReadAtPath(m, x, r, &d)) break;
      const uint64_t mode = x[2];
      const dev_t dev = static_cast<dev_t>(x[3]);
      r.type = (mode & S_IFMT) ? static_cast<uint32_t>(mode & S_IFMT) : S_IFREG;
      r.mode = static_cast<uint32_t>(mode & 07777);
      r.rdev_major = major(dev);
      r.rdev_minor = minor(dev);
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_symlink:
    case SYS_symlinkat: {
      const bool at = s.nr == SYS_symlinkat;
      Symlink r;
      if (!ReadPath(m, a[0], &r.target, &d)) break;
      r.dirfd = Fd{at ? AsFd(a[1]) : kAtFdcwdNum};
      if (!ReadPath(m, at ? a[2] : a[1], &r.path, &d)) break;
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_link:
    case SYS_linkat: {
      const AtArgs x{a, s.nr == SYS_linkat};
      Link r;
      r.dirfd = Fd{x.dirfd()};
      if (!ReadPath(m, x[1], &r.oldpath, &d)) break;
      if (!ReadPath(m, x.at ? a[3] : a[1], &r.newpath, &d)) break;
      r.flags = x.at ? a[4] : 0;
      SecondDirfd(&d, x);
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_unlink:
    case SYS_unlinkat:
    case SYS_rmdir: {
      const AtArgs x{a, s.nr == SYS_unlinkat};
      Unlink r;
      if (!ReadAtPath(m, x, r, &d)) break;
      r.flags = x.at ? a[2] : 0;
      if (s.nr == SYS_rmdir || (x.at && r.flags == AT_REMOVEDIR))
        ReqAt(&d, Rmdir{.dirfd = r.dirfd, .path = std::move(r.path)});
      else
        ReqAt(&d, std::move(r));
      break;
    }
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2: {
      const AtArgs x{a, s.nr != SYS_rename};
      Rename r;
      r.dirfd = Fd{x.dirfd()};
      if (!ReadPath(m, x[1], &r.oldpath, &d)) break;
      if (!ReadPath(m, x.at ? a[3] : a[1], &r.newpath, &d)) break;
      r.flags = s.nr == SYS_renameat2 ? a[4] : 0;
      SecondDirfd(&d, x);
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_truncate: ReqPath<Truncate>(&d, m, a[0]); break;
    case SYS_ftruncate: ReqFd(&d, Ftruncate{.fd = Fd{AsFd(a[0])}}); break;
    case SYS_chmod:
    case SYS_fchmodat:
    case 452: {
      const AtArgs x{a, s.nr != SYS_chmod};
      Chmod r;
      if (!ReadAtPath(m, x, r, &d)) break;
      r.mode = static_cast<uint32_t>(x[2] & 07777);
      r.flags = s.nr == 452 ? a[3] : 0;
      EmptyPathIsTheFd(&d, r);
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_fchmod:
      // The fd's own file as the call sees it (an O_PATH one is EBADF).
      ReqFd(&d, Fchmod{.fd = Fd{AsFd(a[0])}, .mode = static_cast<uint32_t>(a[1] & 07777)});
      break;
    case SYS_fallocate:
      ReqFd(&d, Fallocate{.fd = Fd{AsFd(a[0])}, .mode = static_cast<uint32_t>(a[1]),
                          .offset = a[2], .len = a[3]});
      break;
    case SYS_chown:
    case SYS_lchown:
    case SYS_fchown:
    case SYS_fchownat: {
      const auto id = [](uint64_t v) {
        return static_cast<int64_t>(static_cast<int32_t>(v)) == -1 ? int64_t{-1}
                                                                   : static_cast<int64_t>(v & 0xffffffffu);
      };
      std::string p;
      int dirfd = kAtFdcwdNum;
      uint64_t flags = 0;
      int64_t uid, gid;
      if (s.nr == SYS_fchown) {
        ReqFd(&d, Fchown{.fd = Fd{AsFd(a[0])}, .uid = id(a[1]), .gid = id(a[2])});
        break;
      } else if (s.nr == SYS_fchownat) {
        dirfd = AsFd(a[0]);
        if (!ReadPath(m, a[1], &p, &d)) break;
        uid = id(a[2]);
        gid = id(a[3]);
        flags = a[4];
        if (p.empty() && (flags & AT_EMPTY_PATH)) {
          d.abs_fd = dirfd;
          dirfd = kAtFdcwdNum;
          flags &= ~static_cast<uint64_t>(AT_EMPTY_PATH);
        }
      } else {
        if (!ReadPath(m, a[0], &p, &d)) break;
        uid = id(a[1]);
        gid = id(a[2]);
        if (s.nr == SYS_lchown) flags = AT_SYMLINK_NOFOLLOW;
      }
      const uint64_t rest = flags & ~static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW);
      if (flags & AT_SYMLINK_NOFOLLOW)
        Req(&d, Lchown{.dirfd = Fd{dirfd}, .path = std::move(p), .uid = uid, .gid = gid, .flags = rest},
            dirfd);
      else
        Req(&d, Chown{.dirfd = Fd{dirfd}, .path = std::move(p), .uid = uid, .gid = gid, .flags = rest},
            dirfd);
      break;
    }
    case SYS_readlink:
    case SYS_readlinkat: {
      Readlink r;
      if (!ReadAtPath(m, AtArgs{a, s.nr == SYS_readlinkat}, r, &d)) break;
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_chdir: ReqPath<Chdir>(&d, m, a[0]); break;
    case SYS_fchdir: ReqFd(&d, Fchdir{.fd = Fd{AsFd(a[0])}}); break;
    case SYS_chroot: ReqPath<Chroot>(&d, m, a[0]); break;
    case SYS_mount: {
      std::string source, target, type;
      bool t = false;
      if (!ReadPath(m, a[1], &target, &d)) break;
      m.String(a[0], kPathRead, &source, &t);
      m.String(a[2], 256, &type, &t);
      const uint64_t flags = a[3];
      if (flags & MS_BIND) {
        if (flags & MS_REMOUNT) {
          d.kind = Decoded::Kind::kUnknown;
          d.why = "mount(MS_BIND|MS_REMOUNT) is not modelled on the live host";
          break;
        }
        Req(&d, BindMount{.source = source, .target = target, .flags = flags});
      } else if (type == "tmpfs" && !(flags & (MS_REMOUNT | MS_MOVE | MS_SHARED | MS_PRIVATE |
                                                MS_SLAVE | MS_UNBINDABLE))) {
        Req(&d, MountTmpfs{.path = target, .flags = flags});
      } else {
        d.kind = Decoded::Kind::kUnknown;
        d.why = fmt::format("mount(\"{}\", \"{}\", \"{}\", {:#x}) is not modelled", source,
                            target, type, flags);
      }
      break;
    }
    case SYS_pivot_root:
    case 429:
    case 442:
      // Followed for the mounts they change (a mount namespace's view is
      // read again after them); their own checks are not modelled here.
      d.kind = Decoded::Kind::kUnknown;
      d.why = fmt::format("{}() is not modelled on the live host", d.call);
      break;
    case SYS_umount2: {
      Umount r;
      if (!ReadPath(m, a[0], &r.path, &d)) break;
      r.flags = a[1];
      Req(&d, std::move(r));
      break;
    }
    case SYS_utimensat: {
      Utimensat r;
      const int dirfd = AsFd(a[0]);
      r.flags = a[3];
      const bool by_fd = a[1] == 0 && dirfd != kAtFdcwdNum && r.flags == 0;
      if (a[1] == 0 && !by_fd) {
        // utimensat(AT_FDCWD, NULL, ...) or NULL with flags: EINVAL/EFAULT
        // paths the model does not take.
        d.kind = Decoded::Kind::kUnknown;
        d.why = "utimensat() with a NULL path and AT_FDCWD or flags is not modelled";
        break;
      }
      if (by_fd) {
        // futimens(fd): the fd's own file.
        d.fd = dirfd;
      } else {
        r.dirfd = Fd{dirfd};
        if (!ReadPath(m, a[1], &r.path, &d)) break;
      }
      if (a[2] != 0) {
        struct timespec ts[2];
        if (!m.Bytes(a[2], ts, sizeof ts)) {
          d.kind = Decoded::Kind::kSkip;
          d.why = "a times argument the tracer cannot read (the kernel answers EFAULT)";
          break;
        }
        std::array<TimeSpec, 2> t{};
        for (int i = 0; i < 2; ++i)
          t[i] = ts[i].tv_nsec == UTIME_NOW    ? TimeSpec::kNow
                 : ts[i].tv_nsec == UTIME_OMIT ? TimeSpec::kOmit
                                               : TimeSpec::kSet;
        r.times = t;
      }
      if (by_fd) {
        Req(&d, Futimens{.fd = Fd{dirfd}, .times = r.times});
        break;
      }
      ReqAt(&d, std::move(r));
      break;
    }
    case SYS_ioctl:
      ReqFd(&d, Ioctl{.fd = Fd{AsFd(a[0])}, .cmd = static_cast<uint32_t>(a[1])});
      break;
    case SYS_bind:
    case SYS_connect:
      d.kind = s.nr == SYS_bind ? Decoded::Kind::kBind : Decoded::Kind::kConnect;
      d.fd = AsFd(a[0]);
      DecodeSockaddr(&d, m, a[1], a[2]);
      break;
    case SYS_kill:
      d.kind = Decoded::Kind::kSignal;
      d.target = static_cast<int32_t>(a[0]);
      break;
    case SYS_tkill:
      d.kind = Decoded::Kind::kSignal;
      d.target = static_cast<int32_t>(a[0]);
      d.thread_target = true;
      break;
    case SYS_tgkill:
      d.kind = Decoded::Kind::kSignal;
      d.target = static_cast<int32_t>(a[1]);
      d.thread_target = true;
      break;
    case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
    case SYS_setresuid: case SYS_setresgid: case SYS_setfsuid: case SYS_setfsgid:
    case SYS_setgroups: case SYS_capset: case SYS_prctl:
      d.kind = Decoded::Kind::kCred;
      break;
    case 444: {
      d.kind = Decoded::Kind::kLandlockCreate;
      if (a[2] != 0) {  // LANDLOCK_CREATE_RULESET_VERSION or _ERRATA: no ruleset
        d.kind = Decoded::Kind::kSkip;
        d.why = "a Landlock ABI query";
        break;
      }
      uint64_t attr[3] = {0, 0, 0};
      const size_t n = std::min<uint64_t>(a[1], sizeof attr);
      if (a[0] == 0 || n < 8 || !m.Bytes(a[0], attr, n)) {
        d.kind = Decoded::Kind::kUnknown;
        d.why = "landlock_create_ruleset() with attributes the tracer cannot read";
        break;
      }
      d.ll_handled_fs = attr[0];
      d.ll_handled_net = n >= 16 ? attr[1] : 0;
      d.ll_scoped = n >= 24 ? attr[2] : 0;
      break;
    }
    case 445: {
      d.kind = Decoded::Kind::kLandlockAddRule;
      d.ll_ruleset_fd = AsFd(a[0]);
      d.ll_rule_type = static_cast<int>(a[1]);
      if (d.ll_rule_type == 1) {  // LANDLOCK_RULE_PATH_BENEATH: packed u64, s32
        unsigned char raw[12];
        if (!m.Bytes(a[2], raw, sizeof raw)) {
          d.kind = Decoded::Kind::kUnknown;
          d.why = "landlock_add_rule() with a rule the tracer cannot read";
          break;
        }
        std::memcpy(&d.ll_access, raw, 8);
        int32_t fd;
        std::memcpy(&fd, raw + 8, 4);
        d.ll_parent_fd = fd;
      } else if (d.ll_rule_type == 2) {  // LANDLOCK_RULE_NET_PORT
        uint64_t raw[2];
        if (!m.Bytes(a[2], raw, sizeof raw)) {
          d.kind = Decoded::Kind::kUnknown;
          d.why = "landlock_add_rule() with a rule the tracer cannot read";
          break;
        }
        d.ll_access = raw[0];
        d.ll_port = raw[1];
      }
      break;
    }
    case 446:
      d.kind = Decoded::Kind::kLandlockRestrict;
      d.ll_ruleset_fd = AsFd(a[0]);
      break;
    case SYS_fcntl:
      if (static_cast<uint32_t>(a[1]) != F_DUPFD && static_cast<uint32_t>(a[1]) != F_DUPFD_CLOEXEC) {
        d.kind = Decoded::Kind::kSkip;
        d.why = "fcntl() other than a copy";
        break;
      }
      [[fallthrough]];
    case SYS_dup:
    case SYS_dup2:
    case SYS_dup3:
      d.kind = Decoded::Kind::kDup;
      d.fd = AsFd(a[0]);
      if ((s.nr == SYS_dup3 && (a[2] & O_CLOEXEC)) ||
          (s.nr == SYS_fcntl && static_cast<uint32_t>(a[1]) == F_DUPFD_CLOEXEC))
        d.open_flags = O_CLOEXEC;
      break;
    case SYS_io_uring_setup:
      d.kind = Decoded::Kind::kUnknown;
      d.why = "io_uring: the operations it submits never pass the tracer";
      break;
    default:
      d.kind = Decoded::Kind::kUnknown;
      d.why = fmt::format("system call {} is not decoded", s.nr);
      break;
  }
  return d;
}

}  // namespace pathwarden::trace
