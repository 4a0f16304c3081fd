// mkdir(2), mknod(2), symlink(2), link(2).
// Linux: fs/namei.c @6.18 do_mkdirat(), vfs_mkdir(), do_mknodat(),
// may_mknod(), vfs_mknod(), vfs_create(), do_symlinkat(), vfs_symlink(),
// do_linkat(), may_linkat(), safe_hardlink_source(), vfs_link()

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"

namespace pathwarden::ops {
namespace {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

// safe_hardlink_source(): a regular file, not setuid, not setgid and
// group-executable, that the caller may read and write. A permission
// check that failed closed leaves its errno in *failed_closed: it denies
// the link whatever protected_hardlinks says.
bool SafeHardlinkSource(const OpCtx& ctx, InodeId ino, int* failed_closed) {
  const uint32_t mode = ctx.w.inode(ino).mode;
  if (!S_ISREG(mode)) return false;
  if (mode & S_ISUID) return false;
  if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) return false;
  const perm::PermCheck pc =
      perm::InodePermission(ctx.w, ctx.cred(), ino, perm::kMayRead | perm::kMayWrite);
  if (pc.via == perm::PermCheck::Via::kInternal) [[unlikely]] *failed_closed = pc.err;
  return pc.err == 0;
}

void CreatedOk(OpCtx& ctx, PathPos parent, std::string_view name) {
  if (!ctx.explain() || ctx.ex->stage() == Stage::kLandlock) return;
  ctx.Ok(Stage::kDac, [&] {
    return fmt::format("{}; created {}{}{}", ctx.ex->text(), ctx.PathOf(parent),
                       ctx.PathOf(parent) == "/" ? "" : "/", name);
  });
}

}  // namespace

template <>
int Do<pathwarden::Mkdir>(OpCtx& ctx) {
  Created c;
  if (int err = FilenameCreate(ctx, ctx.a.path, ctx.StartFor(ctx.a.path), true, &c))
    return err;
  if (int err = security::PathMkdir(ctx, c.parent)) return err;
  if (int err = MayCreate(ctx, c.parent)) return err;
  CreateObject(ctx, c.parent, c.name, (ctx.a.mode & (0777 | S_ISVTX)) | S_IFDIR, 0);
  CreatedOk(ctx, c.parent, c.name);
  return 0;
}

template <>
int Do<pathwarden::Mknod>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t type = st.mknod_type ? st.mknod_type : S_IFREG;
  // may_mknod(), before the walk.
  if (type == S_IFDIR) {
    ctx.Fail(Stage::kArgs, "mknod cannot make directories");
    return EPERM;
  }
  const uint32_t mode = type | (st.mode & 07777);
  const uint32_t rdev = (type == S_IFCHR || type == S_IFBLK)
                            ? static_cast<uint32_t>(makedev(st.rdev_major, st.rdev_minor))
                            : 0;
  Created c;
  if (int err = FilenameCreate(ctx, st.path, ctx.StartFor(st.path), false, &c))
    return err;
  if (int err = security::PathMknod(ctx, c.parent, mode)) return err;
  if (int err = MayCreate(ctx, c.parent)) return err;
  const bool whiteout = type == S_IFCHR && rdev == 0;
  if ((type == S_IFCHR || type == S_IFBLK) && !whiteout &&
      !ctx.cred().CapableInitial(kCapMknod)) {
    ctx.Fail(Stage::kCapability, "creating a device node needs CAP_MKNOD");
    return EPERM;
  }
  // ovl_mknod(): a whiteout is overlay's own, never made through it.
  if (whiteout && (ctx.w.sb(ctx.w.inode_at(c.parent.dentry).sb).flags & vfs::kSbOverlay)) {
    ctx.Fail(Stage::kVfs, "overlayfs does not let a whiteout (a character device 0:0) be made "
                          "through it (ovl_mknod())");
    return EPERM;
  }
  CreateObject(ctx, c.parent, c.name, mode, rdev);
  CreatedOk(ctx, c.parent, c.name);
  return 0;
}

template <>
int Do<pathwarden::Symlink>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  // getname() of the target comes first.
  if (int err = walk::CheckName(ctx.env, st.target, false)) return err;
  Created c;
  if (int err = FilenameCreate(ctx, st.path, ctx.StartFor(st.path), false, &c))
    return err;
  if (int err = security::PathSymlink(ctx, c.parent)) return err;
  if (int err = MayCreate(ctx, c.parent)) return err;
  CreateObject(ctx, c.parent, c.name, S_IFLNK | 0777, 0, st.target);
  CreatedOk(ctx, c.parent, c.name);
  return 0;
}

template <>
int Do<pathwarden::Link>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) return EINVAL;
  const bool empty_ok = flags & AT_EMPTY_PATH;
  uint32_t how = (flags & AT_SYMLINK_FOLLOW) ? walk::kLookupFollow : 0;
  if (empty_ok) how |= walk::kLookupEmpty;
  walk::Start start = ctx.StartFor(st.path);
  // LOOKUP_LINKAT_EMPTY: with AT_EMPTY_PATH, a dirfd must have been opened
  // with the caller's very credentials, or the caller needs
  // CAP_DAC_READ_SEARCH.
  if (empty_ok && start.has_dirfd && !start.bad_fd &&
      (st.path.empty() || st.path[0] != '/')) {
    if (int err = walk::CheckName(ctx.env, st.path, true)) return err;
    const OpenFile* f = ctx.File(st.dirfd);
    if (f && (f->opener != ctx.p.index || f->cred_epoch != ctx.p.cred_epoch) &&
        !ctx.cred().CapableOver(kCapDacReadSearch)) {
      ctx.Fail(Stage::kCapability,
               "linkat(AT_EMPTY_PATH) through an fd opened with other "
               "credentials needs CAP_DAC_READ_SEARCH");
      return ENOENT;
    }
  }
  PathPos old;
  if (int err = walk::FilenameLookup(ctx.env, start, st.path, how, &old)) return err;
  Created c;
  // The new name is relative to the cwd (the step's dirfd is for `path`).
  if (int err = FilenameCreate(ctx, st.path2, walk::Start{}, false, &c)) return err;
  if (old.mnt != c.parent.mnt) {
    ctx.Fail(Stage::kMount, [&] {
      return fmt::format("{} and {} are on different mounts", ctx.PathOf(old),
                         ctx.PathOf(c.parent));
    });
    return EXDEV;
  }
  const InodeId ino = ctx.w.inode_of(old.dentry);
  if (int err = IdmapUnmapped(ctx, old, false, false, "it cannot be linked")) return err;
  // may_linkat(): protected_hardlinks.
  int failed_closed = 0;
  const bool unsafe =
      !perm::OwnerOrCapable(ctx.w, ctx.cred(), ino) && !SafeHardlinkSource(ctx, ino, &failed_closed);
  if (failed_closed) [[unlikely]] return failed_closed;
  if (unsafe) walk::tls_sysctl_decided = true;
  if (ctx.t.sysctl().protected_hardlinks && unsafe) {
    ctx.Fail(Stage::kProtected, [&] {
      return fmt::format(
          "protected_hardlinks: uid {} neither owns {} ({}) nor may "
          "read and write it, or it is not a plain regular file",
          ctx.cred().fsuid, ctx.PathOf(old), DescribeInode(ctx.w, ino));
    });
    return EPERM;
  }
  if (int err = security::PathLink(ctx, old, c.parent, vfs::kNone)) return err;
  // vfs_link()
  if (int err = MayCreate(ctx, c.parent)) return err;
  const vfs::Inode& i = ctx.w.inode(ino);
  if (i.flags & (vfs::kInodeAppend | vfs::kInodeImmutable)) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is {}", ctx.PathOf(old),
                         (i.flags & vfs::kInodeImmutable) ? "immutable" : "append-only");
    });
    return EPERM;
  }
  if (S_ISDIR(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is a directory: no hard links to directories", old);
    return EPERM;
  }
  if (i.nlink == 0) {
    FailAt(ctx, Stage::kVfs, "{} has no links left", old);
    return ENOENT;
  }
  // Linux: fs/btrfs/inode.c btrfs_link(), the filesystem's ->link.
  if (int err = CrossSubvol(ctx, old, c.parent,
                            "each is an inode namespace of its own, which a hard link does not "
                            "leave (btrfs_link())"))
    return err;
  if (ctx.apply) {
    ctx.w.SetNlink(ino, i.nlink + 1);
    ctx.w.Link(c.parent.dentry, c.name, ino);
  }
  CreatedOk(ctx, c.parent, c.name);
  return 0;
}

}  // namespace pathwarden::ops
