// unlink(2), rmdir(2).
// Linux: fs/namei.c @6.18 do_unlinkat(), vfs_unlink(), do_rmdir(),
// vfs_rmdir(); mm/shmem.c shmem_rmdir() (simple_empty())

#include <fcntl.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"
#include "src/vfs/backend.h"

namespace pathwarden::ops {
namespace {

using vfs::DentryId;
using vfs::PathPos;

// lookup_one_qstr_excl() without LOOKUP_CREATE: the child must exist.
int LookupVictim(const OpCtx& ctx, const walk::ParentResult& pr, DentryId* out) {
  if (int err = LookupOneQstr(ctx, pr, out)) return err;
  return *out != vfs::kNone ? 0 : FailMissing(ctx, pr);
}

void RemovedOk(OpCtx& ctx, PathPos victim) {
  if (!ctx.explain() || ctx.ex->stage() == Stage::kLandlock) return;
  ctx.Ok(Stage::kDac,
         [&] { return fmt::format("{}; removed {}", ctx.ex->text(), ctx.PathOf(victim)); });
}

}  // namespace

template <>
int Do<pathwarden::Unlink>(OpCtx& ctx) {
  if (ctx.a.flags & AT_REMOVEDIR) return Do<pathwarden::Rmdir>(ctx);
  walk::ParentResult pr;
  if (int err = walk::FilenameParentat(ctx.env, ctx.StartFor(ctx.a.path), ctx.a.path, 0, &pr))
    return err;
  if (pr.type != walk::LastType::kNorm) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("\"{}\" names a directory", ctx.a.path); });
    return EISDIR;
  }
  if (int err = MntWantWrite(ctx, pr.parent)) return err;
  DentryId victim = vfs::kNone;
  if (int err = LookupVictim(ctx, pr, &victim)) return err;
  const PathPos vpos{pr.parent.mnt, victim};
  if (pr.trailing_slash) {
    const bool dir = S_ISDIR(ctx.w.inode_at(victim).mode);
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} has a trailing slash and {}", ctx.PathOf(vpos),
                         dir ? "is a directory" : "is not a directory");
    });
    return dir ? EISDIR : ENOTDIR;
  }
  if (int err = security::PathUnlink(ctx, pr.parent, victim)) return err;
  if (int err = MayDelete(ctx, pr.parent, victim, false)) return err;
  if (IsLocalMountpoint(ctx.w, victim)) {
    FailAt(ctx, Stage::kMount, "{} is a mount point", vpos);
    return EBUSY;
  }
  RemovedOk(ctx, vpos);
  if (ctx.apply) DropLink(ctx, victim);
  return 0;
}

template <>
int Do<pathwarden::Rmdir>(OpCtx& ctx) {
  walk::ParentResult pr;
  if (int err = walk::FilenameParentat(ctx.env, ctx.StartFor(ctx.a.path), ctx.a.path, 0, &pr))
    return err;
  switch (pr.type) {
    case walk::LastType::kDotDot:
      ctx.Fail(Stage::kVfs, "rmdir of \"..\"");
      return ENOTEMPTY;
    case walk::LastType::kDot:
      ctx.Fail(Stage::kVfs, "rmdir of \".\"");
      return EINVAL;
    case walk::LastType::kRoot:
      ctx.Fail(Stage::kVfs, "rmdir of a root");
      return EBUSY;
    case walk::LastType::kNorm:
      break;
  }
  if (int err = MntWantWrite(ctx, pr.parent)) return err;
  DentryId victim = vfs::kNone;
  if (int err = LookupVictim(ctx, pr, &victim)) return err;
  const PathPos vpos{pr.parent.mnt, victim};
  if (int err = security::PathRmdir(ctx, pr.parent, victim)) return err;
  if (int err = MayDelete(ctx, pr.parent, victim, true)) return err;
  if (IsLocalMountpoint(ctx.w, victim)) {
    FailAt(ctx, Stage::kMount, "{} is a mount point", vpos);
    return EBUSY;
  }
  if (int err = vfs::NeedEmptyKnown(ctx.w, vpos)) return err;
  if (ctx.w.inode_at(victim).nchildren() != 0) {
    FailAt(ctx, Stage::kVfs, "{} is not empty", vpos);
    return ENOTEMPTY;
  }
  // An empty subvolume's root goes with its subvolume, unless it is the
  // filesystem's default, being sent, or holds an active swap file
  // (btrfs_rmdir(), btrfs_delete_subvolume()): none of which the host
  // shows without privileges or at all.
  if (ctx.w.inode_at(victim).flags & vfs::kInodeSubvolRoot)
    return vfs::Unknown(fmt::format(
        "{} is the root of a btrfs subvolume: removing it deletes the subvolume, which "
        "btrfs_delete_subvolume() refuses (EPERM) for the default subvolume, one being sent "
        "or one with an active swap file; not modelled",
        ctx.PathOf(vpos)));
  RemovedOk(ctx, vpos);
  if (ctx.apply) DropLink(ctx, victim);
  return 0;
}

}  // namespace pathwarden::ops
