// pathwarden-fs: attributes (GETATTR, SETATTR by path and by open file)
// and extended attributes, decided for the caller, then made what the
// caller's call makes (setattr_prepare(), setattr_should_drop_sgid(),
// posix_acl_update_mode(): src/perm/setid.h).

#include "fileserver/server_impl.h"

#include <array>
#include <optional>

#include <fmt/format.h>

#include "src/perm/setid.h"

namespace pathwarden::fileserver {

namespace {

// The times a SETATTR sets, as utimensat() takes them: each given one
// now or as given, the other UTIME_OMIT.
void SetattrTimes(int to_set, const struct stat& attr, struct timespec ts[2]) {
  ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
  if (to_set & FUSE_SET_ATTR_ATIME) {
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) ts[0].tv_nsec = UTIME_NOW;
    else ts[0] = attr.st_atim;
  }
  if (to_set & FUSE_SET_ATTR_MTIME) {
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) ts[1].tv_nsec = UTIME_NOW;
    else ts[1] = attr.st_mtim;
  }
}

// The times a SETATTR sets, as the model's utimensat() and futimens()
// take them: nullopt when both are now, which the kernel takes as a NULL
// `times` (Linux: fs/utimes.c vfs_utimes()): write permission suffices.
std::optional<std::array<TimeSpec, 2>> RequestedTimes(int to_set) {
  auto half = [&](int set, int now) {
    if (!(to_set & set)) return TimeSpec::kOmit;
    return (to_set & now) ? TimeSpec::kNow : TimeSpec::kSet;
  };
  const std::array<TimeSpec, 2> times{half(FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW),
                                      half(FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW)};
  if (times[0] == TimeSpec::kNow && times[1] == TimeSpec::kNow) return std::nullopt;
  return times;
}

}  // namespace

void Server::Getattr(fuse_req_t req, fuse_ino_t ino) {
  // stat() checks nothing but the walk, which the lookups made.
  auto w = WhereOf(ino);
  struct stat st;
  if (!w) {
    // A name removed while a file is open on it: fstat() through the
    // file (the kernel asks for it to check permissions, too).
    if (w.error() == ESTALE && nodes_.Get(ino) != nullptr)
      for (const auto& [fh, f] : files_)
        if (f.node == ino) {
          if (fstat(f.fd, &st) != 0) return (void)fuse_reply_err(req, errno);
          return (void)fuse_reply_attr(req, &st, 0);
        }
    return (void)fuse_reply_err(req, w.error());
  }
  if (int err = Fstatat(w->rel, &st)) return (void)fuse_reply_err(req, err);
  fuse_reply_attr(req, &st, 0);
}

void Server::Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                     fuse_file_info* fi) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) {
    if (w.error() == ESTALE && nodes_.Get(ino) != nullptr)
      return SetattrRemoved(req, ino, *c, attr, to_set, fi);
    return (void)fuse_reply_err(req, w.error());
  }
  const std::string cwd = CwdOf(*w);
  const std::string name = NameFor(*w);
  struct stat st;
  if (int err = Fstatat(w->rel, &st)) return (void)fuse_reply_err(req, err);
  const bool lnk = S_ISLNK(st.st_mode);
  // Each change decided before any is made (notify_change() makes one
  // setattr of them all).
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const Lchown r{.path = name,
                   .uid = (to_set & FUSE_SET_ATTR_UID) ? int64_t{attr->st_uid} : -1,
                   .gid = (to_set & FUSE_SET_ATTR_GID) ? int64_t{attr->st_gid} : -1};
    if (int err = Decide(*c, cwd, r, "chown", w->rel)) return (void)fuse_reply_err(req, err);
  }
  // The VFS's own kill of setuid and setgid before a write or with a
  // truncate (file_remove_privs(), do_truncate()) reaches the server as a
  // mode change like chmod's, even with FUSE_CAP_HANDLE_KILLPRIV on Linux
  // 6.18: it is told from chmod by being exactly what the caller's write
  // or truncate drops, with the size changed or the file open for writing
  // (docs/fileserver.md).
  const std::optional<uint32_t> kill = KillPrivMode(c->cred, st);
  const bool killpriv = (to_set & FUSE_SET_ATTR_MODE) && kill &&
                        (attr->st_mode & 07777) == *kill &&
                        !(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
                        ((to_set & FUSE_SET_ATTR_SIZE) || OpenForWriting(st.st_ino));
  if ((to_set & FUSE_SET_ATTR_MODE) && !killpriv) {
    if (int err = Decide(*c, cwd, Chmod{.path = name, .mode = attr->st_mode & 07777}, "chmod",
                         w->rel))
      return (void)fuse_reply_err(req, err);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int err = 0;
    if (fi != nullptr) {
      auto f = files_.find(fi->fh);
      if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
      if (decide_) {
        auto fd = ModelFdOf(*c, f->second, w->rel);
        if (!fd) return (void)fuse_reply_err(req, fd.error());
        err = Decide(*c, cwd, Ftruncate{.fd = *fd}, "ftruncate", w->rel);
      }
    } else {
      err = Decide(*c, cwd, Truncate{.path = name}, "truncate", w->rel);
    }
    if (err) return (void)fuse_reply_err(req, err);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    const std::optional<std::array<TimeSpec, 2>> times = RequestedTimes(to_set);
    const Utimensat r{.path = name, .times = times, .flags = AT_SYMLINK_NOFOLLOW};
    if (int err = Decide(*c, cwd, r, "utimensat", w->rel)) return (void)fuse_reply_err(req, err);
  }
  // Performed as root, then made what the caller's call makes.
  const char* rel = w->rel.c_str();
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : uid_t(-1);
    const gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : gid_t(-1);
    if (fchownat(bfd_, rel, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
      return (void)fuse_reply_err(req, errno);
    // setattr_should_drop_sgid() for the caller, on the old group: root
    // keeps a setgid without group exec that the caller loses.
    if (!lnk && perm::ChownKillsSgid(c->cred, st.st_mode, {st.st_uid, st.st_gid})) {
      struct stat now;
      if (Fstatat(w->rel, &now) == 0 && (now.st_mode & S_ISGID))
        (void)fchmodat(bfd_, rel, now.st_mode & 07777 & ~S_ISGID, 0);
    }
  }
  if (to_set & FUSE_SET_ATTR_MODE) {
    struct stat now;
    if (int err = Fstatat(w->rel, &now)) return (void)fuse_reply_err(req, err);
    uint32_t mode = attr->st_mode & 07777;
    // setattr_prepare(): a caller outside the group loses setgid.
    if (!killpriv) mode = perm::ModeSetBy(c->cred, mode, now.st_gid, {st.st_uid, st.st_gid});
    if (fchmodat(bfd_, rel, mode, 0) != 0) return (void)fuse_reply_err(req, errno);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int r;
    if (fi != nullptr) {
      r = ftruncate(files_[fi->fh].fd, attr->st_size);
    } else {
      const int fd = openat(bfd_, rel, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      r = fd < 0 ? -1 : ftruncate(fd, attr->st_size);
      const int saved = errno;
      if (fd >= 0) close(fd);
      errno = saved;
    }
    if (r != 0) return (void)fuse_reply_err(req, errno);
    KillPriv(c->cred, w->rel, -1);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    SetattrTimes(to_set, *attr, ts);
    if (utimensat(bfd_, rel, ts, AT_SYMLINK_NOFOLLOW) != 0)
      return (void)fuse_reply_err(req, errno);
  }
  Changed(w->rel);
  struct stat out;
  if (int err = Fstatat(w->rel, &out)) return (void)fuse_reply_err(req, err);
  fuse_reply_attr(req, &out, 0);
}

void Server::SetattrRemoved(fuse_req_t req, fuse_ino_t ino, const Caller& c, struct stat* attr,
                            int to_set, fuse_file_info* fi) {
  // The open file the call goes through: the one FUSE names (ftruncate()
  // sets FATTR_FH), else one open on the node, the caller's own first
  // (fchmod(), fchown() and futimens() reach the server without the file:
  // Linux: fs/fuse/dir.c fuse_do_setattr() sets FATTR_FH only with
  // ATTR_FILE). None: the server cannot tell what was asked: ESTALE.
  const OpenFile* f = nullptr;
  if (fi != nullptr) {
    auto it = files_.find(fi->fh);
    if (it == files_.end()) return (void)fuse_reply_err(req, EBADF);
    f = &it->second;
  } else {
    for (const auto& [fh, of] : files_) {
      if (of.node != ino) continue;
      if (f == nullptr || (of.opener == c.p && f->opener != c.p)) f = &of;
    }
  }
  if (f == nullptr || f->node != ino) return (void)fuse_reply_err(req, ESTALE);
  const std::string what = fmt::format("node {} (removed)", ino);
  struct stat st;
  if (fstat(f->fd, &st) != 0) return (void)fuse_reply_err(req, errno);
  // The caller's fd of the file: the opener's own, or the opener's passed
  // to the caller (the model holds no name to adopt it by) and closed
  // after. Without one nothing is decided: refused.
  Fd fd{};
  bool sent = false;
  if (decide_) {
    if (f->model_fd < 0) {
      Log(fmt::format("refused: setattr {}: the model has no fd of it", what));
      return (void)fuse_reply_err(req, EACCES);
    }
    if (c.p == f->opener) {
      fd = Fd{f->model_fd};
    } else {
      const Decision d =
          model_->Apply(f->opener, SendFd{.fd = Fd{f->model_fd}, .target = c.p},
                        Model::Detail::kVerdictOnly);
      if (!d.allowed()) {
        Log(fmt::format("refused: setattr {}: the model could not pass the fd", what));
        return (void)fuse_reply_err(req, EACCES);
      }
      fd = d.fd();
      sent = true;
    }
  }
  struct Closer {
    Model* m;
    Process p;
    Fd fd;
    bool on;
    ~Closer() {
      if (on) (void)m->CloseFd(p, fd);
    }
  } closer{sent ? &*model_ : nullptr, c.p, fd, sent};
  // The requests, each decided before any change is made.
  std::vector<Request> asked;
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
    asked.push_back(Fchown{.fd = fd,
                           .uid = (to_set & FUSE_SET_ATTR_UID) ? int64_t{attr->st_uid} : -1,
                           .gid = (to_set & FUSE_SET_ATTR_GID) ? int64_t{attr->st_gid} : -1});
  // The VFS's setuid kill before a write through the file, told as in
  // Setattr().
  const std::optional<uint32_t> kill = KillPrivMode(c.cred, st);
  const bool killpriv = (to_set & FUSE_SET_ATTR_MODE) && kill &&
                        (attr->st_mode & 07777) == *kill &&
                        !(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
                        ((to_set & FUSE_SET_ATTR_SIZE) || OpenForWriting(st.st_ino));
  if ((to_set & FUSE_SET_ATTR_MODE) && !killpriv)
    asked.push_back(Fchmod{.fd = fd, .mode = attr->st_mode & 07777});
  if (to_set & FUSE_SET_ATTR_SIZE) asked.push_back(Ftruncate{.fd = fd});
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    const std::optional<std::array<TimeSpec, 2>> times = RequestedTimes(to_set);
    asked.push_back(Futimens{.fd = fd, .times = times});
  }
  for (const Request& r : asked)
    if (int err = Decide(c, ".", r, "setattr", what)) return (void)fuse_reply_err(req, err);
  // Performed as root through the server's fd, then made what the
  // caller's call makes (as in Setattr()).
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : uid_t(-1);
    const gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : gid_t(-1);
    if (fchown(f->fd, uid, gid) != 0) return (void)fuse_reply_err(req, errno);
    if (perm::ChownKillsSgid(c.cred, st.st_mode, {st.st_uid, st.st_gid})) {
      struct stat now;
      if (fstat(f->fd, &now) == 0 && (now.st_mode & S_ISGID))
        (void)fchmod(f->fd, now.st_mode & 07777 & ~S_ISGID);
    }
  }
  if (to_set & FUSE_SET_ATTR_MODE) {
    struct stat now;
    if (fstat(f->fd, &now) != 0) return (void)fuse_reply_err(req, errno);
    uint32_t mode = attr->st_mode & 07777;
    if (!killpriv) mode = perm::ModeSetBy(c.cred, mode, now.st_gid, {st.st_uid, st.st_gid});
    if (fchmod(f->fd, mode) != 0) return (void)fuse_reply_err(req, errno);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    // ftruncate() on the server's fd, whatever it was opened for: the
    // caller's fd's mode was checked (by the VFS, and by Ftruncate).
    if (ftruncate(f->fd, attr->st_size) != 0) return (void)fuse_reply_err(req, errno);
    KillPriv(c.cred, "", f->fd);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    SetattrTimes(to_set, *attr, ts);
    if (futimens(f->fd, ts) != 0) return (void)fuse_reply_err(req, errno);
  }
  // The model's inode, which no name reaches to revalidate, made the same.
  if (decide_)
    for (const Request& r : asked)
      if (!model_->Apply(c.p, r, Model::Detail::kVerdictOnly).allowed())
        Log(fmt::format("setattr {}: the model did not follow", what));
  struct stat out;
  if (fstat(f->fd, &out) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_attr(req, &out, 0);
}

void Server::Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  auto t = TargetOf(req, ino);
  if (!t) return (void)fuse_reply_err(req, t.error());
  const pathwarden::Getxattr r{.path = NameFor(t->w), .name = name, .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(t->c, t->cwd, r, "getxattr", t->w.rel))
    return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, t->w.rel);
  std::vector<char> buf(size);
  const ssize_t n = lgetxattr(path.c_str(), name, size ? buf.data() : nullptr, size);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  if (size == 0) return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void Server::Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value,
                      size_t size, int flags) {
  auto t = TargetOf(req, ino);
  if (!t) return (void)fuse_reply_err(req, t.error());
  const pathwarden::Setxattr r{.path = NameFor(t->w),
                               .name = name,
                               .value = std::string(value, size),
                               .xattr_flags = static_cast<uint32_t>(flags),
                               .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(t->c, t->cwd, r, "setxattr", t->w.rel))
    return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, t->w.rel);
  if (lsetxattr(path.c_str(), name, value, size, flags) != 0)
    return (void)fuse_reply_err(req, errno);
  // posix_acl_update_mode(): a caller outside the group loses setgid,
  // which root setting the ACL kept.
  struct stat st;
  if (std::strcmp(name, "system.posix_acl_access") == 0 && Fstatat(t->w.rel, &st) == 0) {
    const uint32_t mode = perm::ModeSetBy(t->c.cred, st.st_mode & 07777, st.st_gid, {st.st_uid, st.st_gid});
    if (mode != (st.st_mode & 07777)) (void)fchmodat(bfd_, t->w.rel.c_str(), mode, 0);
  }
  Changed(t->w.rel);
  fuse_reply_err(req, 0);
}

void Server::Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  auto t = TargetOf(req, ino);
  if (!t) return (void)fuse_reply_err(req, t.error());
  const pathwarden::Listxattr r{.path = NameFor(t->w), .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(t->c, t->cwd, r, "listxattr", t->w.rel))
    return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, t->w.rel);
  const ssize_t need = llistxattr(path.c_str(), nullptr, 0);
  if (need < 0) return (void)fuse_reply_err(req, errno);
  std::vector<char> all(static_cast<size_t>(need) + 1);
  const ssize_t n = llistxattr(path.c_str(), all.data(), all.size());
  if (n < 0) return (void)fuse_reply_err(req, errno);
  // simple_xattr_list(): trusted.* only for CAP_SYS_ADMIN, which root's
  // list on the backing directory shows.
  std::string out;
  for (size_t i = 0; i < static_cast<size_t>(n);) {
    const std::string one(all.data() + i);
    i += one.size() + 1;
    if (one.starts_with("trusted.") && !t->c.cred.Capable(kCapSysAdmin)) continue;
    out += one;
    out += '\0';
  }
  if (size == 0) return (void)fuse_reply_xattr(req, out.size());
  if (out.size() > size) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, out.data(), out.size());
}

void Server::Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  auto t = TargetOf(req, ino);
  if (!t) return (void)fuse_reply_err(req, t.error());
  const pathwarden::Removexattr r{
      .path = NameFor(t->w), .name = name, .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(t->c, t->cwd, r, "removexattr", t->w.rel))
    return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, t->w.rel);
  if (lremovexattr(path.c_str(), name) != 0) return (void)fuse_reply_err(req, errno);
  Changed(t->w.rel);
  fuse_reply_err(req, 0);
}

}  // namespace pathwarden::fileserver
