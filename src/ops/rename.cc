// renameat2(2).
// Linux: fs/namei.c @6.18 do_renameat2(), lock_rename()
// (lock_two_directories()), vfs_rename(); mm/shmem.c shmem_rename2(),
// shmem_whiteout(); fs/libfs.c simple_rename_exchange()

#include <fcntl.h>
#include <linux/fs.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"
#include "src/vfs/backend.h"

namespace pathwarden::ops {
namespace {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

// The child of `ancestor` on the way up from `d` (`d` itself when it is
// one), or kNone when `ancestor` is not above `d`.
DentryId ChildTowards(const vfs::World& w, DentryId d, DentryId ancestor) {
  const uint32_t limit = w.dentry_end() + 1;  // bounded: a racing reader
  for (uint32_t n = 0; n < limit; ++n) {
    const DentryId parent = w.dentry(d).parent;
    if (parent == ancestor) return d;
    if (parent == d) break;  // a filesystem's root
    d = parent;
  }
  return vfs::kNone;
}

// lock_rename(p1 = new parent, p2 = old parent): the "trap", the child of
// one parent that is an ancestor of (or is) the other parent, or kNone
// when the parents are equal or only share a common ancestor.
DentryId RenameTrap(const vfs::World& w, DentryId p1, DentryId p2) {
  if (p1 == p2) return vfs::kNone;
  const DentryId trap = ChildTowards(w, p1, p2);
  return trap != vfs::kNone ? trap : ChildTowards(w, p2, p1);
}

// lookup_one_qstr_excl() for rename: the source must exist; the target
// may not exist (unless RENAME_EXCHANGE) and must not with NOREPLACE.
int LookupRenameSide(const OpCtx& ctx, const walk::ParentResult& pr,
                     bool must_exist, bool must_not_exist, DentryId* out) {
  DentryId d;
  if (int err = LookupOneQstr(ctx, pr, &d)) return err;
  if (d == vfs::kNone) {
    if (must_exist) return FailMissing(ctx, pr);
  } else if (must_not_exist) {
    FailAt(ctx, Stage::kVfs, "{} exists and RENAME_NOREPLACE was given", {pr.parent.mnt, d});
    return EEXIST;
  }
  *out = d;
  return 0;
}

// ovl_can_move(): a directory with a lower layer under it moves only with
// redirect_dir=on (the host backend leaves kInodeOvlPinned off then).
int OverlayCanMove(const OpCtx& ctx, PathPos at) {
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  if (!S_ISDIR(i.mode)) return 0;
  if (i.flags & vfs::kInodeOvlPinnedUnknown)
    return vfs::Unknown(ctx.PathOf(at) +
                        " is an overlay directory whose layers could not be read: whether it "
                        "has a lower layer, which keeps it from moving without redirect_dir=on "
                        "(ovl_can_move()), is not known");
  if (i.flags & vfs::kInodeOvlPinned) {
    FailAt(ctx, Stage::kVfs,
           "{} is an overlay directory with a lower layer, which moves only with "
           "redirect_dir=on: overlayfs does not copy up directory trees (ovl_rename())",
           at);
    return EXDEV;
  }
  return 0;
}

// ovl_rename()'s own refusals, first in it: no RENAME_WHITEOUT, and
// directories that cannot move.
int OverlayRenameChecks(const OpCtx& ctx, PathPos old_dir, DentryId old_d, PathPos new_dir,
                        DentryId new_d, uint32_t flags) {
  const vfs::World& w = ctx.w;
  if (!(w.sb(w.inode_at(old_d).sb).flags & vfs::kSbOverlay)) return 0;
  if (flags & RENAME_WHITEOUT) {
    ctx.Fail(Stage::kVfs, "overlayfs takes no RENAME_WHITEOUT (ovl_rename())");
    return EINVAL;
  }
  if (int err = OverlayCanMove(ctx, {old_dir.mnt, old_d})) return err;
  if ((flags & RENAME_EXCHANGE) && new_d != vfs::kNone)
    return OverlayCanMove(ctx, {new_dir.mnt, new_d});
  return 0;
}

// btrfs_rename() and btrfs_rename_exchange()'s own refusals, first in
// them: a subvolume is an inode namespace of its own, which only a
// subvolume's root directory leaves (for an exchange, both must be
// roots), and a subvolume's root is never replaced.
// Linux: fs/btrfs/inode.c.
int BtrfsRenameChecks(const OpCtx& ctx, PathPos old_dir, DentryId old_d, PathPos new_dir,
                      DentryId new_d, uint32_t flags) {
  const vfs::World& w = ctx.w;
  if (!(w.sb(w.inode_at(old_d).sb).flags & vfs::kSbBtrfs)) [[likely]]
    return 0;
  // btrfs_rename() refuses the empty placeholder a snapshot leaves
  // (ENOTEMPTY), which the model holds opaque: unknown, as any inode it
  // does not hold.
  for (const DentryId d : {old_d, new_d})
    if (d != vfs::kNone && (w.inode_at(d).flags & vfs::kInodeOpaque))
      return vfs::UnknownAt(w.inode_of(d));
  const bool old_root = w.inode_at(old_d).flags & vfs::kInodeSubvolRoot;
  const bool new_root = new_d != vfs::kNone && (w.inode_at(new_d).flags & vfs::kInodeSubvolRoot);
  if (flags & RENAME_EXCHANGE) {
    if (!(old_root && new_root))
      return CrossSubvol(ctx, old_dir, new_dir,
                         "only two subvolumes' root directories are exchanged between them "
                         "(btrfs_rename_exchange())");
    return 0;
  }
  if (!old_root) {
    if (int err = CrossSubvol(ctx, old_dir, new_dir,
                              "only a subvolume's root directory moves between them "
                              "(btrfs_rename())"))
      return err;
  }
  if (new_root) {
    FailAt(ctx, Stage::kVfs,
           "{} is the root directory of a btrfs subvolume: a rename does not replace it "
           "(btrfs_rename())",
           {new_dir.mnt, new_d});
    return ENOTEMPTY;
  }
  return 0;
}

// vfs_rename(): the permission part.
int VfsRenameChecks(OpCtx& ctx, PathPos old_dir, DentryId old_d, PathPos new_dir,
                    DentryId new_d, uint32_t flags) {
  const vfs::World& w = ctx.w;
  const bool is_dir = S_ISDIR(w.inode_at(old_d).mode);
  const InodeId source = w.inode_of(old_d);
  const InodeId target = new_d != vfs::kNone ? w.inode_of(new_d) : vfs::kNone;
  if (source == target) {
    ctx.Ok(Stage::kVfs, "source and target are the same inode: nothing to do");
    return 0;
  }
  if (int err = MayDelete(ctx, old_dir, old_d, is_dir)) return err;
  bool new_is_dir = false;
  if (target == vfs::kNone) {
    if (int err = MayCreate(ctx, new_dir)) return err;
  } else {
    new_is_dir = S_ISDIR(w.inode(target).mode);
    const bool want_dir = (flags & RENAME_EXCHANGE) ? new_is_dir : is_dir;
    if (int err = MayDelete(ctx, new_dir, new_d, want_dir)) return err;
  }
  const InodeId od = w.inode_of(old_dir.dentry), nd = w.inode_of(new_dir.dentry);
  if (od != nd) {
    // A directory changing parent rewrites its "..": write on it.
    if (is_dir) {
      if (int err = DacCheck(ctx, {old_dir.mnt, old_d}, perm::kMayWrite,
                             "write permission (to update its \"..\") on"))
        return err;
    }
    if ((flags & RENAME_EXCHANGE) && new_is_dir) {
      if (int err = DacCheck(ctx, {new_dir.mnt, new_d}, perm::kMayWrite,
                             "write permission (to update its \"..\") on"))
        return err;
    }
  }
  if (IsLocalMountpoint(w, old_d) || (new_d != vfs::kNone && IsLocalMountpoint(w, new_d))) {
    ctx.Fail(Stage::kMount, "a mount point cannot be renamed or replaced");
    return EBUSY;
  }
  if (int err = OverlayRenameChecks(ctx, old_dir, old_d, new_dir, new_d, flags)) return err;
  if (int err = BtrfsRenameChecks(ctx, old_dir, old_d, new_dir, new_d, flags)) return err;
  if (!(flags & RENAME_EXCHANGE) && target != vfs::kNone && new_is_dir) {
    if (int err = vfs::NeedEmptyKnown(w, {new_dir.mnt, new_d})) return err;
  }
  if (!(flags & RENAME_EXCHANGE) && target != vfs::kNone && new_is_dir &&
      w.inode(target).nchildren() != 0) {
    FailAt(ctx, Stage::kVfs, "{} is not empty", {new_dir.mnt, new_d});
    return ENOTEMPTY;
  }
  return 0;
}

// shmem_rename2(): the change itself.
void ApplyRename(OpCtx& ctx, PathPos old_dir, DentryId old_d, PathPos new_dir,
                 DentryId new_d, std::string_view new_name, std::string_view old_name,
                 uint32_t flags) {
  vfs::World& w = ctx.w;
  const InodeId source = w.inode_of(old_d);
  const InodeId target = new_d != vfs::kNone ? w.inode_of(new_d) : vfs::kNone;
  if (source == target) return;
  const bool is_dir = S_ISDIR(w.inode(source).mode);
  const InodeId od = w.inode_of(old_dir.dentry), nd = w.inode_of(new_dir.dentry);
  if (flags & RENAME_EXCHANGE) {
    const bool new_is_dir = S_ISDIR(w.inode(target).mode);
    if (od != nd && is_dir != new_is_dir) {
      if (is_dir) {
        w.SetNlink(od, w.inode(od).nlink - 1);
        w.SetNlink(nd, w.inode(nd).nlink + 1);
      } else {
        w.SetNlink(nd, w.inode(nd).nlink - 1);
        w.SetNlink(od, w.inode(od).nlink + 1);
      }
    }
    w.Exchange(old_d, new_d);
    return;
  }
  if (target != vfs::kNone) {
    // The replaced name goes; a replaced directory dies. DropLink() takes
    // the victim's ".." link from the new parent, but Linux keeps that
    // count (the moved directory's ".." replaces it) and takes one from
    // the old parent instead.
    DropLink(ctx, new_d);
    if (is_dir) {
      w.SetNlink(nd, w.inode(nd).nlink + 1);
      w.SetNlink(od, w.inode(od).nlink - 1);
    }
  } else if (is_dir) {
    w.SetNlink(od, w.inode(od).nlink - 1);
    w.SetNlink(nd, w.inode(nd).nlink + 1);
  }
  w.Move(old_d, new_dir.dentry, new_name);
  if (flags & RENAME_WHITEOUT) {
    // A char device 0:0, mode 0, in the old place.
    CreateObject(ctx, old_dir, old_name, S_IFCHR, 0);
  }
}

}  // namespace

template <>
int Do<pathwarden::Rename>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) return EINVAL;
  if ((flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)) && (flags & RENAME_EXCHANGE)) {
    ctx.Fail(Stage::kArgs, "RENAME_EXCHANGE cannot be combined with NOREPLACE or WHITEOUT");
    return EINVAL;
  }
  walk::ParentResult op, np;
  if (int err = walk::FilenameParentat(ctx.env, ctx.StartFor(st.path), st.path, 0, &op))
    return err;
  if (int err = walk::FilenameParentat(ctx.env, walk::Start{}, st.path2, 0, &np)) return err;
  if (op.parent.mnt != np.parent.mnt) {
    ctx.Fail(Stage::kMount, [&] {
      return fmt::format("{} and {} are on different mounts", ctx.PathOf(op.parent),
                         ctx.PathOf(np.parent));
    });
    return EXDEV;
  }
  if (op.type != walk::LastType::kNorm) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("\"{}\" cannot be renamed", st.path); });
    return EBUSY;
  }
  if (np.type != walk::LastType::kNorm) {
    ctx.Fail(Stage::kVfs,
             [&] { return fmt::format("\"{}\" cannot be a rename target", st.path2); });
    return (flags & RENAME_NOREPLACE) ? EEXIST : EBUSY;
  }
  if (int err = MntWantWrite(ctx, op.parent)) return err;
  const DentryId trap = RenameTrap(ctx.w, np.parent.dentry, op.parent.dentry);
  DentryId old_d = vfs::kNone, new_d = vfs::kNone;
  if (int err = LookupRenameSide(ctx, op, true, false, &old_d)) return err;
  if (int err = LookupRenameSide(ctx, np, flags & RENAME_EXCHANGE,
                                 flags & RENAME_NOREPLACE, &new_d))
    return err;
  const vfs::World& w = ctx.w;
  if (flags & RENAME_EXCHANGE) {
    if (!S_ISDIR(w.inode_at(new_d).mode) && np.trailing_slash) {
      FailAt(ctx, Stage::kVfs, "{} has a trailing slash and is not a directory",
             {np.parent.mnt, new_d});
      return ENOTDIR;
    }
  }
  if (!S_ISDIR(w.inode_at(old_d).mode)) {
    if (op.trailing_slash || (!(flags & RENAME_EXCHANGE) && np.trailing_slash)) {
      FailAt(ctx, Stage::kVfs, "{} is not a directory, but a name ends in '/'",
             {op.parent.mnt, old_d});
      return ENOTDIR;
    }
  }
  if (old_d == trap) {
    FailAt(ctx, Stage::kVfs, "{} would move into its own subtree", {op.parent.mnt, old_d});
    return EINVAL;
  }
  if (new_d != vfs::kNone && new_d == trap) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is an ancestor of {}", ctx.PathOf({np.parent.mnt, new_d}),
                         ctx.PathOf({op.parent.mnt, old_d}));
    });
    return (flags & RENAME_EXCHANGE) ? EINVAL : ENOTEMPTY;
  }
  if (int err = security::PathRename(ctx, op.parent, old_d, np.parent, new_d, flags))
    return err;
  if (int err = VfsRenameChecks(ctx, op.parent, old_d, np.parent, new_d, flags)) return err;
  const bool same_inode = new_d != vfs::kNone && ctx.w.inode_of(old_d) == ctx.w.inode_of(new_d);
  if (ctx.explain() && ctx.ex->stage() != Stage::kLandlock && !same_inode)
    ctx.Ok(Stage::kDac, [&] {
      return fmt::format("{}; renamed {} to {}", ctx.ex->text(), ctx.PathOf({op.parent.mnt, old_d}),
                         st.path2);
    });
  if (ctx.apply)
    ApplyRename(ctx, op.parent, old_d, np.parent, new_d, np.last, op.last, flags);
  return 0;
}

}  // namespace pathwarden::ops
