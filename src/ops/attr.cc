// chmod(2) (fchmodat2), chown(2)/lchown(2), truncate(2), utimensat(2),
// and by fd: fchmod(2), fchown(2), futimens(3), fallocate(2).
// Linux: fs/open.c @6.18 do_fchmodat(), chmod_common(), do_fchownat(),
// chown_common(), do_sys_truncate(), vfs_truncate(), vfs_fchmod(),
// vfs_fchown(), vfs_fallocate(); fs/attr.c notify_change(),
// may_setattr(), setattr_prepare(), chown_ok(), chgrp_ok(),
// setattr_should_drop_sgid(); fs/utimes.c do_utimes_fd(), vfs_utimes();
// mm/shmem.c shmem_fallocate(); fs/inode.c file_modified()

#include <fcntl.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/vfs/backend.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"
#include "src/vfs/xattr.h"

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
  bool kill_priv = false;  // ATTR_KILL_PRIV
  uint32_t mode = 0, uid = 0, gid = 0;
};

// chown_ok(): the owner may "change" the owner to itself; else CAP_CHOWN.
bool ChownOk(const OpCtx& ctx, const vfs::Inode& i, uint32_t uid) {
  if (i.uid == ctx.cred().fsuid && uid == i.uid) return true;
  if (perm::CapableWrt(ctx.cred(), kCapChown, i)) return true;
  // An owner an idmapped mount maps nowhere may be given a mapped one
  // with CAP_CHOWN over the filesystem (the model's superblocks are the
  // initial namespace's).
  return i.uid == vfs::kInvalidId && ctx.cred().CapableInitial(kCapChown);
}

// chgrp_ok(): the owner may pick its own group or one it is in; else
// CAP_CHOWN.
bool ChgrpOk(const OpCtx& ctx, const vfs::Inode& i, uint32_t gid) {
  if (i.uid == ctx.cred().fsuid) {
    if (gid == i.gid) return true;
    if (ctx.cred().InGroup(gid)) return true;
  }
  if (perm::CapableWrt(ctx.cred(), kCapChown, i)) return true;
  return i.gid == vfs::kInvalidId && ctx.cred().CapableInitial(kCapChown);
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
      FailAt(ctx, Stage::kVfs, "{} is immutable", at);
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
    FailAt(ctx, Stage::kVfs, "{} is a symlink: its mode cannot change", at);
    return EOPNOTSUPP;
  }
  // New ids must map back through an idmapped mount; an inode whose ids
  // it maps nowhere changes only by being given mapped ones.
  if (w.sb(i.sb).flags & vfs::kSbIdmapped) {
    const vfs::SbIdmap* m = w.sb_idmap(i.sb);
    const bool uid_bad = a.set_uid && !vfs::SbIdmap::GivesUid(m, a.uid);
    if (uid_bad || (a.set_gid && !vfs::SbIdmap::GivesGid(m, a.gid))) {
      ctx.Fail(Stage::kVfs, [&] {
        return fmt::format("the idmapped mount of {} maps {} {} to no id of its filesystem",
                           ctx.PathOf(at), uid_bad ? "uid" : "gid", uid_bad ? a.uid : a.gid);
      });
      return EOVERFLOW;
    }
    if (int err = IdmapUnmapped(ctx, at, a.set_uid, a.set_gid, "its attributes cannot change"))
      return err;
  }
  // The filesystem's ->setattr, before setattr_prepare()'s owner checks.
  // Linux: fs/btrfs/inode.c btrfs_setattr(), fs/fuse/dir.c fuse_setattr().
  if (int err = SubvolReadonly(ctx, at, "any change of its attributes")) return err;
  if (int err = FuseGate(ctx, at, "a change of its attributes")) return err;
  // procfs: a sysctl's mode and owner never change (proc_sys_setattr(),
  // then setattr_prepare()); its other files set their own
  // (proc_setattr(), or none at all for its root).
  if (w.sb(i.sb).flags & vfs::kSbProc) {
    if (!(i.flags & vfs::kInodeProcSys))
      return vfs::Unknown(fmt::format(
          "{} is procfs's own: which of its attributes change is procfs's (proc_setattr()); "
          "not modelled",
          ctx.PathOf(at)));
    if (a.set_mode || a.set_uid || a.set_gid) {
      FailAt(ctx, Stage::kVfs, "{} is a sysctl: its mode and owner never change (proc_sys_setattr())",
             at);
      return EPERM;
    }
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
    a.mode = perm::ModeSetBy(c, a.mode, a.set_gid ? a.gid : i.gid.get(), perm::Ids(i));
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
  if (a.kill_priv) KillPriv(ctx, ino);
  if (a.set_uid || a.set_gid)
    w.SetOwner(ino, a.set_uid ? a.uid : i.uid.get(), a.set_gid ? a.gid : i.gid.get());
  if (a.set_mode) SetMode(ctx, ino, (old_mode & S_IFMT) | (a.mode & 07777));
  return 0;
}

// chmod_common().
int ChmodCommon(OpCtx& ctx, PathPos at) {
  const OpArgs& st = ctx.a;
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

// chown_common(), after the mount's write access.
int ChownCommon(OpCtx& ctx, PathPos at) {
  const OpArgs& st = ctx.a;
  // make_kuid(current_user_ns(), ...): ids that do not map into the
  // caller's user namespace are refused before any permission.
  if (const UserNamespace* ns = ctx.cred().userns.get()) {
    const bool uid_bad = st.uid != -1 && !ns->NamedUidMaps(static_cast<uint32_t>(st.uid));
    if (uid_bad || (st.gid != -1 && !ns->NamedGidMaps(static_cast<uint32_t>(st.gid)))) {
      ctx.Fail(Stage::kArgs, [&] {
        return fmt::format("{} {} has no mapping in the caller's user namespace ({})",
                           uid_bad ? "uid" : "gid", uid_bad ? st.uid : st.gid, ns->Describe());
      });
      return EINVAL;
    }
  }
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
    a.kill_priv = true;
    a.kill_sgid = perm::ChownKillsSgid(ctx.cred(), i.mode, perm::Ids(i));
  }
  if (int err = NotifyChange(ctx, at, a)) return err;
  OkAt(ctx, Stage::kDac, "ownership of {} may change", at);
  return 0;
}

// The times a request asks for, and whether both are UTIME_OMIT (the
// call returns at once).
const std::optional<std::array<TimeSpec, 2>>& TimesOf(const OpArgs& st) {
  static const std::optional<std::array<TimeSpec, 2>> kNull;
  return st.times ? *st.times : kNull;
}
bool BothOmitted(const OpCtx& ctx) {
  const auto& times = TimesOf(ctx.a);
  if (times && (*times)[0] == TimeSpec::kOmit && (*times)[1] == TimeSpec::kOmit) {
    ctx.Ok(Stage::kArgs, "both times are UTIME_OMIT: nothing to do, the file is not even looked up");
    return true;
  }
  return false;
}

// vfs_utimes().
int Utimes(OpCtx& ctx, PathPos at) {
  const auto& times = TimesOf(ctx.a);
  bool touch = !times || ((*times)[0] == TimeSpec::kNow && (*times)[1] == TimeSpec::kNow);
  if (int err = MntWantWrite(ctx, at)) return err;
  Iattr a;
  if (touch) {
    a.touch = true;
  } else {
    a.times_set = true;
  }
  if (int err = NotifyChange(ctx, at, a)) return err;
  OkAt(ctx, Stage::kDac, "the times of {} may change", at);
  return 0;
}

}  // namespace

template <>
int Do<pathwarden::Truncate>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  PathPos at;
  if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, st.path, walk::kLookupFollow, &at))
    return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  if (S_ISDIR(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is a directory", at);
    return EISDIR;
  }
  if (!S_ISREG(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is not a regular file", at);
    return EINVAL;
  }
  // Since about 6.14 the permission check (and a read-only superblock)
  // comes before the mount's write access.
  if (int err = DacCheck(ctx, at, perm::kMayWrite, "write permission on")) return err;
  if (int err = MntWantWrite(ctx, at)) return err;
  if (i.flags & vfs::kInodeAppend) {
    FailAt(ctx, Stage::kVfs, "{} is append-only", at);
    return EPERM;
  }
  if (int err = GetWriteAccess(ctx, at)) return err;
  if (int err = security::PathTruncate(ctx, at)) return err;
  return DoTruncate(ctx, at, ino, "truncate");
}

template <>
int Do<pathwarden::Chmod>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  PathPos at;
  if (int err = UserPathAt(ctx, LookupFlagsFor(static_cast<uint32_t>(st.flags), true), &at))
    return err;
  return ChmodCommon(ctx, at);
}

template <>
int Do<pathwarden::Fchmod>(OpCtx& ctx) {
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  return ChmodCommon(ctx, f->path);
}

namespace {

// chown(2) and lchown(2): fchownat(), the latter with AT_SYMLINK_NOFOLLOW.
int ChownAt(OpCtx& ctx, bool nofollow) {
  const OpArgs& st = ctx.a;
  uint32_t flags = static_cast<uint32_t>(st.flags);
  if (nofollow) flags |= AT_SYMLINK_NOFOLLOW;
  PathPos at;
  if (int err = UserPathAt(ctx, LookupFlagsFor(flags, true), &at))
    return err;
  if (int err = MntWantWrite(ctx, at)) return err;
  return ChownCommon(ctx, at);
}

}  // namespace

template <>
int Do<pathwarden::Chown>(OpCtx& ctx) {
  return ChownAt(ctx, false);
}

template <>
int Do<pathwarden::Lchown>(OpCtx& ctx) {
  return ChownAt(ctx, true);
}

template <>
int Do<pathwarden::Fchown>(OpCtx& ctx) {
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  if (int err = MntWantWrite(ctx, f->path)) return err;
  return ChownCommon(ctx, f->path);
}

template <>
int Do<pathwarden::Utimensat>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  if (BothOmitted(ctx)) return 0;
  PathPos at;
  if (int err = UserPathAt(ctx, LookupFlagsFor(static_cast<uint32_t>(st.flags), true), &at))
    return err;
  return Utimes(ctx, at);
}

template <>
int Do<pathwarden::Futimens>(OpCtx& ctx) {
  if (BothOmitted(ctx)) return 0;
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  return Utimes(ctx, f->path);
}

// The largest file content the model holds: a fallocate that would make
// a file larger is outside it (the content is kept as a string).
constexpr uint64_t kModelMaxFileSize = uint64_t{64} << 20;

template <>
int Do<pathwarden::Fallocate>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const int64_t offset = static_cast<int64_t>(st.offset), len = static_cast<int64_t>(st.len);
  const uint32_t mode = st.mode;
  constexpr uint32_t kKeepSize = 0x01, kPunchHole = 0x02, kCollapse = 0x08, kZero = 0x10,
                     kInsert = 0x20, kUnshare = 0x40, kWriteZeroes = 0x80;
  constexpr uint32_t kModeMask = kPunchHole | kCollapse | kZero | kInsert | kUnshare | kWriteZeroes;
  // ksys_fallocate(): the fd first.
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  if (offset < 0 || len <= 0) {
    ctx.Fail(Stage::kArgs, "a negative offset or a length that is not positive");
    return EINVAL;
  }
  auto unsupported = [&](const char* why) {
    ctx.Fail(Stage::kArgs, why);
    return EOPNOTSUPP;
  };
  if (mode & ~(kModeMask | kKeepSize)) return unsupported("unknown fallocate mode bits");
  switch (mode & kModeMask) {
    case 0:
    case kUnshare:
    case kZero: break;
    case kPunchHole:
      if (!(mode & kKeepSize)) return unsupported("FALLOC_FL_PUNCH_HOLE needs FALLOC_FL_KEEP_SIZE");
      break;
    case kCollapse:
    case kInsert:
    case kWriteZeroes:
      if (mode & kKeepSize) return unsupported("this fallocate mode takes no FALLOC_FL_KEEP_SIZE");
      break;
    default: return unsupported("fallocate modes are exclusive");
  }
  if (!(f->f_mode & kFmodeWrite)) {
    ctx.Fail(Stage::kFd, [&] { return fmt::format("{} is not open for writing", ctx.FdText(st.fd)); });
    return EBADF;
  }
  const InodeId ino = f->inode;
  const vfs::Inode& i = ctx.w.inode(ino);
  if ((mode & ~kKeepSize) && (i.flags & vfs::kInodeAppend)) {
    FailAt(ctx, Stage::kVfs, "{} is append-only: only plain allocation", f->path);
    return EPERM;
  }
  if (i.flags & vfs::kInodeImmutable) {
    FailAt(ctx, Stage::kVfs, "{} is immutable", f->path);
    return EPERM;
  }
  if (int err = SizeMayChange(ctx, f->path, ino, "fallocate")) return err;
  if (S_ISFIFO(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is a fifo", f->path);
    return ESPIPE;
  }
  if (S_ISDIR(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is a directory", f->path);
    return EISDIR;
  }
  if (!S_ISREG(i.mode) && !S_ISBLK(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is neither a file nor a block device", f->path);
    return ENODEV;
  }
  if (len > INT64_MAX - offset) {
    ctx.Fail(Stage::kArgs, "offset + length is past the largest file size");
    return EFBIG;
  }
  if (S_ISBLK(i.mode)) {
    // blkdev_fallocate() of a device the model does not have.
    return vfs::Unknown("fallocate on a block device: the device decides");
  }
  // shmem_fallocate(): only FALLOC_FL_KEEP_SIZE and FALLOC_FL_PUNCH_HOLE.
  if (mode & ~(kKeepSize | kPunchHole)) return unsupported("tmpfs allocates and punches holes only");
  const uint64_t end = static_cast<uint64_t>(offset) + static_cast<uint64_t>(len);
  const uint64_t size = ctx.w.str(i.data).size();
  if (!(mode & kKeepSize) && end > size && end > kModelMaxFileSize)
    return vfs::Unknown("a file larger than the model holds (64 MiB)");
  ctx.Ok(Stage::kFd, [&] { return fmt::format("{} is open for writing", ctx.FdText(st.fd)); });
  if (!ctx.apply) return 0;
  std::string content(ctx.w.str(i.data));
  if (mode & kPunchHole) {
    if (static_cast<uint64_t>(offset) < size)
      std::fill(content.begin() + offset, content.begin() + static_cast<int64_t>(std::min(end, size)), '\0');
  } else if (!(mode & kKeepSize) && end > size) {
    content.resize(end, '\0');
  }
  if (content != ctx.w.str(i.data)) ctx.w.SetData(ino, ctx.w.Intern(content));
  // file_modified(): setuid and setgid as a write drops them, and a file
  // capability.
  KillPriv(ctx, ino);
  const uint32_t m = perm::KillSuidMode(ctx.cred(), i.mode, perm::Ids(i));
  if (m != i.mode) SetMode(ctx, ino, m);
  return 0;
}

}  // namespace pathwarden::ops
