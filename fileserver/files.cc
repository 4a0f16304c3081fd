// pathwarden-fs: open files and directories (OPEN, CREATE, READ, WRITE,
// RELEASE, READDIR, STATFS, ACCESS, FALLOCATE, FSYNC), decided for the
// caller at open, their rights kept with the open file.

#include "fileserver/server_impl.h"

#include <fmt/format.h>

namespace pathwarden::fileserver {

void Server::Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, bool dir) {
  auto c = (fi->flags & O_TRUNC) ? CallerOf(req) : Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = CwdOf(*w);
  const uint64_t flags = static_cast<uint32_t>(fi->flags) & ~(kFmodeExec | O_LARGEFILE);
  int err;
  if (fi->flags & kFmodeExec) {
    err = Decide(*c, cwd, ExecCheck{.path = NameFor(*w)}, "exec", w->rel);
  } else {
    err = Decide(*c, cwd, pathwarden::Open{.path = NameFor(*w), .flags = flags}, "open", w->rel);
  }
  if (err) return (void)fuse_reply_err(req, err);
  const int fd = openat(bfd_, w->rel.c_str(),
                        (dir ? O_RDONLY | O_DIRECTORY : (flags & ~(O_NOFOLLOW | O_NOCTTY))) |
                            O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return (void)fuse_reply_err(req, errno);
  const uint64_t fh = next_fh_++;
  if (dir) {
    dirs_[fh] = OpenDir{fd, {}, false};
  } else {
    struct stat fst;
    OpenFile f{fd, c->p, -1, flags, ino, fstat(fd, &fst) == 0 ? fst.st_ino : 0};
    if (decide_) {
      auto n = ModelNode(w->rel);
      const int num = next_model_fd_++;
      if (n && model_->Adopt(c->p, num, *n, flags)) f.model_fd = num;
    }
    files_[fh] = f;
    if (flags & O_TRUNC) KillPriv(c->cred, w->rel, fd);
  }
  fi->fh = fh;
  if (fuse_reply_open(req, fi) == -ENOENT) {
    // The caller was interrupted: nobody will release it.
    if (dir) {
      close(fd);
      dirs_.erase(fh);
    } else {
      Release(nullptr, fi);
    }
  }
}

void Server::Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                    fuse_file_info* fi) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const uint64_t flags = static_cast<uint32_t>(fi->flags) & ~(kFmodeExec | O_LARGEFILE);
  if (int err = Decide(*c, pw->rel,
                       pathwarden::Open{.path = name, .flags = flags | O_CREAT, .mode = mode & 07777},
                       "create", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  const int fd = UnderUmask(*c, [&] {
    return openat(bfd_, rel.c_str(),
                  (flags & ~(O_NOFOLLOW | O_NOCTTY | O_TRUNC)) | O_CREAT | O_EXCL | O_CLOEXEC |
                      O_NOFOLLOW,
                  CreateMode(c->cred, mode & 07777, pst));
  });
  if (fd < 0) return (void)fuse_reply_err(req, errno);
  if (int err = NewObject(*c, rel, pst, false)) Log(fmt::format("create {}: {}", rel, err));
  Changed(rel);
  fuse_entry_param e{};
  if (int err = Fstatat(rel, &e.attr)) {
    close(fd);
    return (void)fuse_reply_err(req, err);
  }
  e.ino = nodes_.Child(parent, name, e.attr.st_ino);
  const uint64_t fh = next_fh_++;
  OpenFile f{fd, c->p, -1, flags, e.ino, e.attr.st_ino};
  if (decide_) {
    auto n = ModelNode(rel);
    const int num = next_model_fd_++;
    if (n && model_->Adopt(c->p, num, *n, flags & ~O_TRUNC)) f.model_fd = num;
  }
  files_[fh] = f;
  fi->fh = fh;
  if (fuse_reply_create(req, &e, fi) == -ENOENT) Release(nullptr, fi);
}

void Server::Read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
  buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
  buf.buf[0].fd = f->second.fd;
  buf.buf[0].pos = off;
  fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void Server::Write(fuse_req_t req, const char* data, size_t size, off_t off, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  const ssize_t n = pwrite(f->second.fd, data, size, off);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  // With FUSE_CAP_HANDLE_KILLPRIV the server drops setuid and setgid on
  // write, as file_remove_privs() would for the writer.
  struct stat st;
  if (fstat(f->second.fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
    auto c = CallerOf(req);
    if (c) KillPriv(c->cred, nodes_.RelPath(f->second.node).value_or(""), f->second.fd);
  }
  fuse_reply_write(req, static_cast<size_t>(n));
}

void Server::Release(fuse_req_t req, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f != files_.end()) {
    close(f->second.fd);
    if (f->second.model_fd >= 0) (void)model_->CloseFd(f->second.opener, Fd{f->second.model_fd});
    files_.erase(f);
  }
  if (req != nullptr) fuse_reply_err(req, 0);
}

void Server::Readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  auto it = dirs_.find(fi->fh);
  if (it == dirs_.end()) return (void)fuse_reply_err(req, EBADF);
  OpenDir& d = it->second;
  if (!d.listed || off == 0) {
    d.entries.clear();
    const int fd = openat(d.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dp = fd < 0 ? nullptr : fdopendir(fd);
    if (dp == nullptr) {
      if (fd >= 0) close(fd);
      return (void)fuse_reply_err(req, errno);
    }
    while (dirent* de = readdir(dp)) {
      struct stat st{};
      st.st_ino = de->d_ino;
      st.st_mode = static_cast<mode_t>(DTTOIF(de->d_type));
      d.entries.emplace_back(de->d_name, st);
    }
    closedir(dp);
    d.listed = true;
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < d.entries.size(); ++i) {
    const size_t n = fuse_add_direntry(req, buf.data() + used, size - used,
                                       d.entries[i].first.c_str(), &d.entries[i].second,
                                       static_cast<off_t>(i + 1));
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Server::Releasedir(fuse_req_t req, fuse_file_info* fi) {
  auto it = dirs_.find(fi->fh);
  if (it != dirs_.end()) {
    close(it->second.fd);
    dirs_.erase(it);
  }
  fuse_reply_err(req, 0);
}

void Server::Statfs(fuse_req_t req) {
  struct statvfs s;
  if (fstatvfs(bfd_, &s) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_statfs(req, &s);
}

void Server::Access(fuse_req_t req, fuse_ino_t ino, int mask) {
  auto c = Asker(req, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = CwdOf(*w);
  // access() runs with the real ids (access_override_creds()): the
  // request says which ids it carries; the fs ids are faccessat2's
  // AT_EACCESS (and chdir's MAY_CHDIR, sent as X_OK).
  const fuse_ctx* ctx = fuse_req_ctx(req);
  // With the same real and fs ids the request does not say which (the
  // capabilities differ): it is taken as chdir()'s (docs/fileserver.md).
  const bool real = (c->cred.ruid == ctx->uid && c->cred.rgid == ctx->gid) &&
                    !(c->cred.fsuid == ctx->uid && c->cred.fsgid == ctx->gid);
  const pathwarden::Access r{.path = NameFor(*w),
                             .mode = static_cast<uint32_t>(mask),
                             .flags = uint64_t{AT_SYMLINK_NOFOLLOW} | (real ? 0 : AT_EACCESS)};
  fuse_reply_err(req, Decide(*c, cwd, r, "access", w->rel));
}

void Server::Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                       fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  if (decide_) {
    auto c = CallerOf(req);
    if (!c) return (void)fuse_reply_err(req, c.error());
    auto w = WhereOf(ino);
    if (!w) return (void)fuse_reply_err(req, w.error());
    auto fd = ModelFdOf(*c, f->second, w->rel);
    if (!fd) return (void)fuse_reply_err(req, fd.error());
    const pathwarden::Fallocate r{.fd = *fd,
                                  .mode = static_cast<uint32_t>(mode),
                                  .offset = static_cast<uint64_t>(off),
                                  .len = static_cast<uint64_t>(len)};
    if (int err = Decide(*c, CwdOf(*w), r, "fallocate",
                         w->rel))
      return (void)fuse_reply_err(req, err);
  }
  if (fallocate(f->second.fd, mode, off, len) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_err(req, 0);
}

void Server::Fsync(fuse_req_t req, int datasync, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, 0);
  fuse_reply_err(req, (datasync ? fdatasync(f->second.fd) : fsync(f->second.fd)) == 0 ? 0 : errno);
}


}  // namespace pathwarden::fileserver
