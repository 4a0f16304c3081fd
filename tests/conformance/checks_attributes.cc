// Attribute checks: truncate, what a write clears, utimensat, extended
// attributes (POSIX ACLs: checks_acl.cc).
//
// Linux: fs/open.c do_truncate()/vfs_truncate() (write permission),
// fs/inode.c should_remove_suid() and fs/attr.c setattr_should_drop_sgid()
// (S_ISUID, and S_ISGID with group exec or a group the caller is not in,
// unless CAP_FSETID), fs/utimes.c vfs_utimes() and fs/attr.c
// setattr_prepare() (NULL or UTIME_NOW twice: owner or write; explicit
// times: owner or CAP_FOWNER), fs/xattr.c xattr_permission(),
// security/commoncap.c cap_inode_setxattr(), fs/posix_acl.c
// posix_acl_permission() (one matching group entry must grant all of it)
// and set_posix_acl() (the owner or CAP_FOWNER).

#include <acl/libacl.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/acl.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

// Opens `path` and writes one byte.
std::string WriteByte(const char* path) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return "open " + ErrnoName(errno);
  std::string r = Result(write(fd, "x", 1));
  close(fd);
  return r;
}

std::string Mtime(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return path + ".mtime=" + ErrnoName(errno);
  return path + ".mtime=" + std::to_string(st.st_mtim.tv_sec);
}

void AddTruncateWrite() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m, "hello"); }; };
  auto st = [] { return Stat("f") + " " + Size("f"); };
  auto tr = [] { return TruncateOp("f", 0); };
  Add("truncate.owner", U1000(), file(1000, 1000, 0644), tr, st, "ok f=f0644,1000:1000 f.size=0");
  Add(
      "truncate.owner-extend", U1000(), file(1000, 1000, 0644), [] { return TruncateOp("f", 100); },
      st, "ok f=f0644,1000:1000 f.size=100");
  Add("truncate.owner-readonly", U1000(), file(1000, 1000, 0444), tr, st,
      "EACCES f=f0444,1000:1000 f.size=5");
  Add("truncate.other-writable", U1001(), file(1000, 1000, 0666), tr, st,
      "ok f=f0666,1000:1000 f.size=0");
  Add("truncate.other-readonly", U1001(), file(1000, 1000, 0644), tr, st,
      "EACCES f=f0644,1000:1000 f.size=5");
  Add("truncate.group-writable", U1001(), file(1000, 2000, 0664), tr, st,
      "ok f=f0664,1000:2000 f.size=0");
  Add("truncate.root-0000", Root(), file(1000, 1000, 0), tr, st, "ok f=f0000,1000:1000 f.size=0");
  Add("truncate.cap-fowner-not-enough", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644), tr, st,
      "EACCES f=f0644,1000:1000 f.size=5");
  Add(
      "truncate.directory", Root(), [] { MkDir("f", 0, 0, 0755); }, tr, nullptr, "EISDIR");
  Add(
      "truncate.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0700);
        MkFile("a/f", 1000, 1000, 0644);
      },
      [] { return TruncateOp("a/f", 0); }, nullptr, "EACCES");
  Add(
      "truncate.negative", U1000(), file(1000, 1000, 0644), [] { return TruncateOp("f", -1); },
      nullptr, "EINVAL");
  Add(
      "ftruncate.rdonly-fd", U1000(), file(1000, 1000, 0644),
      [] {
        int fd = open("f", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return "open " + ErrnoName(errno);
        std::string r = Result(ftruncate(fd, 0));
        close(fd);
        return r;
      },
      st, "EINVAL f=f0644,1000:1000 f.size=5");
  Add(
      "ftruncate.wronly-fd-other-writable", U1001(), file(1000, 1000, 0666),
      [] {
        int fd = open("f", O_WRONLY | O_CLOEXEC);
        if (fd < 0) return "open " + ErrnoName(errno);
        std::string r = Result(ftruncate(fd, 0));
        close(fd);
        return r;
      },
      st, "ok f=f0666,1000:1000 f.size=0");
  // What truncate and write clear (the same rule: should_remove_suid()).
  struct Row {
    const char* name;
    const Identity& who;
    uid_t u;
    gid_t g;
    mode_t m;
    const char* after;
  };
  const Row rows[] = {
      {"setuid.nonowner", U1001(), 1000, 1000, 04666, "f0666"},
      {"setuid.owner", U1000(), 1000, 1000, 04666, "f0666"},
      {"setuid.root", Root(), 1000, 1000, 04666, "f4666"},
      {"setuid.cap-fsetid", U1001().With({CAP_FSETID}), 1000, 1000, 04666, "f4666"},
      {"setuid.cap-fowner", U1001().With({CAP_FOWNER}), 1000, 1000, 04666, "f0666"},
      {"setgid-group-exec.nonowner", U1001(), 1000, 1000, 02676, "f0676"},
      {"setgid-group-exec.group-member", U1001(), 1000, 2000, 02676, "f0676"},
      {"setgid-no-group-exec.nonmember", U1001(), 1000, 1000, 02666, "f0666"},
      {"setgid-no-group-exec.member", U1001(), 1000, 2000, 02666, "f2666"},
      {"setuid-setgid.nonowner", U1001(), 1000, 1000, 06676, "f0676"},
      {"sticky-kept", U1001(), 1000, 1000, 01666, "f1666"},
  };
  for (const Row& r : rows) {
    std::string owner = std::to_string(r.u) + ":" + std::to_string(r.g);
    Add(std::string("truncate.clears.") + r.name, r.who, file(r.u, r.g, r.m), tr, st,
        std::string("ok f=") + r.after + "," + owner + " f.size=0");
    Add(
        std::string("write.clears.") + r.name, r.who, file(r.u, r.g, r.m),
        [] { return WriteByte("f"); }, st,
        std::string("ok f=") + r.after + "," + owner + " f.size=5");
  }
  Add(
      "write.clears.failed-open-keeps", U1001(), file(1000, 1000, 04644),
      [] { return WriteByte("f"); }, st, "open EACCES f=f4644,1000:1000 f.size=5");
}

// Operations through a file descriptor: the open mode decides for the
// data (fallocate, ftruncate), the inode's permissions and owner for the
// attributes (fchmod, fchown, futimens, fsetxattr), whatever the fd.
std::string OnFd(const char* path, int flags, const std::function<long(int)>& op) {
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0) return "open " + ErrnoName(errno);
  std::string r = Result(op(fd));
  close(fd);
  return r;
}

void AddFd() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m, "hello"); }; };
  auto st = [] { return Stat("f") + " " + Size("f"); };
  auto falloc = [](int fd) { return fallocate(fd, 0, 0, 100); };
  Add(
      "fallocate.wronly", U1001(), file(1000, 1000, 0666),
      [=] { return OnFd("f", O_WRONLY, falloc); }, st, "ok f=f0666,1000:1000 f.size=100");
  Add(
      "fallocate.rdonly", U1000(), file(1000, 1000, 0644),
      [=] { return OnFd("f", O_RDONLY, falloc); }, st, "EBADF f=f0644,1000:1000 f.size=5");
  Add(
      "fallocate.keep-size", U1000(), file(1000, 1000, 0644),
      [] {
        return OnFd("f", O_RDWR, [](int fd) { return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 100); });
      },
      st, "ok f=f0644,1000:1000 f.size=5");
  Add(
      "fallocate.clears-setuid-nonowner", U1001(), file(1000, 1000, 04666),
      [=] { return OnFd("f", O_WRONLY, falloc); }, st, "ok f=f0666,1000:1000 f.size=100");
  Add(
      "fallocate.keeps-setuid-root", Root(), file(1000, 1000, 04666),
      [=] { return OnFd("f", O_WRONLY, falloc); }, st, "ok f=f4666,1000:1000 f.size=100");
  Add(
      "fallocate.path-fd", U1000(), file(1000, 1000, 0644),
      [=] { return OnFd("f", O_PATH, falloc); }, st, "EBADF f=f0644,1000:1000 f.size=5");
  Add(
      "fchmod.owner-path-fd", U1000(), file(1000, 1000, 0644),
      [] { return OnFd("f", O_PATH, [](int fd) { return fchmod(fd, 0600); }); }, st,
      "EBADF f=f0644,1000:1000 f.size=5");
  Add(
      "fchown.owner-rdonly-fd", U1000(), file(1000, 1000, 0444),
      [] { return OnFd("f", O_RDONLY, [](int fd) { return fchown(fd, -1, 100); }); }, st,
      "ok f=f0444,1000:100 f.size=5");
  Add(
      "fchown.nonowner-rdwr-fd", U1001(), file(1000, 1000, 0666),
      [] { return OnFd("f", O_RDWR, [](int fd) { return fchown(fd, -1, 2000); }); }, st,
      "EPERM f=f0666,1000:1000 f.size=5");
  Add(
      "fsetxattr.owner-rdonly-fd-readonly-file", U1000(), file(1000, 1000, 0444),
      [] {
        return OnFd("f", O_RDONLY, [](int fd) { return fsetxattr(fd, "user.new", "v", 1, 0); });
      },
      [] { return Xattrs("f"); }, "EACCES f.xattrs=");
  Add(
      "fsetxattr.owner-rdonly-fd-writable-file", U1000(), file(1000, 1000, 0644),
      [] {
        return OnFd("f", O_RDONLY, [](int fd) { return fsetxattr(fd, "user.new", "v", 1, 0); });
      },
      [] { return Xattrs("f"); }, "ok f.xattrs=user.new");
  Add(
      "fsetxattr.path-fd", U1000(), file(1000, 1000, 0644),
      [] { return OnFd("f", O_PATH, [](int fd) { return fsetxattr(fd, "user.new", "v", 1, 0); }); },
      [] { return Xattrs("f"); }, "EBADF f.xattrs=");
  // Read permission for xattrs is asked of the inode again, not of the
  // fd; ftruncate asks only the fd's open mode.
  Add(
      "fgetxattr.owner-rdonly-fd-after-chmod", U1000(),
      [] {
        MkFile("f", 1000, 1000, 0644);
        SetXattr("f", "user.old", "o");
      },
      [] {
        return OnFd("f", O_RDONLY, [](int fd) {
          char buf[8];
          if (fchmod(fd, 0200) != 0) return -1L;
          return static_cast<long>(fgetxattr(fd, "user.old", buf, sizeof buf));
        });
      },
      [] { return Stat("f"); }, "EACCES f=f0200,1000:1000");
  Add(
      "ftruncate.owner-wronly-fd-after-chmod", U1000(), file(1000, 1000, 0644),
      [] {
        return OnFd("f", O_WRONLY, [](int fd) {
          if (fchmod(fd, 0444) != 0) return -1;
          return ftruncate(fd, 0);
        });
      },
      st, "ok f=f0444,1000:1000 f.size=0");
  Add(
      "futimens.null-nonowner-writable", U1001(), file(1000, 1000, 0666),
      [] { return OnFd("f", O_RDONLY, [](int fd) { return futimens(fd, nullptr); }); }, nullptr,
      "ok");
  Add(
      "futimens.null-nonowner-readonly-file", U1001(), [] { MkFile("f", 1000, 1000, 0644); },
      [] { return OnFd("f", O_RDONLY, [](int fd) { return futimens(fd, nullptr); }); }, nullptr,
      "EACCES");
  Add(
      "futimens.explicit-nonowner-wronly-fd", U1001(), file(1000, 1000, 0666),
      [] {
        return OnFd("f", O_WRONLY, [](int fd) {
          struct timespec ts[2] = {{1200000000, 0}, {1300000000, 0}};
          return futimens(fd, ts);
        });
      },
      nullptr, "EPERM");
}

void AddUtimens() {
  auto file = [](uid_t u, gid_t g, mode_t m) {
    return [=] {
      MkFile("f", u, g, m);
      SetTimes("f", 1000000000);
    };
  };
  auto explicit_times = [] {
    struct timespec ts[2] = {{1200000000, 0}, {1300000000, 0}};
    return Result(utimensat(AT_FDCWD, "f", ts, 0));
  };
  auto null_times = [] { return Result(utimensat(AT_FDCWD, "f", nullptr, 0)); };
  auto now_now = [] {
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    return Result(utimensat(AT_FDCWD, "f", ts, 0));
  };
  auto now_omit = [] {
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    return Result(utimensat(AT_FDCWD, "f", ts, 0));
  };
  auto omit_omit = [] {
    struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
    return Result(utimensat(AT_FDCWD, "f", ts, 0));
  };
  // The times a NULL or UTIME_NOW sets are the clock's: only whether they
  // changed is canonical.
  auto changed = [] {
    struct stat st;
    if (lstat("f", &st) != 0) return "f.mtime=" + ErrnoName(errno);
    return std::string(st.st_mtim.tv_sec == 1000000000 ? "f.mtime=unchanged" : "f.mtime=changed");
  };
  auto mt = [] { return Mtime("f"); };
  Add("utimensat.null.owner", U1000(), file(1000, 1000, 0444), null_times, changed,
      "ok f.mtime=changed");
  Add("utimensat.null.nonowner-writable", U1001(), file(1000, 1000, 0666), null_times, changed,
      "ok f.mtime=changed");
  Add("utimensat.null.nonowner-readonly", U1001(), file(1000, 1000, 0644), null_times, changed,
      "EACCES f.mtime=unchanged");
  Add("utimensat.null.group-writable", U1001(), file(1000, 2000, 0664), null_times, changed,
      "ok f.mtime=changed");
  Add("utimensat.null.cap-fowner", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644), null_times,
      changed, "ok f.mtime=changed");
  Add("utimensat.null.root-nocaps", RootNoCaps(), file(1000, 1000, 0644), null_times, changed,
      "EACCES f.mtime=unchanged");
  Add("utimensat.now-now.nonowner-writable", U1001(), file(1000, 1000, 0666), now_now, changed,
      "ok f.mtime=changed");
  Add("utimensat.now-now.nonowner-readonly", U1001(), file(1000, 1000, 0644), now_now, changed,
      "EACCES f.mtime=unchanged");
  Add("utimensat.now-omit.nonowner-writable", U1001(), file(1000, 1000, 0666), now_omit, changed,
      "EPERM f.mtime=unchanged");
  Add("utimensat.now-omit.owner", U1000(), file(1000, 1000, 0444), now_omit, changed,
      "ok f.mtime=unchanged");
  Add("utimensat.omit-omit.nonowner-readonly", U1001(), file(1000, 1000, 0644), omit_omit, changed,
      "ok f.mtime=unchanged");
  Add("utimensat.explicit.owner", U1000(), file(1000, 1000, 0444), explicit_times, mt,
      "ok f.mtime=1300000000");
  Add("utimensat.explicit.nonowner-writable", U1001(), file(1000, 1000, 0666), explicit_times, mt,
      "EPERM f.mtime=1000000000");
  Add("utimensat.explicit.nonowner-readonly", U1001(), file(1000, 1000, 0644), explicit_times, mt,
      "EPERM f.mtime=1000000000");
  Add("utimensat.explicit.cap-fowner", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644),
      explicit_times, mt, "ok f.mtime=1300000000");
  Add("utimensat.explicit.cap-dac-override", U1001().With({CAP_DAC_OVERRIDE}),
      file(1000, 1000, 0644), explicit_times, mt, "EPERM f.mtime=1000000000");
  Add("utimensat.explicit.root", Root(), file(1000, 1000, 0), explicit_times, mt,
      "ok f.mtime=1300000000");
  Add(
      "utimensat.explicit.symlink-nofollow-owner", U1000(),
      [] {
        MkFile("t", 0, 0, 0644);
        MkSymlink("t", "f", 1000, 1000);
      },
      [] {
        struct timespec ts[2] = {{1200000000, 0}, {1300000000, 0}};
        return Result(utimensat(AT_FDCWD, "f", ts, AT_SYMLINK_NOFOLLOW));
      },
      [] { return Mtime("f"); }, "ok f.mtime=1300000000");
  Add(
      "utimensat.explicit.symlink-follow-others-target", U1000(),
      [] {
        MkFile("t", 0, 0, 0666);
        MkSymlink("t", "f", 1000, 1000);
      },
      explicit_times, nullptr, "EPERM");
  Add(
      "utimensat.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0700);
        MkFile("a/f", 1000, 1000, 0644);
      },
      [] { return Result(utimensat(AT_FDCWD, "a/f", nullptr, 0)); }, nullptr, "EACCES");
}

std::string Get(const char* path, const char* name) {
  char buf[64];
  ssize_t n = lgetxattr(path, name, buf, sizeof buf);
  if (n < 0) return ErrnoName(errno);
  return "ok " + std::string(buf, static_cast<size_t>(n));
}
// The names the caller sees, sorted.
std::string List(const char* path) {
  char buf[1024];
  ssize_t n = llistxattr(path, buf, sizeof buf);
  if (n < 0) return ErrnoName(errno);
  std::vector<std::string> names;
  for (ssize_t i = 0; i < n;) {
    std::string name(buf + i);
    i += static_cast<ssize_t>(name.size()) + 1;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::string out = "ok";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? "," : " ") + names[i];
  return out;
}

void AddXattrs() {
  auto file = [](uid_t u, gid_t g, mode_t m) {
    return [=] {
      MkFile("f", u, g, m);
      SetXattr("f", "user.old", "o");
    };
  };
  auto xs = [] { return Xattrs("f"); };
  // user.*: file permissions.
  Add(
      "xattr.user.set-owner", U1000(), file(1000, 1000, 0644), [] { return SetXattrOp("f", "user.new"); },
      xs, "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.set-owner-readonly-file", U1000(), file(1000, 1000, 0444),
      [] { return SetXattrOp("f", "user.new"); }, xs, "EACCES f.xattrs=user.old");
  Add(
      "xattr.user.set-nonowner-writable", U1001(), file(1000, 1000, 0666),
      [] { return SetXattrOp("f", "user.new"); }, xs, "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.set-nonowner-readonly", U1001(), file(1000, 1000, 0644),
      [] { return SetXattrOp("f", "user.new"); }, xs, "EACCES f.xattrs=user.old");
  Add(
      "xattr.user.set-group-writable", U1001(), file(1000, 2000, 0664),
      [] { return SetXattrOp("f", "user.new"); }, xs, "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.set-cap-fowner-readonly", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644),
      [] { return SetXattrOp("f", "user.new"); }, xs, "EACCES f.xattrs=user.old");
  Add(
      "xattr.user.set-root", Root(), file(1000, 1000, 0), [] { return SetXattrOp("f", "user.new"); }, xs,
      "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.get-readable", U1001(), file(1000, 1000, 0644),
      [] { return Get("f", "user.old"); }, nullptr, "ok o");
  Add(
      "xattr.user.get-unreadable", U1001(), file(1000, 1000, 0600),
      [] { return Get("f", "user.old"); }, nullptr, "EACCES");
  Add(
      "xattr.user.get-owner-write-only", U1000(), file(1000, 1000, 0200),
      [] { return Get("f", "user.old"); }, nullptr, "EACCES");
  Add(
      "xattr.user.get-missing", U1001(), file(1000, 1000, 0644),
      [] { return Get("f", "user.missing"); }, nullptr, "ENODATA");
  Add(
      "xattr.user.get-missing-unreadable", U1001(), file(1000, 1000, 0600),
      [] { return Get("f", "user.missing"); }, nullptr, "EACCES");
  Add(
      "xattr.user.list-unreadable", U1001(), file(1000, 1000, 0600), [] { return List("f"); },
      nullptr, "ok user.old");
  Add(
      "xattr.user.remove-nonowner-readonly", U1001(), file(1000, 1000, 0644),
      [] { return Result(lremovexattr("f", "user.old")); }, xs, "EACCES f.xattrs=user.old");
  Add(
      "xattr.user.remove-nonowner-writable", U1001(), file(1000, 1000, 0666),
      [] { return Result(lremovexattr("f", "user.old")); }, xs, "ok f.xattrs=");
  Add(
      "xattr.user.remove-missing", U1000(), file(1000, 1000, 0644),
      [] { return Result(lremovexattr("f", "user.missing")); }, xs, "ENODATA f.xattrs=user.old");
  Add(
      "xattr.user.create-existing", U1000(), file(1000, 1000, 0644),
      [] { return SetXattrOp("f", "user.old", XATTR_CREATE); }, [] { return XattrValue("f", "user.old"); },
      "EEXIST f[user.old]=o");
  Add(
      "xattr.user.replace-missing", U1000(), file(1000, 1000, 0644),
      [] { return SetXattrOp("f", "user.new", XATTR_REPLACE); }, xs, "ENODATA f.xattrs=user.old");
  Add(
      "xattr.user.replace-existing", U1000(), file(1000, 1000, 0644),
      [] { return SetXattrOp("f", "user.old", XATTR_REPLACE); },
      [] { return XattrValue("f", "user.old"); }, "ok f[user.old]=v");
  Add(
      "xattr.user.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0700);
        MkFile("a/f", 1000, 1000, 0644);
      },
      [] { return SetXattrOp("a/f", "user.new"); }, nullptr, "EACCES");
  // user.* only on regular files and directories.
  Add(
      "xattr.user.set-symlink-owner", U1000(), [] { MkSymlink("t", "f", 1000, 1000); },
      [] { return SetXattrOp("f", "user.new"); }, xs, "EPERM f.xattrs=");
  Add(
      "xattr.user.get-symlink", U1000(), [] { MkSymlink("t", "f", 1000, 1000); },
      [] { return Get("f", "user.new"); }, nullptr, "ENODATA");
  Add(
      "xattr.user.set-symlink-root", Root(), [] { MkSymlink("t", "f", 1000, 1000); },
      [] { return SetXattrOp("f", "user.new"); }, xs, "EPERM f.xattrs=");
  Add(
      "xattr.user.set-fifo-owner", U1000(), [] { MkFifo("f", 1000, 1000, 0666); },
      [] { return SetXattrOp("f", "user.new"); }, xs, "EPERM f.xattrs=");
  Add(
      "xattr.user.set-dir-owner", U1000(), [] { MkDir("f", 1000, 1000, 0755); },
      [] { return SetXattrOp("f", "user.new"); }, xs, "ok f.xattrs=user.new");
  Add(
      "xattr.user.set-dir-nonowner-writable", U1001(), [] { MkDir("f", 1000, 1000, 0777); },
      [] { return SetXattrOp("f", "user.new"); }, xs, "ok f.xattrs=user.new");
  // Sticky directories: only the owner (or CAP_FOWNER) writes user.*.
  auto sticky = [](uid_t u) {
    return [=] {
      MkDir("f", u, u, 01777);
      SetXattr("f", "user.old", "o");
    };
  };
  Add(
      "xattr.user.sticky-dir.set-nonowner", U1001(), sticky(1000),
      [] { return SetXattrOp("f", "user.new"); }, xs, "EPERM f.xattrs=user.old");
  Add(
      "xattr.user.sticky-dir.remove-nonowner", U1001(), sticky(1000),
      [] { return Result(lremovexattr("f", "user.old")); }, xs, "EPERM f.xattrs=user.old");
  Add(
      "xattr.user.sticky-dir.set-owner", U1000(), sticky(1000), [] { return SetXattrOp("f", "user.new"); },
      xs, "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.sticky-dir.set-cap-fowner", U1001().With({CAP_FOWNER}), sticky(1000),
      [] { return SetXattrOp("f", "user.new"); }, xs, "ok f.xattrs=user.new,user.old");
  Add(
      "xattr.user.sticky-dir.get-nonowner", U1001(), sticky(1000),
      [] { return Get("f", "user.old"); }, nullptr, "ok o");
  Add(
      "xattr.user.sticky-dir.set-owner-no-write", U1000(),
      [] {
        MkDir("f", 1000, 1000, 01555);
        SetXattr("f", "user.old", "o");
      },
      [] { return SetXattrOp("f", "user.new"); }, xs, "EACCES f.xattrs=user.old");
  // trusted.* needs CAP_SYS_ADMIN; others do not see it.
  auto trusted = [] {
    MkFile("f", 1000, 1000, 0666);
    SetXattr("f", "trusted.old", "t");
    SetXattr("f", "user.old", "o");
  };
  Add(
      "xattr.trusted.set-owner", U1000(), trusted, [] { return SetXattrOp("f", "trusted.new"); }, xs,
      "EPERM f.xattrs=trusted.old,user.old");
  Add(
      "xattr.trusted.get-owner", U1000(), trusted, [] { return Get("f", "trusted.old"); }, nullptr,
      "ENODATA");
  Add(
      "xattr.trusted.remove-owner", U1000(), trusted,
      [] { return Result(lremovexattr("f", "trusted.old")); }, xs,
      "EPERM f.xattrs=trusted.old,user.old");
  Add(
      "xattr.trusted.list-owner", U1000(), trusted, [] { return List("f"); }, nullptr,
      "ok user.old");
  Add(
      "xattr.trusted.list-root", Root(), trusted, [] { return List("f"); }, nullptr,
      "ok trusted.old,user.old");
  Add(
      "xattr.trusted.set-cap-sys-admin", U1002().With({CAP_SYS_ADMIN}), trusted,
      [] { return SetXattrOp("f", "trusted.new"); }, xs, "ok f.xattrs=trusted.new,trusted.old,user.old");
  Add(
      "xattr.trusted.get-cap-sys-admin", U1002().With({CAP_SYS_ADMIN}), trusted,
      [] { return Get("f", "trusted.old"); }, nullptr, "ok t");
  Add(
      "xattr.trusted.set-root", Root(), trusted, [] { return SetXattrOp("f", "trusted.new"); }, xs,
      "ok f.xattrs=trusted.new,trusted.old,user.old");
  Add(
      "xattr.trusted.set-root-nocaps", RootNoCaps(), trusted,
      [] { return SetXattrOp("f", "trusted.new"); }, xs, "EPERM f.xattrs=trusted.old,user.old");
  Add(
      "xattr.trusted.set-symlink-root", Root(), [] { MkSymlink("t", "f", 1000, 1000); },
      [] { return SetXattrOp("f", "trusted.new"); }, xs, "ok f.xattrs=trusted.new");
  // security.* (other than the capability) needs CAP_SYS_ADMIN to write.
  Add(
      "xattr.security.set-owner", U1000(), trusted, [] { return SetXattrOp("f", "security.new"); }, xs,
      "EPERM f.xattrs=trusted.old,user.old");
  Add(
      "xattr.security.set-root", Root(), trusted, [] { return SetXattrOp("f", "security.new"); }, xs,
      "ok f.xattrs=security.new,trusted.old,user.old");
  Add(
      "xattr.unknown-namespace.set-owner", U1000(), trusted, [] { return SetXattrOp("f", "other.new"); },
      xs, "EOPNOTSUPP f.xattrs=trusted.old,user.old");
}

}  // namespace

void AddAttributeChecks() {
  AddTruncateWrite();
  AddFd();
  AddUtimens();
  AddXattrs();
  AddAclChecks();
}

}  // namespace pathwarden::conformance
