// mount(2) of a tmpfs and of a bind, umount2(2), mount_setattr(2).
// Linux: fs/namespace.c @6.18 do_mount(), path_mount(), may_mount(),
// do_new_mount(), do_loopback(), graft_tree(), ksys_umount(),
// can_umount(), do_umount(), do_umount_root(), propagate_mount_busy();
// mount_setattr(), build_mount_kattr(), do_mount_setattr(),
// mount_setattr_prepare(), mnt_hold_writers()

#include <sys/mount.h>

#include <vector>

#include <fmt/format.h>

#include "pathwarden/uapi.h"
#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"
#include "src/vfs/backend.h"

namespace pathwarden::ops {
namespace {

using vfs::DentryId;
using vfs::MountId;
using vfs::PathPos;

// Each mount flag of the model, as mount(2)'s MS_* and as
// mount_setattr(2)'s MOUNT_ATTR_* (its atime modes and nodiratime are not
// modelled: nothing the model answers reads them).
struct MntFlagNames {
  uint64_t ms, attr;
  uint32_t mnt;
};
constexpr MntFlagNames kMntFlags[] = {
    {MS_RDONLY, kMountAttrRdonly, vfs::kMntReadonly},
    {MS_NOSUID, kMountAttrNosuid, vfs::kMntNosuid},
    {MS_NODEV, kMountAttrNodev, vfs::kMntNodev},
    {MS_NOEXEC, kMountAttrNoexec, vfs::kMntNoexec},
    {kMsNosymfollow, kMountAttrNosymfollow, vfs::kMntNosymfollow},
};

// The model's flags for MS_* (`attrs` false) or MOUNT_ATTR_* (true).
uint32_t MntFlagsOf(uint64_t flags, bool attrs = false) {
  uint32_t f = 0;
  for (const MntFlagNames& n : kMntFlags)
    if (flags & (attrs ? n.attr : n.ms)) f |= n.mnt;
  return f;
}

// The common head of path_mount(): the target lookup, the LSM, then
// CAP_SYS_ADMIN (may_mount()).
int MountHead(OpCtx& ctx, std::string_view target, PathPos* at) {
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, target, walk::kLookupFollow, at))
    return err;
  if (int err = security::SbMount(ctx)) return err;
  if (!ctx.cred().CapableOver(kCapSysAdmin)) {
    ctx.Fail(Stage::kCapability, "mounting needs CAP_SYS_ADMIN");
    return EPERM;
  }
  return 0;
}

// lock_mount(): the mount goes on top of whatever is already mounted on
// the target (the lookup of "/" or "." does not step into those mounts);
// then a removed mount point or a detached parent mount is ENOENT.
int LockMount(OpCtx& ctx, PathPos* mp) {
  const vfs::World& w = ctx.w;
  walk::TraverseMounts(w, mp);
  if (!(w.dentry(mp->dentry).flags & vfs::kDentryHashed) &&
      w.dentry(mp->dentry).parent != mp->dentry) {
    FailAt(ctx, Stage::kMount, "{} was removed: nothing can be mounted on it", *mp);
    return ENOENT;
  }
  if (!w.mount(mp->mnt).attached) {
    // Linux: fs/namespace.c do_lock_mount(): not mounted is ENOENT in 6.18.
    FailAt(ctx, Stage::kMount, "{} is on a detached mount", *mp);
    return ENOENT;
  }
  return 0;
}

// graft_tree(): a directory goes on a directory, a file on a file.
int GraftTypes(OpCtx& ctx, PathPos mp, bool root_is_dir) {
  if (S_ISDIR(ctx.w.inode_at(mp.dentry).mode) != root_is_dir) {
    FailAt(ctx, Stage::kMount,
           "{} and the mounted root differ in type "
           "(directory vs file)",
           mp);
    return ENOTDIR;
  }
  return 0;
}

// copy_tree() for MS_REC: the mounts under `src_root` inside `src_mnt`,
// and all mounted under them, in the kernel's order (next_mnt(): each
// mount before its children, children in the order they were attached);
// collected before anything is attached, so the new mount never copies
// itself. Iterative, over the child lists: the cost is the mounts copied.
struct SubmountCopy {
  MountId src;
  int parent;  // index into the list, or -1 for the new bind itself
};

void CollectSubmounts(const vfs::World& w, MountId src_mnt, DentryId src_root,
                      std::vector<SubmountCopy>* out) {
  struct Frame {
    MountId next;  // the next child to visit
    int parent;
  };
  std::vector<Frame> stack;
  stack.push_back({w.mount(src_mnt).first_child, -1});
  while (!stack.empty()) {
    Frame& top = stack.back();
    const MountId m = top.next;
    if (m == vfs::kNone) {
      stack.pop_back();
      continue;
    }
    const vfs::Mount& mt = w.mount(m);
    top.next = mt.next_sibling;
    // Only the source mount's own children are filtered: those mounted
    // outside the bound directory are not copied (is_subdir()).
    if (stack.size() == 1 && src_root != vfs::kNone && !w.IsDescendant(mt.mountpoint, src_root))
      continue;
    out->push_back({m, top.parent});
    stack.push_back({mt.first_child, static_cast<int>(out->size()) - 1});
  }
}

// next_mnt(): `m` and, when `recurse`, every mount below it, each before
// its children.
std::vector<MountId> MountAndBelow(const vfs::World& w, MountId m, bool recurse) {
  std::vector<MountId> order{m};
  if (!recurse) return order;
  for (size_t i = 0; i < order.size(); ++i)
    for (MountId c = w.mount(order[i]).first_child; c != vfs::kNone; c = w.mount(c).next_sibling)
      order.push_back(c);
  return order;
}

// umount_tree(): detach `m` and everything mounted under it, children
// before their parents.
void DetachTree(vfs::World& w, MountId m) {
  const std::vector<MountId> order = MountAndBelow(w, m, true);
  for (auto it = order.rbegin(); it != order.rend(); ++it) w.Detach(*it);
}

// count_mounts(): a mount namespace holds at most fs.mount-max mounts;
// attaching `adding` more (a new mount, or a bind and the copies of what
// is mounted under its source) must keep within it.
int CountMounts(OpCtx& ctx, uint64_t adding) {
  const vfs::World& w = ctx.w;
  const uint64_t nr = w.nr_mounts(), max = w.mount_max();
  if (nr + adding <= max) return 0;
  ctx.Fail(Stage::kMount, [&] {
    return fmt::format(
        "fs.mount-max is {}: the mount namespace has {} mounts, and this would attach {} more",
        max, nr, adding);
  });
  return ENOSPC;
}

// build_mount_kattr(): which MOUNT_ATTR_* a request may set and clear.
// The atime mode is one field: clearing it must clear the whole mask,
// and setting a mode needs it cleared.
int CheckMountAttrs(OpCtx& ctx, uint64_t set, uint64_t clr) {
  constexpr uint64_t kValid = kMountAttrRdonly | kMountAttrNosuid | kMountAttrNodev |
                              kMountAttrNoexec | kMountAttrAtime | kMountAttrNodiratime |
                              kMountAttrIdmap | kMountAttrNosymfollow;
  auto invalid = [&](std::string_view why) {
    ctx.Fail(Stage::kArgs, why);
    return EINVAL;
  };
  if ((set | clr) & ~kValid) return invalid("attr_set or attr_clr holds a bit that is no MOUNT_ATTR_");
  if (clr & kMountAttrAtime) {
    if ((clr & kMountAttrAtime) != kMountAttrAtime)
      return invalid("attr_clr clears part of the atime mode (MOUNT_ATTR__ATIME clears it whole)");
    const uint64_t mode = set & kMountAttrAtime;
    if (mode != kMountAttrRelatime && mode != kMountAttrNoatime && mode != kMountAttrStrictatime)
      return invalid("attr_set names more than one atime mode");
  } else if (set & kMountAttrAtime) {
    return invalid("attr_set sets an atime mode without clearing MOUNT_ATTR__ATIME");
  }
  // build_mount_idmapped()
  if (clr & kMountAttrIdmap) return invalid("an idmapped mount cannot be made plain again");
  if (set & kMountAttrIdmap)
    return vfs::Unknown("MOUNT_ATTR_IDMAP takes a user namespace, which the model does not have");
  return 0;
}

// mnt_get_writers(): whether a file on mount `m` is open for writing (a
// regular file or directory: special files take no write access on
// their mount), in any process.
bool MountHasWriters(const OpCtx& ctx, MountId m) {
  for (int i = 0; i < ctx.t.count(); ++i)
    for (const auto& [num, f] : ctx.t.task(i).fds) {
      if (f && f->path.mnt == m && (f->f_mode & kFmodeWrite) &&
          !vfs::IsSpecialFile(ctx.w.inode(f->inode).mode))
        return true;
    }
  return false;
}

// On the live host the model holds the asker's files only: whether
// another process `holds` something on the mount at `at` (a file open for
// writing, a working directory) is not seen, so what that decides is
// unknown. Called after the model's own holders found nothing: a holder
// it sees makes the answer EBUSY, which no other process can change.
int HostHoldersUnknown(const OpCtx& ctx, PathPos at, std::string_view holds) {
  if (ctx.w.backend() == nullptr) return 0;
  return vfs::Unknown(fmt::format("whether another process holds {} on the mount at {} is not "
                                  "seen from the host",
                                  holds, ctx.PathOf(at)));
}

}  // namespace

template <>
int Do<pathwarden::MountSetattr>(OpCtx& ctx) {
  const OpArgs& a = ctx.a;
  if (a.flags & ~uint64_t{AT_EMPTY_PATH | kAtRecursive | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT}) {
    ctx.Fail(Stage::kArgs, "flags other than AT_EMPTY_PATH, AT_RECURSIVE, AT_SYMLINK_NOFOLLOW "
                           "and AT_NO_AUTOMOUNT");
    return EINVAL;
  }
  // may_mount(), before the attributes are read or the path looked up.
  if (!ctx.cred().CapableOver(kCapSysAdmin)) {
    ctx.Fail(Stage::kCapability, "mount_setattr needs CAP_SYS_ADMIN");
    return EPERM;
  }
  if (a.attr_set == 0 && a.attr_clr == 0) {
    ctx.Ok(Stage::kArgs, "nothing to set or clear: the call returns before the lookup");
    return 0;
  }
  if (int err = CheckMountAttrs(ctx, a.attr_set, a.attr_clr)) return err;
  PathPos at;
  const uint32_t lookup = LookupFlagsFor(static_cast<uint32_t>(a.flags), true);
  if (int err = UserPathAt(ctx, lookup, &at))
    return err;
  // do_mount_setattr(): no security hook, so no Landlock layer is asked.
  vfs::World& w = ctx.w;
  if (w.mount(at.mnt).root != at.dentry) {
    FailAt(ctx, Stage::kMount, "{} is not the root of a mount", at);
    return EINVAL;
  }
  if (!w.mount(at.mnt).attached) {
    FailAt(ctx, Stage::kMount, "{} is no longer mounted", at);
    return EINVAL;
  }
  const std::vector<MountId> mounts = MountAndBelow(w, at.mnt, a.flags & kAtRecursive);
  // mount_setattr_prepare(): making a writable mount read-only waits for
  // no writer (mnt_hold_writers()).
  if (a.attr_set & kMountAttrRdonly) {
    bool writable = false;
    for (MountId m : mounts) {
      if (w.mount(m).flags & vfs::kMntReadonly) continue;
      writable = true;
      if (!MountHasWriters(ctx, m)) continue;
      FailAt(ctx, Stage::kMount,
             "a file on the mount {} is open for writing: it cannot be made "
             "read-only",
             {m, w.mount(m).root});
      return EBUSY;
    }
    // No writer the model holds; on the host, others' are not seen.
    if (writable) {
      if (int err = HostHoldersUnknown(ctx, at, "a file open for writing")) return err;
    }
  }
  if (ctx.apply) {
    const uint32_t set = MntFlagsOf(a.attr_set, true), clr = MntFlagsOf(a.attr_clr, true);
    for (MountId m : mounts) w.SetMountFlags(m, (w.mount(m).flags & ~clr) | set);
  }
  OkAt(ctx, Stage::kCapability,
       "CAP_SYS_ADMIN changes the attributes of the mount at {} (Landlock has no "
       "hook on mount_setattr)",
       at);
  return 0;
}

template <>
int Do<pathwarden::MountTmpfs>(OpCtx& ctx) {
  PathPos at;
  if (int err = MountHead(ctx, ctx.a.path, &at)) return err;
  vfs::World& w = ctx.w;
  // A fresh tmpfs: root 1777 owned by the mounter.
  if (int err = LockMount(ctx, &at)) return err;
  if (int err = GraftTypes(ctx, at, true)) return err;
  if (int err = CountMounts(ctx, 1)) return err;
  if (ctx.apply) {
    vfs::SbId sb = w.NewSuperblock(01777, ctx.cred().fsuid, ctx.cred().fsgid);
    uint32_t flags = MntFlagsOf(ctx.a.flags);
    if (ctx.a.flags & MS_RDONLY) w.SetSbFlags(sb, vfs::kSbReadonly);
    w.Attach(at, sb, w.sb(sb).root, flags);
  }
  OkAt(ctx, Stage::kCapability, "CAP_SYS_ADMIN mounts a tmpfs on {}", at);
  return 0;
}

template <>
int Do<pathwarden::BindMount>(OpCtx& ctx) {
  PathPos target;
  if (int err = MountHead(ctx, ctx.a.path2, &target)) return err;
  if (ctx.a.path.empty()) {
    ctx.Fail(Stage::kArgs, "a bind mount needs a source");
    return EINVAL;
  }
  PathPos src;
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, ctx.a.path, walk::kLookupFollow, &src))
    return err;
  vfs::World& w = ctx.w;
  // do_loopback(): the target is locked before the source is checked.
  if (int err = LockMount(ctx, &target)) return err;
  if (!w.mount(src.mnt).attached) {
    // __do_loopback(): check_mnt() on the source.
    FailAt(ctx, Stage::kMount, "{} is on a detached mount", src);
    return EINVAL;
  }
  if (int err = GraftTypes(ctx, target, S_ISDIR(w.inode_at(src.dentry).mode))) return err;
  // A source that was removed (the root of a bind of it, reached after an
  // rmdir or unlink) is refused only now, after the type check (verified
  // on the kernel here: ENOTDIR wins over this ENOENT).
  if (!(w.dentry(src.dentry).flags & vfs::kDentryHashed) &&
      w.dentry(src.dentry).parent != src.dentry) {
    FailAt(ctx, Stage::kMount, "{} was removed: it cannot be bound elsewhere", src);
    return ENOENT;
  }
  std::vector<SubmountCopy> subs;
  if (ctx.a.flags & MS_REC) CollectSubmounts(w, src.mnt, src.dentry, &subs);
  if (int err = CountMounts(ctx, 1 + subs.size())) return err;
  if (ctx.apply) {
    const vfs::Mount& sm = w.mount(src.mnt);
    const MountId m = w.Attach(target, sm.sb, src.dentry, sm.flags);
    std::vector<MountId> copies;
    for (const SubmountCopy& c : subs) {
      const vfs::Mount& orig = w.mount(c.src);
      const MountId onto = c.parent < 0 ? m : copies[c.parent];
      copies.push_back(w.Attach({onto, orig.mountpoint}, orig.sb, orig.root, orig.flags));
    }
  }
  ctx.Ok(Stage::kCapability, [&] {
    return fmt::format("CAP_SYS_ADMIN binds {} on {}", ctx.PathOf(src), ctx.PathOf(target));
  });
  return 0;
}

template <>
int Do<pathwarden::Umount>(OpCtx& ctx) {
  const uint32_t flags = static_cast<uint32_t>(ctx.a.flags);
  if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW)) return EINVAL;
  const uint32_t lookup = (flags & UMOUNT_NOFOLLOW) ? 0 : walk::kLookupFollow;
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, ctx.a.path, lookup, &at))
    return err;
  vfs::World& w = ctx.w;
  // LOOKUP_MOUNTPOINT: the mounts on the final position count, also where
  // the walk did not step into them ("/", ".").
  walk::TraverseMounts(w, &at);
  // can_umount()
  if (!ctx.cred().CapableOver(kCapSysAdmin)) {
    ctx.Fail(Stage::kCapability, "unmounting needs CAP_SYS_ADMIN");
    return EPERM;
  }
  const vfs::Mount& m = w.mount(at.mnt);
  if (m.root != at.dentry) {
    FailAt(ctx, Stage::kMount, "{} is not the root of a mount", at);
    return EINVAL;
  }
  if (!m.attached) {
    FailAt(ctx, Stage::kMount, "{} is no longer mounted", at);
    return EINVAL;
  }
  // do_umount()
  if (int err = security::SbUmount(ctx)) return err;
  if (at.mnt == ctx.p.root.mnt && !(flags & MNT_DETACH)) {
    // Unmounting one's own root remounts it read-only instead
    // (do_umount_root()), which files open for writing or pending removals
    // on it refuse.
    if (!(w.sb(m.sb).flags & vfs::kSbReadonly)) {
      const std::string busy = w.RemountReadonlyBusy(m.sb);
      if (!busy.empty()) {
        ctx.Fail(Stage::kMount, [&] {
          return fmt::format(
              "{} is the process's root mount, to be remounted "
              "read-only instead; but {}",
              ctx.PathOf(at), busy);
        });
        return EBUSY;
      }
      if (int err = HostHoldersUnknown(ctx, at, "a file open for writing")) return err;
      if (ctx.apply) w.SetSbFlags(m.sb, w.sb(m.sb).flags | vfs::kSbReadonly);
    }
    OkAt(ctx, Stage::kMount,
         "{} is the process's root mount: the filesystem is "
         "remounted read-only instead",
         at);
    return 0;
  }
  // The namespace's root mount is mounted in a wider namespace (as the
  // kernel executor's scenario root is): it may be detached too.
  if (flags & MNT_DETACH) {
    if (ctx.apply) DetachTree(w, at.mnt);
    return 0;
  }
  if (m.children != 0 || m.refs != 0) {
    ctx.Fail(Stage::kMount, [&] {
      return fmt::format("{} is busy ({})", ctx.PathOf(at),
                         m.children != 0 ? "something is mounted under it"
                                         : "open files or working directories use it");
    });
    return EBUSY;
  }
  if (int err = HostHoldersUnknown(ctx, at, "an open file or a working directory")) return err;
  if (ctx.apply) w.Detach(at.mnt);
  return 0;
}

}  // namespace pathwarden::ops
