// chmod(2) (fchmodat2), chown(2)/lchown(2), truncate(2), utimensat(2).
// Linux: fs/open.c @6.18 do_fchmodat(), chmod_common(), do_fchownat(),
// chown_common(), do_sys_truncate(), vfs_truncate(); fs/attr.c
// notify_change(), may_setattr(), setattr_prepare(), chown_ok(),
// chgrp_ok(), setattr_should_drop_sgid(); fs/utimes.c

#include <fcntl.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/vfs/backend.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"

namespace pathwarden::ops {
namespace {

using vfs::InodeId;
using vfs::PathPos;

// The part of struct iattr the model needs.
struct Iattr {
  bool set_mode = false, set_uid = false, set_gid = false;
  bool kill_suid = false, kill_sgid = false;
  bool times_set = false;  // ATTR_TIMES_SET (or *_SET)
  bool touch = false;      // ATTR_TOUCH
  uint32_t mode = 0, uid = 0, gid = 0;
};

// chown_ok(): the owner may "change" the owner to itself; else CAP_CHOWN.
bool ChownOk(const OpCtx& ctx, const vfs::Inode& i, uint32_t uid) {
  if (i.uid == ctx.cred().fsuid && uid == i.uid) return true;
  return ctx.cred().Capable(kCapChown);
}

// chgrp_ok(): the owner may pick its own group or one it is in; else
// CAP_CHOWN.
bool ChgrpOk(const OpCtx& ctx, const vfs::Inode& i, uint32_t gid) {
  if (i.uid == ctx.cred().fsuid) {
    if (gid == i.gid) return true;
    if (ctx.cred().InGroup(gid)) return true;
  }
  return ctx.cred().Capable(kCapChown);
}

// notify_change() with the parts of may_setattr() and setattr_prepare()
// that can refuse, then the change.
int NotifyChange(OpCtx& ctx, PathPos at, Iattr a) {
  vfs::World& w = ctx.w;
  const InodeId ino = w.inode_of(at.dentry);
  const vfs::Inode& i = w.inode(ino);
  const Cred& c = ctx.cred();
  // Its filesystem's ->setattr decides, or its attributes are unseen.
  if (i.flags & vfs::kInodeOpaque) return vfs::UnknownAt(ino);
  // may_setattr()
  if ((a.set_mode || a.set_uid || a.set_gid || a.times_set) &&
      (i.flags & (vfs::kInodeImmutable | vfs::kInodeAppend))) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is {}", ctx.PathOf(at),
                         (i.flags & vfs::kInodeImmutable) ? "immutable" : "append-only");
    });
    return EPERM;
  }
  if (a.touch) {
    if (i.flags & vfs::kInodeImmutable) {
      ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} is immutable", ctx.PathOf(at)); });
      return EPERM;
    }
    if (!perm::OwnerOrCapable(w, c, ino)) {
      if (int err = DacCheck(ctx, at, perm::kMayWrite,
                             "setting the times to now needs the owner, "
                             "CAP_FOWNER or write permission on"))
        return err;
    }
  }
  if (a.set_mode && S_ISLNK(i.mode)) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is a symlink: its mode cannot change", ctx.PathOf(at));
    });
    return EOPNOTSUPP;
  }
  // ATTR_KILL_S*ID become a mode change.
  const uint32_t old_mode = i.mode;
  if (a.kill_suid && (old_mode & S_ISUID)) {
    a.set_mode = true;
    a.mode = old_mode & ~S_ISUID;
  }
  if (a.kill_sgid && (old_mode & S_ISGID)) {
    if (!a.set_mode) {
      a.set_mode = true;
      a.mode = old_mode;
    }
    a.mode &= ~S_ISGID;
  }
  // setattr_prepare()
  if (a.set_uid && !ChownOk(ctx, i, a.uid)) {
    ctx.Fail(Stage::kDac, [&] {
      return fmt::format(
          "only CAP_CHOWN gives {} (owner {}) away; uid {} "
          "lacks it",
          ctx.PathOf(at), i.uid.get(), c.fsuid);
    });
    return EPERM;
  }
  if (a.set_gid && !ChgrpOk(ctx, i, a.gid)) {
    ctx.Fail(Stage::kDac, [&] {
      return fmt::format(
          "changing the group of {} ({}) to {} needs the owner "
          "in that group, or CAP_CHOWN",
          ctx.PathOf(at), DescribeInode(w, ino), a.gid);
    });
    return EPERM;
  }
  if (a.set_mode) {
    if (!perm::OwnerOrCapable(w, c, ino)) {
      ctx.Fail(Stage::kDac, [&] {
        return fmt::format(
            "changing the mode of {} ({}) needs the owner or "
            "CAP_FOWNER",
            ctx.PathOf(at), DescribeInode(w, ino));
      });
      return EPERM;
    }
    const uint32_t gid = a.set_gid ? a.gid : i.gid.get();
    if (!perm::InGroupOrCapable(c, gid)) a.mode &= ~S_ISGID;
  }
  if (a.times_set && !perm::OwnerOrCapable(w, c, ino)) {
    ctx.Fail(Stage::kDac, [&] {
      return fmt::format(
          "setting explicit times on {} ({}) needs the owner or "
          "CAP_FOWNER",
          ctx.PathOf(at), DescribeInode(w, ino));
    });
    return EPERM;
  }
  if (!ctx.apply) return 0;
  if (a.set_uid || a.set_gid)
    w.SetOwner(ino, a.set_uid ? a.uid : i.uid.get(), a.set_gid ? a.gid : i.gid.get());
  if (a.set_mode) SetMode(ctx, ino, (old_mode & S_IFMT) | (a.mode & 07777));
  return 0;
}

}  // namespace

int DoChmod(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, ctx.StartFor(st.path), st.path,
                                     LookupFlagsFor(flags, true), &at))
    return err;
  if (int err = MntWantWrite(ctx, at)) return err;
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  Iattr a;
  a.set_mode = true;
  a.mode = (st.mode & 07777) | (i.mode & S_IFMT);
  if (int err = NotifyChange(ctx, at, a)) return err;
  ctx.Ok(Stage::kDac, [&] {
    return fmt::format("uid {} {} {}", ctx.cred().fsuid,
                       i.uid == ctx.cred().fsuid ? "owns" : "has CAP_FOWNER for", ctx.PathOf(at));
  });
  return 0;
}

int DoChown(OpCtx& ctx, bool nofollow) {
  const OpArgs& st = ctx.a;
  uint32_t flags = static_cast<uint32_t>(st.flags);
  if (nofollow) flags |= AT_SYMLINK_NOFOLLOW;
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, ctx.StartFor(st.path), st.path,
                                     LookupFlagsFor(flags, true), &at))
    return err;
  if (int err = MntWantWrite(ctx, at)) return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  Iattr a;
  if (st.uid != -1) {
    a.set_uid = true;
    a.uid = static_cast<uint32_t>(st.uid);
  }
  if (st.gid != -1) {
    a.set_gid = true;
    a.gid = static_cast<uint32_t>(st.gid);
  }
  if (!S_ISDIR(i.mode)) {
    a.kill_suid = true;
    // setattr_should_drop_sgid(), on the current group.
    if ((i.mode & S_ISGID) &&
        ((i.mode & S_IXGRP) || !perm::InGroupOrCapable(ctx.cred(), i.gid)))
      a.kill_sgid = true;
  }
  if (int err = NotifyChange(ctx, at, a)) return err;
  ctx.Ok(Stage::kDac, [&] { return fmt::format("ownership of {} may change", ctx.PathOf(at)); });
  return 0;
}

int DoTruncate(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, st.path, walk::kLookupFollow, &at))
    return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  if (S_ISDIR(i.mode)) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} is a directory", ctx.PathOf(at)); });
    return EISDIR;
  }
  if (!S_ISREG(i.mode)) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} is not a regular file", ctx.PathOf(at)); });
    return EINVAL;
  }
  // Since about 6.14 the permission check (and a read-only superblock)
  // comes before the mount's write access.
  if (int err = DacCheck(ctx, at, perm::kMayWrite, "write permission on")) return err;
  if (int err = MntWantWrite(ctx, at)) return err;
  if (i.flags & vfs::kInodeAppend) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} is append-only", ctx.PathOf(at)); });
    return EPERM;
  }
  if (int err = security::PathTruncate(ctx, at)) return err;
  if (ctx.apply) Truncate(ctx, ino);
  return 0;
}

int DoUtimensat(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  static const std::optional<std::array<TimeSpec, 2>> kNull;
  const std::optional<std::array<TimeSpec, 2>>& times = st.times ? *st.times : kNull;
  if (times && (*times)[0] == TimeSpec::kOmit && (*times)[1] == TimeSpec::kOmit) {
    ctx.Ok(Stage::kArgs, "both times are UTIME_OMIT: nothing to do, the path is not even looked up");
    return 0;
  }
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, ctx.StartFor(st.path), st.path,
                                     LookupFlagsFor(flags, true), &at))
    return err;
  bool touch = !times || ((*times)[0] == TimeSpec::kNow && (*times)[1] == TimeSpec::kNow);
  if (int err = MntWantWrite(ctx, at)) return err;
  Iattr a;
  if (touch) {
    a.touch = true;
  } else {
    a.times_set = true;
  }
  if (int err = NotifyChange(ctx, at, a)) return err;
  ctx.Ok(Stage::kDac, [&] { return fmt::format("the times of {} may change", ctx.PathOf(at)); });
  return 0;
}

}  // namespace pathwarden::ops
