// pathwarden-fs: names (LOOKUP, READLINK, MKNOD, MKDIR, UNLINK, RMDIR,
// SYMLINK, RENAME, LINK), decided for the caller, then made on the
// backing directory with the owner and mode Linux gives them.

#include "fileserver/server_impl.h"

#include <fmt/format.h>

namespace pathwarden::fileserver {

void Server::Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  // A directory every class may search, with no ACL (the kernel's fast
  // search check): no caller's credentials change the answer, and
  // Landlock does not check a walk, so the model is asked for anyone.
  auto c = decide_ && AnyoneMaySearch(pw->rel) ? Result<Caller, int>(Caller{anyone_, anyone_p_})
                                              : Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  // may_lookup(): search permission on the parent, then the name.
  if (int err = Decide(*c, pw->rel, Lstat{.path = name}, "lookup", Join(pw->rel, name)))
    return (void)fuse_reply_err(req, err);
  ReplyEntry(req, parent, name);
}

void Server::Readlink(fuse_req_t req, fuse_ino_t ino) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = CwdOf(*w);
  if (int err = Decide(*c, cwd, pathwarden::Readlink{.path = NameFor(*w)}, "readlink", w->rel))
    return (void)fuse_reply_err(req, err);
  char buf[PATH_MAX + 1];
  const ssize_t n = readlinkat(bfd_, w->rel.c_str(), buf, PATH_MAX);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

void Server::Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const pathwarden::Mknod r{.path = name,
                            .type = mode & S_IFMT,
                            .mode = mode & 07777,
                            .rdev_major = major(rdev),
                            .rdev_minor = minor(rdev)};
  if (int err = Decide(*c, pw->rel, r, "mknod", rel)) return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  if (UnderUmask(*c, [&] {
        return mknodat(bfd_, rel.c_str(), (mode & S_IFMT) | CreateMode(c->cred, mode, pst), rdev);
      }) != 0)
    return (void)fuse_reply_err(req, errno);
  ReplyMade(req, *c, parent, name, rel, pst, "mknod");
}

void Server::Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  if (int err = Decide(*c, pw->rel, pathwarden::Mkdir{.path = name, .mode = mode & 07777},
                       "mkdir", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  if (UnderUmask(*c, [&] { return mkdirat(bfd_, rel.c_str(), mode & 07777); }) != 0)
    return (void)fuse_reply_err(req, errno);
  ReplyMade(req, *c, parent, name, rel, pst, "mkdir");
}

void Server::ReplyMade(fuse_req_t req, const Caller& c, fuse_ino_t parent, const char* name,
                       const std::string& rel, const struct stat& parent_st, const char* what) {
  if (int err = NewObject(c, rel, parent_st, false)) Log(fmt::format("{} {}: {}", what, rel, err));
  Changed(rel);
  ReplyEntry(req, parent, name);
}

void Server::Unlink(fuse_req_t req, fuse_ino_t parent, const char* name, bool dir) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const int err = dir ? Decide(*c, pw->rel, Rmdir{.path = name}, "rmdir", rel)
                      : Decide(*c, pw->rel, pathwarden::Unlink{.path = name}, "unlink", rel);
  if (err) return (void)fuse_reply_err(req, err);
  if (unlinkat(bfd_, rel.c_str(), dir ? AT_REMOVEDIR : 0) != 0)
    return (void)fuse_reply_err(req, errno);
  nodes_.Removed(parent, name);
  Changed(rel);
  fuse_reply_err(req, 0);
}

void Server::Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  if (int err = Decide(*c, pw->rel, pathwarden::Symlink{.target = target, .path = name},
                       "symlink", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  if (symlinkat(target, bfd_, rel.c_str()) != 0) return (void)fuse_reply_err(req, errno);
  if (int err = NewObject(*c, rel, pst, true)) Log(fmt::format("symlink {}: {}", rel, err));
  Changed(rel);
  ReplyEntry(req, parent, name);
}

void Server::Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                    const char* newname, unsigned flags) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto from = WhereOf(parent);
  auto to = WhereOf(newparent);
  if (!from || !to) return (void)fuse_reply_err(req, from ? to.error() : from.error());
  const std::string rel = Join(from->rel, name), newrel = Join(to->rel, newname);
  if (decide_) {
    auto dir = ModelNode(from->rel);
    if (!dir || !model_->Adopt(c->p, kDirFd, *dir, O_PATH)) return (void)fuse_reply_err(req, EACCES);
    const pathwarden::Rename r{.dirfd = Fd{kDirFd}, .oldpath = name, .newpath = newname,
                               .flags = flags};
    if (int err = Decide(*c, to->rel, r, "rename", rel + " " + newrel))
      return (void)fuse_reply_err(req, err);
  }
  if (renameat2(bfd_, rel.c_str(), bfd_, newrel.c_str(), flags) != 0)
    return (void)fuse_reply_err(req, errno);
  if (flags & RENAME_WHITEOUT) {
    // The whiteout left at the old name is the caller's new object
    // (shmem_whiteout(): made with the caller's credentials), not root's.
    struct stat pst;
    if (int err = Fstatat(from->rel, &pst); err == 0) {
      if (int e = NewObject(*c, rel, pst, false)) return (void)fuse_reply_err(req, e);
    } else {
      return (void)fuse_reply_err(req, err);
    }
  }
  nodes_.Moved(parent, name, newparent, newname, flags & RENAME_EXCHANGE);
  Changed(rel);
  Changed(newrel);
  fuse_reply_err(req, 0);
}

void Server::Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  auto to = WhereOf(newparent);
  if (!w || !to) return (void)fuse_reply_err(req, w ? to.error() : w.error());
  if (w->parent == 0) return (void)fuse_reply_err(req, EPERM);  // the root: a directory
  const std::string newrel = Join(to->rel, newname);
  if (decide_) {
    // protected_hardlinks as it is now (Model::Revalidate() reads the
    // sysctls again): the VFS checks it too, with the current value.
    Changed(w->rel);
    auto dir = ModelNode(*nodes_.RelPath(w->parent));
    if (!dir || !model_->Adopt(c->p, kDirFd, *dir, O_PATH)) return (void)fuse_reply_err(req, EACCES);
    const pathwarden::Link r{.dirfd = Fd{kDirFd}, .oldpath = w->name, .newpath = newname};
    if (int err = Decide(*c, to->rel, r, "link", w->rel + " " + newrel))
      return (void)fuse_reply_err(req, err);
  }
  if (linkat(bfd_, w->rel.c_str(), bfd_, newrel.c_str(), 0) != 0)
    return (void)fuse_reply_err(req, errno);
  Changed(w->rel);
  Changed(newrel);
  ReplyEntry(req, newparent, newname);
}


}  // namespace pathwarden::fileserver
