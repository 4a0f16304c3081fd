// The scratch host built with root's credentials through plain system
// calls and libacl, and read back without following or opening anything
// but directories. Linux: mm/shmem.c (tmpfs: ACLs, user xattrs, +i/+a)

#include "src/kernel/scratch_host.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/acl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/base/dir_names.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr int kChainLength = 41;  // one more than MAXSYMLINKS

std::string Failed(std::string_view what, int err) {
  return fmt::format("{}: {}", what, ErrnoName(err));
}

// The mount namespace of the calling thread, as its inode number (0 when
// unknown).
ino_t ThreadMountNamespace() {
  struct stat st;
  return stat("/proc/thread-self/ns/mnt", &st) == 0 ? st.st_ino : 0;
}

// The namespace EnterPrivateMountNamespace() made, inherited by forks.
ino_t entered_namespace = 0;

// The caller's mounts are its own: it is in the namespace
// EnterPrivateMountNamespace() made (pid 1's, to compare with, is often
// unreadable in a container), and no mount there propagates to a peer.
std::string PrivateMountsReason() {
  const ino_t self = ThreadMountNamespace();
  if (self == 0) return Failed("stat /proc/thread-self/ns/mnt", errno);
  if (self != entered_namespace)
    return "not in a mount namespace of its own (EnterPrivateMountNamespace() first)";
  std::ifstream in("/proc/thread-self/mountinfo");
  if (!in) return Failed("open /proc/thread-self/mountinfo", errno);
  for (std::string line; std::getline(in, line);)
    if (line.find(" shared:") != std::string::npos)
      return fmt::format("a mount propagates to its peers (make \"/\" MS_REC | MS_PRIVATE): {}",
                         line);
  return "";
}

// FS_IOC_GETFLAGS / FS_IOC_SETFLAGS on a file opened without following
// (and without blocking, for special files): `set` bits on, `clear` off.
int ChangeInodeFlags(const std::string& path, int set, int clear) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  int flags = 0;
  int r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
  if (r == 0) {
    flags = (flags | set) & ~clear;
    r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
  }
  int err = r == 0 ? 0 : errno;
  close(fd);
  return err;
}

std::string Hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

char TypeChar(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return 'd';
    case S_IFLNK: return 'l';
    case S_IFIFO: return 'p';
    case S_IFSOCK: return 's';
    case S_IFCHR: return 'c';
    case S_IFBLK: return 'b';
  }
  return '-';
}

// One object's line; `rel` is "/" or "/a/b".
Result<std::string, std::string> ListOne(const std::string& path, const std::string& rel,
                                         struct statx* stx) {
  if (statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
            STATX_BASIC_STATS, stx) != 0)
    return Unexpected(Failed("statx " + path, errno));
  const mode_t mode = stx->stx_mode;
  std::string line = fmt::format(
      "{} {}{:04o} uid={} gid={} size={} nlink={} mtime={}.{:09} ctime={}.{:09}", rel,
      TypeChar(mode), mode & 07777, stx->stx_uid, stx->stx_gid, stx->stx_size, stx->stx_nlink,
      stx->stx_mtime.tv_sec, stx->stx_mtime.tv_nsec, stx->stx_ctime.tv_sec,
      stx->stx_ctime.tv_nsec);
  const auto attr = [&](uint64_t bit, std::string_view name) {
    if (!(stx->stx_attributes_mask & bit)) return;
    line += fmt::format(" {}={}", name, (stx->stx_attributes & bit) ? 1 : 0);
  };
  attr(STATX_ATTR_IMMUTABLE, "immutable");
  attr(STATX_ATTR_APPEND, "append");
  if (S_ISCHR(mode) || S_ISBLK(mode))
    line += fmt::format(" rdev={}:{}", stx->stx_rdev_major, stx->stx_rdev_minor);
  if (S_ISLNK(mode)) {
    std::string target(4096, '\0');
    ssize_t n = readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return Unexpected(Failed("readlink " + path, errno));
    target.resize(static_cast<size_t>(n));
    line += " -> " + target;
  }
  ssize_t size = llistxattr(path.c_str(), nullptr, 0);
  if (size < 0) return Unexpected(Failed("llistxattr " + path, errno));
  std::string names(static_cast<size_t>(size), '\0');
  size = llistxattr(path.c_str(), names.data(), names.size());
  if (size < 0) return Unexpected(Failed("llistxattr " + path, errno));
  names.resize(static_cast<size_t>(size));
  std::vector<std::string> sorted;
  for (size_t at = 0; at < names.size();) {
    size_t end = names.find('\0', at);
    if (end == std::string::npos) end = names.size();
    if (end > at) sorted.push_back(names.substr(at, end - at));
    at = end + 1;
  }
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& name : sorted) {
    ssize_t len = lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (len < 0) return Unexpected(Failed("lgetxattr " + path + " " + name, errno));
    std::string value(static_cast<size_t>(len), '\0');
    len = lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
    if (len < 0) return Unexpected(Failed("lgetxattr " + path + " " + name, errno));
    value.resize(static_cast<size_t>(len));
    line += fmt::format(" xattr:{}={}", name, Hex(value));
  }
  return line;
}

Result<void, std::string> ListTree(const std::string& path, const std::string& rel,
                                   std::vector<std::pair<std::string, std::string>>* out) {
  struct statx stx;
  auto line = ListOne(path, rel, &stx);
  if (!line) return Unexpected(std::move(line).error());
  out->emplace_back(rel, std::move(*line));
  if (!S_ISDIR(stx.stx_mode)) return {};
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Unexpected(Failed("open directory " + path, errno));
  auto names = internal::ReadDirNames(fd);
  close(fd);
  if (!names) return Unexpected(Failed("getdents64 " + path, names.error()));
  for (const std::string& name : *names) {
    std::string child_rel = rel == "/" ? "/" + name : rel + "/" + name;
    if (auto r = ListTree(path + "/" + name, child_rel, out); !r) return r;
  }
  return {};
}

}  // namespace

std::string EnterPrivateMountNamespace() {
  if (unshare(CLONE_NEWNS) != 0) return Failed("unshare(CLONE_NEWNS)", errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Failed("mount(\"/\", MS_REC | MS_PRIVATE)", errno);
  // The namespace's own /tmp: a directory made there (a scratch tree's
  // mount point) is not on the host's disk, and goes with the namespace
  // however the process ends (a SIGKILL leaves nothing behind).
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
    return Failed("mount tmpfs on /tmp", errno);
  entered_namespace = ThreadMountNamespace();
  return "";
}

Result<std::unique_ptr<ScratchHost>, std::string> ScratchHost::Build() {
  if (std::string why = PrivateMountsReason(); !why.empty()) return Unexpected(why);
  std::unique_ptr<ScratchHost> host(new ScratchHost);
  const mode_t old_umask = umask(0);
  std::string err = host->Make();
  umask(old_umask);
  if (!err.empty()) {
    if (std::string c = host->Cleanup(); !c.empty()) err += "; cleanup: " + c;
    return Unexpected(err);
  }
  return host;
}

ScratchHost::~ScratchHost() { Cleanup(); }

std::string ScratchHost::Path(std::string_view kind) const {
  for (const ScratchPath& p : paths_)
    if (p.kind == kind) return p.path;
  return "";
}

namespace {

// Each helper creates one object at root_ + "/" + rel and, for a `kind`,
// lists it; the first failure ends the build.
class ScratchBuilder {
 public:
  ScratchBuilder(const std::string& root, std::vector<ScratchPath>* paths)
      : root_(root), paths_(paths) {}

  std::string Abs(std::string_view rel) const { return fmt::format("{}/{}", root_, rel); }

  bool Dir(std::string_view kind, std::string_view rel, mode_t mode, uid_t uid = 0,
           gid_t gid = 0) {
    const std::string p = Abs(rel);
    if (mkdir(p.c_str(), 0700) != 0) return Fail("mkdir", rel, errno);
    return Own(p, rel, mode, uid, gid) && Note(kind, p);
  }

  bool File(std::string_view kind, std::string_view rel, mode_t mode, uid_t uid = 0,
            gid_t gid = 0, std::string_view content = "") {
    const std::string p = Abs(rel);
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Fail("create", rel, errno);
    bool ok = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    int err = errno;
    close(fd);
    if (!ok) return Fail("write", rel, err);
    return Own(p, rel, mode, uid, gid) && Note(kind, p);
  }

  // A file created with the mode the creating call asks for, the way a
  // default ACL's inheritance is seen.
  bool Created(std::string_view kind, std::string_view rel, mode_t mode) {
    const std::string p = Abs(rel);
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) return Fail("create", rel, errno);
    close(fd);
    return Note(kind, p);
  }

  bool Symlink(std::string_view kind, std::string_view rel, const std::string& target,
               uid_t uid = 0, gid_t gid = 0) {
    const std::string p = Abs(rel);
    if (symlink(target.c_str(), p.c_str()) != 0) return Fail("symlink", rel, errno);
    if (lchown(p.c_str(), uid, gid) != 0) return Fail("lchown", rel, errno);
    return Note(kind, p);
  }

  bool Node(std::string_view kind, std::string_view rel, mode_t type, mode_t mode,
            dev_t dev = 0, gid_t gid = 0) {
    const std::string p = Abs(rel);
    if (mknod(p.c_str(), type | mode, dev) != 0) return Fail("mknod", rel, errno);
    return Own(p, rel, mode, 0, gid) && Note(kind, p);
  }

  bool Socket(std::string_view kind, std::string_view rel) {
    const std::string p = Abs(rel);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (p.size() >= sizeof(addr.sun_path)) return Fail("socket path too long", rel, ENAMETOOLONG);
    std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
    int so = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (so < 0) return Fail("socket", rel, errno);
    int r = bind(so, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    int err = errno;
    close(so);
    if (r != 0) return Fail("bind", rel, err);
    return Own(p, rel, 0755, 0, 0) && Note(kind, p);
  }

  bool Acl(std::string_view rel, acl_type_t type, const char* text) {
    acl_t acl = acl_from_text(text);
    if (acl == nullptr) return Fail(fmt::format("acl_from_text \"{}\"", text), rel, errno);
    int r = acl_set_file(Abs(rel).c_str(), type, acl);
    int err = errno;
    acl_free(acl);
    if (r != 0) return Fail(fmt::format("acl_set_file \"{}\"", text), rel, err);
    return true;
  }

  bool Xattr(std::string_view rel, const char* name, std::string_view value) {
    if (lsetxattr(Abs(rel).c_str(), name, value.data(), value.size(), 0) != 0)
      return Fail(fmt::format("lsetxattr {}", name), rel, errno);
    return true;
  }

  bool Hardlink(std::string_view kind, std::string_view from, std::string_view rel) {
    const std::string p = Abs(rel);
    if (link(Abs(from).c_str(), p.c_str()) != 0) return Fail("link", rel, errno);
    return Note(kind, p);
  }

  const std::string& error() const { return error_; }

 private:
  bool Own(const std::string& p, std::string_view rel, mode_t mode, uid_t uid, gid_t gid) {
    // chown before chmod: chown clears setuid and setgid.
    if (lchown(p.c_str(), uid, gid) != 0) return Fail("chown", rel, errno);
    if (chmod(p.c_str(), mode) != 0) return Fail("chmod", rel, errno);
    return true;
  }
  bool Note(std::string_view kind, const std::string& p) {
    if (!kind.empty()) paths_->push_back({std::string(kind), p});
    return true;
  }
  bool Fail(std::string_view what, std::string_view rel, int err) {
    error_ = fmt::format("{} {}: {}", what, rel, ErrnoName(err));
    return false;
  }

  const std::string& root_;
  std::vector<ScratchPath>* paths_;
  std::string error_;
};

}  // namespace

std::string ScratchHost::Make() {
  char dir[] = "/tmp/pathwarden-scratch.XXXXXX";
  if (mkdtemp(dir) == nullptr) return Failed("mkdtemp /tmp/pathwarden-scratch.XXXXXX", errno);
  root_ = dir;
  dir_made_ = true;
  // nodev: the device nodes below are objects to look at, never drivers.
  if (mount("tmpfs", dir, "tmpfs", MS_NODEV, "mode=0755,uid=0,gid=0,size=16m") != 0)
    return Failed("mount tmpfs on " + root_, errno);
  mounts_.push_back(root_);
  paths_.push_back({"root", root_});
  ScratchBuilder b(root_, &paths_);
  const auto fail = [&] { return b.error(); };
  const std::string chain_target = "../target";
  // Owners and modes.
  if (!b.Dir("", "home", 0755) || !b.Dir("dir_0700_1000", "home/alice", 0700, 1000, 1000) ||
      !b.File("file_0600_1000", "home/alice/secret", 0600, 1000, 1000, "alice\n") ||
      !b.Dir("dir_0750_1001", "home/bob", 0750, 1001, 1001) ||
      !b.File("file_0640_1001", "home/bob/notes", 0640, 1001, 1001, "bob\n") ||
      !b.Dir("dir_0700_root", "private", 0700) ||
      !b.File("file_below_0700_root", "private/file", 0644, 0, 0, "root\n") ||
      !b.Dir("setgid_dir", "shared", 02775, 0, 1000) ||
      !b.File("file_in_setgid_dir", "shared/by_alice", 0664, 1000, 1000) ||
      !b.Dir("sticky_dir", "tmp", 01777) ||
      !b.File("file_sticky_1000", "tmp/alice_file", 0644, 1000, 1000) ||
      !b.File("file_sticky_1001", "tmp/bob_file", 0644, 1001, 1001))
    return fail();
  // POSIX ACLs: an access ACL; an access and a default one on a directory,
  // and a file that inherits the default.
  if (!b.Dir("", "acl", 0755) || !b.File("file_access_acl", "acl/file", 0640) ||
      !b.Acl("acl/file", ACL_TYPE_ACCESS, "u::rw-,u:1001:r--,g::---,m::r--,o::---") ||
      !b.Dir("dir_default_acl", "acl/dir", 0750) ||
      !b.Acl("acl/dir", ACL_TYPE_ACCESS, "u::rwx,u:1000:r-x,g::r-x,m::r-x,o::---") ||
      !b.Acl("acl/dir", ACL_TYPE_DEFAULT, "u::rwx,u:1000:rwx,g::r-x,m::rwx,o::---") ||
      !b.Created("file_inherited_acl", "acl/dir/inherited", 0640))
    return fail();
  // Inode flags (set last, below).
  if (!b.Dir("", "attr", 0755) || !b.File("file_immutable", "attr/immutable", 0644, 0, 0, "i\n") ||
      !b.File("file_append_only", "attr/append", 0666, 0, 0, "a\n"))
    return fail();
  // Symlinks.
  if (!b.Dir("", "links", 0755) || !b.File("symlink_target", "links/target", 0644, 0, 0, "t\n") ||
      !b.Symlink("symlink_relative", "links/rel", "target") ||
      !b.Symlink("symlink_relative_up", "links/rel_up", "../private/file") ||
      !b.Symlink("symlink_absolute", "links/abs", b.Abs("links/target")) ||
      !b.Symlink("symlink_dangling", "links/dangling", "missing") ||
      !b.Symlink("symlink_loop", "links/loop_a", "loop_b") ||
      !b.Symlink("symlink_loop_b", "links/loop_b", "loop_a") ||
      !b.Symlink("symlink_owned_1000", "links/alice_link", "target", 1000, 1000) ||
      !b.Dir("", "links/chain", 0755))
    return fail();
  for (int i = kChainLength; i >= 1; --i) {
    std::string target = i == kChainLength ? chain_target : fmt::format("l{:02}", i + 1);
    std::string_view kind = i == 1 ? "chain41" : i == 2 ? "chain40" : "";
    if (!b.Symlink(kind, fmt::format("links/chain/l{:02}", i), target)) return fail();
  }
  // Special files; the devices stay nodes (nodev).
  if (!b.Dir("", "special", 0755) || !b.Node("fifo", "special/fifo", S_IFIFO, 0666) ||
      !b.Socket("socket", "special/socket") ||
      !b.Node("chr_null", "special/null", S_IFCHR, 0666, makedev(1, 3)) ||
      !b.Node("chr_zero", "special/zero", S_IFCHR, 0666, makedev(1, 5)) ||
      !b.Node("blk_loop0", "special/loop0", S_IFBLK, 0660, makedev(7, 0), 6))
    return fail();
  // Executables on an exec and a noexec mount.
  const std::string_view script = "#!/bin/sh\nexit 0\n";
  if (!b.Dir("", "bin", 0755) || !b.File("file_exec", "bin/run.sh", 0755, 0, 0, script) ||
      !b.Dir("noexec_mount", "noexec", 0755))
    return fail();
  if (mount("tmpfs", b.Abs("noexec").c_str(), "tmpfs", MS_NOEXEC | MS_NOSUID | MS_NODEV,
            "mode=0755,uid=0,gid=0,size=1m") != 0)
    return Failed("mount tmpfs noexec", errno);
  mounts_.push_back(b.Abs("noexec"));
  if (!b.File("file_exec_noexec", "noexec/run.sh", 0755, 0, 0, script)) return fail();
  // A read-only bind of a subdirectory, xattrs, a hard link across
  // directories.
  if (!b.Dir("rw_dir", "data", 0755) || !b.File("file_xattr", "data/file", 0644, 0, 0, "d\n") ||
      !b.Xattr("data/file", "user.pathwarden", "probe") || !b.Dir("rw_subdir", "data/sub", 0755) ||
      !b.File("file_rw_subdir", "data/sub/deep", 0666, 0, 0, "deep\n") ||
      !b.Dir("ro_bind_mount", "ro", 0755) || !b.Dir("", "hard", 0755) ||
      !b.Dir("", "hard/a", 0755) || !b.Dir("", "hard/b", 0755) ||
      !b.File("hardlink_a", "hard/a/f", 0644, 1000, 1000, "h\n") ||
      !b.Hardlink("hardlink_b", "hard/a/f", "hard/b/f"))
    return fail();
  if (mount(b.Abs("data/sub").c_str(), b.Abs("ro").c_str(), nullptr, MS_BIND, nullptr) != 0)
    return Failed("bind data/sub on ro", errno);
  mounts_.push_back(b.Abs("ro"));
  if (mount(nullptr, b.Abs("ro").c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0)
    return Failed("remount ro read-only", errno);
  paths_.push_back({"file_ro_bind", b.Abs("ro/deep")});
  // +i and +a last: nothing could be added to them after.
  for (auto [kind, flag] : {std::pair{"file_immutable", FS_IMMUTABLE_FL},
                            std::pair{"file_append_only", FS_APPEND_FL}}) {
    const std::string p = Path(kind);
    flagged_.push_back(p);
    if (int err = ChangeInodeFlags(p, flag, 0); err != 0)
      return Failed("FS_IOC_SETFLAGS " + p, err);
  }
  return "";
}

std::string ScratchHost::Cleanup() {
  std::vector<std::string> errors;
  for (const std::string& p : flagged_)
    if (int err = ChangeInodeFlags(p, 0, FS_IMMUTABLE_FL | FS_APPEND_FL); err != 0)
      errors.push_back(Failed("clear +i/+a on " + p, err));
  flagged_.clear();
  // Innermost first; a mount still in use is detached instead.
  for (auto m = mounts_.rbegin(); m != mounts_.rend(); ++m) {
    if (umount2(m->c_str(), 0) == 0) continue;
    int err = errno;
    if (umount2(m->c_str(), MNT_DETACH) != 0) errors.push_back(Failed("umount " + *m, err));
  }
  mounts_.clear();
  if (dir_made_) {
    if (rmdir(root_.c_str()) != 0) errors.push_back(Failed("rmdir " + root_, errno));
    dir_made_ = false;
  }
  std::string out;
  for (const std::string& e : errors) out += (out.empty() ? "" : "; ") + e;
  return out;
}

Result<std::string, std::string> HostListing(const std::string& root) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (auto r = ListTree(root, "/", &lines); !r) return Unexpected(std::move(r).error());
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& [rel, line] : lines) out += line + "\n";
  return out;
}

}  // namespace pathwarden::kernel_internal
