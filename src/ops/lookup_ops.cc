// The calls that only look up: stat(2)/lstat(2), faccessat2(2),
// readlink(2), chdir(2), fchdir(2), chroot(2).
// Linux: fs/stat.c vfs_statx(); fs/open.c do_faccessat(),
// access_override_creds(), do_chdir(), do_fchdir(), do_chroot();
// fs/stat.c do_readlinkat()

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"

namespace pathwarden::ops {

using vfs::InodeId;
using vfs::PathPos;

namespace {

// stat(2) and lstat(2): newfstatat(), the latter with AT_SYMLINK_NOFOLLOW.
int StatAt(OpCtx& ctx, bool nofollow) {
  const OpArgs& st = ctx.a;
  uint32_t flags = static_cast<uint32_t>(st.flags);
  if (nofollow) flags |= AT_SYMLINK_NOFOLLOW;
  const uint32_t lookup = LookupFlagsFor(flags, true);
  PathPos at;
  if (int err = UserPathAt(ctx, lookup, &at))
    return err;
  // The filesystem's getattr (Linux: fs/fuse/dir.c fuse_getattr()).
  if (int err = FuseGate(ctx, at, "stat")) return err;
  ctx.Ok(Stage::kWalk, [&] {
    return fmt::format("{} ({}) found; stat needs only search permission on the way",
                       ctx.PathOf(at), DescribeInode(ctx.w, ctx.w.inode_of(at.dentry)));
  });
  return 0;
}

}  // namespace

template <>
int Do<pathwarden::Stat>(OpCtx& ctx) {
  return StatAt(ctx, false);
}

template <>
int Do<pathwarden::Lstat>(OpCtx& ctx) {
  return StatAt(ctx, true);
}

template <>
int Do<pathwarden::Access>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t mode = st.access_mode;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  if (mode & ~7u) return EINVAL;
  if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return EINVAL;
  const uint32_t lookup = LookupFlagsFor(flags, true);
  // access_override_creds(): without AT_EACCESS, check as the real ids;
  // a non-root real uid loses every capability, root's are its permitted
  // set. The walk itself runs with these credentials.
  Cred cred = ctx.cred();
  if (!(flags & AT_EACCESS)) {
    cred.fsuid = cred.ruid;
    cred.fsgid = cred.rgid;
    cred.cap_effective = cred.IsRootOfItsNs(cred.ruid) ? cred.cap_permitted : 0;
  }
  OpCtx actx{ctx.t, ctx.w, ctx.p, ctx.a, ctx.ex, ctx.env, ctx.apply, &cred};
  actx.env.cred = &cred;
  PathPos at;
  if (int err = walk::FilenameLookup(actx.env, actx.StartFor(st.path), st.path, lookup, &at))
    return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  if ((mode & X_OK) && S_ISREG(i.mode) &&
      (ctx.w.mount(at.mnt).flags & vfs::kMntNoexec)) {
    actx.Fail(Stage::kMount, [&] { return fmt::format("{} is on a noexec mount", actx.PathOf(at)); });
    return EACCES;
  }
  if (int err = DacCheck(actx, at, mode | perm::kMayAccess)) return err;
  const bool special = S_ISCHR(i.mode) || S_ISBLK(i.mode) || S_ISFIFO(i.mode) || S_ISSOCK(i.mode);
  if ((mode & W_OK) && !special && (ctx.w.mount(at.mnt).flags & vfs::kMntReadonly)) {
    actx.Fail(Stage::kMount,
              [&] { return fmt::format("{} is on a read-only mount", actx.PathOf(at)); });
    return EROFS;
  }
  if (mode == 0)
    actx.Ok(Stage::kWalk, [&] { return fmt::format("{} exists (F_OK)", actx.PathOf(at)); });
  return 0;
}

template <>
int Do<pathwarden::Readlink>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  PathPos at;
  if (int err = UserPathAt(ctx, walk::kLookupEmpty, &at))
    return err;
  if (!S_ISLNK(ctx.w.inode_at(at.dentry).mode)) {
    FailAt(ctx, Stage::kVfs, "{} is not a symlink", at);
    // An empty name reaches the start itself: ENOENT, as before 6.x's
    // user_path_at_empty() removal.
    return st.path.empty() ? ENOENT : EINVAL;
  }
  ctx.Ok(Stage::kWalk, [&] {
    return fmt::format("{} is a symlink to \"{}\"", ctx.PathOf(at),
                       ctx.w.str(ctx.w.inode_at(at.dentry).data));
  });
  return 0;
}

namespace {

// The directory chdir(2) and chroot(2) move to: user_path_at() with
// LOOKUP_FOLLOW|LOOKUP_DIRECTORY, then path_permission(MAY_EXEC|MAY_CHDIR).
int LookupDirToEnter(OpCtx& ctx, PathPos* at) {
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, ctx.a.path,
                                     walk::kLookupFollow | walk::kLookupDirectory, at))
    return err;
  return DacCheck(ctx, *at, perm::kMayExec | perm::kMayChdir, "search permission on");
}

}  // namespace

template <>
int Do<pathwarden::Chdir>(OpCtx& ctx) {
  PathPos at;
  if (int err = LookupDirToEnter(ctx, &at)) return err;
  if (ctx.apply) ctx.t.SetCwd(ctx.p, at);
  return 0;
}

template <>
int Do<pathwarden::Fchdir>(OpCtx& ctx) {
  OpenFile* f = ctx.File(ctx.a.fd);
  if (!f) {
    ctx.Fail(Stage::kFd, [&] { return fmt::format("{} is not open", ctx.FdText(ctx.a.fd)); });
    return EBADF;
  }
  if (!S_ISDIR(ctx.w.inode(f->inode).mode)) {
    FailAt(ctx, Stage::kVfs, "{} is not a directory", f->path);
    return ENOTDIR;
  }
  if (int err = DacCheck(ctx, f->path, perm::kMayExec | perm::kMayChdir, "search permission on"))
    return err;
  if (ctx.apply) ctx.t.SetCwd(ctx.p, f->path);
  return 0;
}

template <>
int Do<pathwarden::Chroot>(OpCtx& ctx) {
  PathPos at;
  if (int err = LookupDirToEnter(ctx, &at)) return err;
  if (!ctx.cred().Capable(kCapSysChroot)) {
    ctx.Fail(Stage::kCapability, "chroot needs CAP_SYS_CHROOT");
    return EPERM;
  }
  if (ctx.apply) ctx.t.SetRoot(ctx.p, at);
  return 0;
}

}  // namespace pathwarden::ops
