// Checks shared by several system calls.
// Linux: fs/namei.c @6.18 may_create(), may_delete(), __check_sticky(),
// filename_create(), lookup_one_qstr_excl(), vfs_prepare_mode();
// fs/inode.c inode_init_owner(), mode_strip_sgid(); fs/attr.c
// setattr_should_drop_suidgid(); fs/posix_acl.c posix_acl_create(),
// posix_acl_chmod()

#include "src/ops/common.h"
#include "src/vfs/xattr.h"
#include "src/vfs/backend.h"

#include <fcntl.h>

#include <fmt/format.h>

namespace pathwarden::ops {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

int MntWantWrite(const OpCtx& ctx, PathPos at) {
  const vfs::Mount& m = ctx.w.mount(at.mnt);
  if (m.flags & vfs::kMntReadonly) {
    FailAt(ctx, Stage::kMount, "{} is on a read-only mount", at);
    return EROFS;
  }
  if (ctx.w.sb(m.sb).flags & vfs::kSbReadonly) {
    FailAt(ctx, Stage::kMount, "{} is on a read-only filesystem", at);
    return EROFS;
  }
  return 0;
}

int GetWriteAccess(const OpCtx& ctx, PathPos at) {
  const uint32_t flags = ctx.w.inode_at(at.dentry).flags;
  if (flags & vfs::kInodeDenyWrite) {
    FailAt(ctx, Stage::kVfs, "{} is a program a process is running: it cannot be written", at);
    return ETXTBSY;
  }
  if (flags & vfs::kInodeDenyWriteUnknown)
    return vfs::Unknown(fmt::format(
        "whether a process is running {} is not known: some process's program cannot be read "
        "from /proc (another user's, or one a security module hides), and a running program "
        "cannot be written (ETXTBSY)",
        ctx.PathOf(at)));
  return 0;
}

int SwapfileUnknown(const OpCtx& ctx, PathPos at) {
  return vfs::Unknown(fmt::format(
      "whether {} is an active swap file is not known: a swap file /proc/swaps lists could not "
      "be found",
      ctx.PathOf(at)));
}

int SizeMayChange(const OpCtx& ctx, PathPos at, InodeId ino, std::string_view what) {
  if (int err = IdmapUnmapped(ctx, at, false, false, "its attributes cannot change")) return err;
  const uint32_t flags = ctx.w.inode(ino).flags;
  if (flags & vfs::kInodeSwapfile) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is an active swap file: {} cannot change its size",
                         ctx.PathOf(at), what);
    });
    return ETXTBSY;
  }
  if (flags & vfs::kInodeSwapfileUnknown) return SwapfileUnknown(ctx, at);
  if (flags & vfs::kInodeVerity) return VerityWriteUnknown(ctx, at, what);
  return 0;
}

int SubvolReadonly(const OpCtx& ctx, PathPos at, std::string_view what) {
  if (!(ctx.w.inode_at(at.dentry).flags & vfs::kInodeSubvolReadonly)) [[likely]]
    return 0;
  ctx.Fail(Stage::kVfs, [&] {
    return fmt::format("{} is in a read-only btrfs subvolume or snapshot: {} refused", ctx.PathOf(at),
                       what);
  });
  return EROFS;
}

int FuseGateSlow(const OpCtx& ctx, PathPos at, std::string_view what) {
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  if (!(i.flags & vfs::kInodeFuse)) [[likely]]
    return 0;
  const vfs::SbFuse* gate = ctx.w.sb_fuse(i.sb);
  const int err = perm::FuseAllows(gate, ctx.cred());
  if (err == EACCES)
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} of {}: {}", what, ctx.PathOf(at), DescribeFuseGate(gate));
    });
  return err;
}

int CrossSubvol(const OpCtx& ctx, PathPos from, PathPos dir, std::string_view why) {
  const uint32_t a = vfs::SubvolOf(ctx.w.inode_at(from.dentry).flags);
  const uint32_t b = vfs::SubvolOf(ctx.w.inode_at(dir.dentry).flags);
  if (a == b) [[likely]]
    return 0;
  // On btrfs, slot 0 is a subvolume not read (its inode opaque).
  if (a == 0 || b == 0)
    return vfs::Unknown(fmt::format("which btrfs subvolume {} is in is not known",
                                    ctx.PathOf(a == 0 ? from : dir)));
  ctx.Fail(Stage::kVfs, [&] {
    return fmt::format("{} and {} are in different btrfs subvolumes: {}", ctx.PathOf(from),
                       ctx.PathOf(dir), why);
  });
  return EXDEV;
}

int VerityWriteUnknown(const OpCtx& ctx, PathPos at, std::string_view what) {
  return vfs::Unknown(fmt::format(
      "{} is an fs-verity file: its filesystem refuses {} (EPERM, after every check above), "
      "which the kernel this was built against cannot show",
      ctx.PathOf(at), what));
}

int DacCheck(const OpCtx& ctx, PathPos at, uint32_t mask, std::string_view what) {
  const InodeId ino = ctx.w.inode_of(at.dentry);
  perm::PermCheck pc = perm::InodePermission(ctx.w, ctx.cred(), ino, mask);
  if (ctx.explain()) {
    std::string asked(what);
    if (asked.empty())
      asked = (mask & 7) == 0 && (mask & perm::kMayOpen)
                  ? "permission to open"
                  : fmt::format("{} permission on", WantString(mask & 7));
    std::string s = fmt::format("{} {}", asked,
                                DescribeCheck(ctx.w, ctx.cred(), at, ctx.p.root, pc));
    const Stage st = pc.via == perm::PermCheck::Via::kReadonlySb       ? Stage::kMount
                     : pc.via == perm::PermCheck::Via::kReadonlySubvol ? Stage::kVfs
                                                                       : Stage::kDac;
    ctx.ex->Dac(VerdictOf(ctx.w, at, ctx.PathOf(at), pc));
    if (pc.err) {
      ctx.Fail(st, [&] { return fmt::format("no {}", s); });
    } else {
      ctx.Ok(st, [&] { return s; });
    }
  }
  return pc.err;
}

bool CheckSticky(const OpCtx& ctx, InodeId dir, InodeId victim) {
  const vfs::Inode& d = ctx.w.inode(dir);
  if (!(d.mode & S_ISVTX)) return false;
  const Cred& c = ctx.cred();
  if (ctx.w.inode(victim).uid == c.fsuid) return false;
  if (d.uid == c.fsuid) return false;
  return !perm::CapableWrt(c, kCapFowner, ctx.w.inode(victim));
}

bool IsLocalMountpoint(const vfs::World& w, DentryId d) {
  return w.dentry(d).mounts() != 0;
}

int IdmapUnmapped(const OpCtx& ctx, PathPos at, bool uid_set, bool gid_set,
                  std::string_view what) {
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  if (!(ctx.w.sb(i.sb).flags & vfs::kSbIdmapped)) return 0;
  const bool uid = !uid_set && i.uid == vfs::kInvalidId;
  const bool gid = !gid_set && i.gid == vfs::kInvalidId;
  if (!uid && !gid) return 0;
  ctx.Fail(Stage::kVfs, [&] {
    return fmt::format("the idmapped mount maps the {} of {} nowhere: {}",
                       uid ? "owner" : "group", ctx.PathOf(at), what);
  });
  return EOVERFLOW;
}

int FsIdsMap(const OpCtx& ctx, PathPos dir) {
  const vfs::SbId sb = ctx.w.inode_at(dir.dentry).sb;
  if (!(ctx.w.sb(sb).flags & vfs::kSbIdmapped)) return 0;
  const vfs::SbIdmap* m = ctx.w.sb_idmap(sb);
  const Cred& c = ctx.cred();
  const bool uid = !vfs::SbIdmap::GivesUid(m, c.fsuid);
  if (!uid && vfs::SbIdmap::GivesGid(m, c.fsgid)) return 0;
  ctx.Fail(Stage::kVfs, [&] {
    return fmt::format("the idmapped mount of {} maps {} {} to no id of its filesystem: a new "
                       "file could not be owned",
                       ctx.PathOf(dir), uid ? "fsuid" : "fsgid", uid ? c.fsuid : c.fsgid);
  });
  return EOVERFLOW;
}

int MayCreate(const OpCtx& ctx, PathPos dir) {
  if (ctx.w.inode_at(dir.dentry).flags & vfs::kInodeDead) {
    FailAt(ctx, Stage::kVfs, "{} was removed", dir);
    return ENOENT;
  }
  if (int err = FsIdsMap(ctx, dir)) return err;
  // (procfs: a name to create is missing, and its lookup refused it
  // before, ProcLookupMissing().)
  return DacCheck(ctx, dir, perm::kMayWrite | perm::kMayExec,
                  "write and search permission on");
}

int ProcLookupMissing(const OpCtx& ctx, PathPos dir, std::string_view name) {
  if (!(ctx.w.sb(ctx.w.inode_at(dir.dentry).sb).flags & vfs::kSbProc)) [[likely]]
    return 0;
  if (name.size() <= walk::kNameMax) {
    if (int err = vfs::Absent(ctx.w, dir, name)) return err;
  }
  ctx.Fail(Stage::kWalk, [&] {
    const std::string d = ctx.PathOf(dir);
    return fmt::format("{}{}{} does not exist, and procfs's lookup refuses a missing name "
                       "(ENOENT) before any name could be made",
                       d, d == "/" ? "" : "/", name);
  });
  return ENOENT;
}

int ProcDirOps(const OpCtx& ctx, PathPos dir) {
  if (!(ctx.w.sb(ctx.w.inode_at(dir.dentry).sb).flags & vfs::kSbProc)) [[likely]]
    return 0;
  return vfs::Unknown(fmt::format(
      "{} is a procfs directory, which creates and removes nothing itself (no ->create, "
      "->mkdir, ->unlink, ...: EACCES or EPERM by the call, after what is above); not modelled",
      ctx.PathOf(dir)));
}

int MayDelete(const OpCtx& ctx, PathPos dir, DentryId victim, bool isdir) {
  if (victim == vfs::kNone) return ENOENT;
  const InodeId dino = ctx.w.inode_of(dir.dentry);
  const InodeId vino = ctx.w.inode_of(victim);
  // "Inode writeback is not safe when the uid or gid are invalid."
  if (int err = IdmapUnmapped(ctx, {dir.mnt, victim}, false, false, "it cannot be removed"))
    return err;
  if (int err = DacCheck(ctx, dir, perm::kMayWrite | perm::kMayExec,
                         "write and search permission on"))
    return err;
  if (int err = ProcDirOps(ctx, dir)) return err;
  const vfs::Inode& d = ctx.w.inode(dino);
  const vfs::Inode& v = ctx.w.inode(vino);
  const PathPos vpos{dir.mnt, victim};
  if (d.flags & vfs::kInodeAppend) {
    FailAt(ctx, Stage::kVfs, "{} is append-only", dir);
    return EPERM;
  }
  if (CheckSticky(ctx, dino, vino)) {
    ctx.Fail(Stage::kSticky, [&] {
      return fmt::format(
          "{} is sticky ({}) and uid {} owns neither it nor {} "
          "(owner {}), without CAP_FOWNER",
          ctx.PathOf(dir), DescribeInode(ctx.w, dino), ctx.cred().fsuid, ctx.PathOf(vpos),
          v.uid.get());
    });
    return EPERM;
  }
  if (v.flags & (vfs::kInodeAppend | vfs::kInodeImmutable | vfs::kInodeSwapfile)) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is {}", ctx.PathOf(vpos),
                         (v.flags & vfs::kInodeImmutable) ? "immutable"
                         : (v.flags & vfs::kInodeAppend)  ? "append-only"
                                                          : "an active swap file");
    });
    return EPERM;
  }
  if (v.flags & vfs::kInodeSwapfileUnknown) return SwapfileUnknown(ctx, vpos);
  const bool vdir = S_ISDIR(v.mode);
  if (isdir) {
    if (!vdir) {
      FailAt(ctx, Stage::kVfs, "{} is not a directory", vpos);
      return ENOTDIR;
    }
    if (ctx.w.dentry(victim).parent == victim) {
      FailAt(ctx, Stage::kVfs, "{} is the root of a filesystem", vpos);
      return EBUSY;
    }
  } else if (vdir) {
    FailAt(ctx, Stage::kVfs, "{} is a directory", vpos);
    return EISDIR;
  }
  if (d.flags & vfs::kInodeDead) {
    FailAt(ctx, Stage::kVfs, "{} was removed", dir);
    return ENOENT;
  }
  return 0;
}

int LookupOneQstr(const OpCtx& ctx, const walk::ParentResult& pr, DentryId* out) {
  *out = ctx.w.Lookup(pr.parent.dentry, pr.last, pr.last_hash, pr.last_head);
  if (*out != vfs::kNone) return 0;
  if (ctx.w.inode_at(pr.parent.dentry).flags & vfs::kInodeDead) {
    FailAt(ctx, Stage::kVfs, "{} was removed", pr.parent);
    return ENOENT;
  }
  if (int err = ProcLookupMissing(ctx, pr.parent, pr.last)) return err;
  if (pr.last.size() > walk::kNameMax) {
    ctx.Fail(Stage::kWalk, [&] {
      return fmt::format("a component of {} bytes exceeds NAME_MAX (255)", pr.last.size());
    });
    return ENAMETOOLONG;
  }
  return vfs::Absent(ctx.w, pr.parent, pr.last);
}

int FailMissing(const OpCtx& ctx, const walk::ParentResult& pr) {
  ctx.Fail(Stage::kWalk, [&] {
    const std::string dir = ctx.PathOf(pr.parent);
    return fmt::format("{}{}{} does not exist", dir, dir == "/" ? "" : "/", pr.last);
  });
  return ENOENT;
}

int FilenameCreate(const OpCtx& ctx, std::string_view name,
                   const walk::Start& start, bool want_dir, Created* out) {
  walk::ParentResult pr;
  if (int err = walk::FilenameParentat(ctx.env, start, name, 0, &pr)) return err;
  if (pr.type != walk::LastType::kNorm) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("\"{}\" names {} that always exists", name,
                         pr.type == walk::LastType::kRoot ? "a root" : "a directory");
    });
    return EEXIST;
  }
  const int err2 = MntWantWrite(ctx, pr.parent);
  DentryId existing;
  if (int err = LookupOneQstr(ctx, pr, &existing)) return err;
  if (existing == vfs::kNone) {
    if (pr.trailing_slash && !want_dir) {
      ctx.Fail(Stage::kVfs, [&] {
        return fmt::format(
            "a trailing slash asks for a directory, but only "
            "mkdir creates one ({} does not exist)",
            pr.last);
      });
      return ENOENT;
    }
  } else {
    FailAt(ctx, Stage::kVfs, "{} exists", {pr.parent.mnt, existing});
    return EEXIST;
  }
  // EROFS only now: the name's own errors come first (MntWantWrite() has
  // explained it, and nothing since has).
  if (err2) return err2;
  out->parent = pr.parent;
  out->name = pr.last;
  out->trailing_slash = pr.trailing_slash;
  return 0;
}

NewInodeAttrs NewAttrs(OpCtx& ctx, InodeId dir, uint32_t mode) {
  const vfs::Inode& d = ctx.w.inode(dir);
  const Cred& c = ctx.cred();
  NewInodeAttrs a;
  const perm::NewOwner owner = perm::InitOwner(c, mode, d.mode, perm::Ids(d));
  a.uid = owner.uid;
  a.gid = owner.gid;
  mode = owner.mode;
  // posix_acl_create(): the parent's default ACL masked by the mode, and
  // no umask; or the umask.
  if (S_ISLNK(mode)) {
    a.mode = mode;
    return a;
  }
  const vfs::AclId def = d.default_acl;
  if (def != vfs::kNone) {
    if (const PosixAcl* dacl = ctx.w.acl(def)) {
      PosixAcl acl = *dacl;
      if (acl.CreateMasq(&mode)) a.acl = ctx.w.InternAcl(acl);
      if (S_ISDIR(mode)) a.default_acl = def;
    }
  } else {
    mode &= ~(c.umask & 0777);
  }
  a.mode = mode;
  return a;
}

DentryId CreateObject(OpCtx& ctx, PathPos dir, std::string_view name,
                      uint32_t mode, uint32_t rdev, std::string_view content) {
  if (!ctx.apply) return vfs::kNone;
  const InodeId dino = ctx.w.inode_of(dir.dentry);
  NewInodeAttrs a = NewAttrs(ctx, dino, mode);
  vfs::World& w = ctx.w;
  InodeId ino = w.NewInode(w.inode(dino).sb, a.mode, a.uid, a.gid, rdev);
  // What its directory's filesystem marks every inode with.
  constexpr uint32_t kInherited = vfs::kInodeSubvolMask | vfs::kInodeFuse;
  if (const uint32_t f = w.inode(dino).flags & kInherited) w.SetFlags(ino, f, 0);
  w.SetModeAndAcl(ino, a.mode, a.acl);
  w.SetDefaultAcl(ino, a.default_acl);
  if (S_ISDIR(a.mode)) {
    w.SetNlink(ino, 2);
    w.SetNlink(dino, w.inode(dino).nlink + 1);
  } else {
    w.SetNlink(ino, 1);
  }
  if (!content.empty()) w.SetData(ino, w.Intern(content));
  return w.Link(dir.dentry, name, ino);
}

void DropLink(OpCtx& ctx, DentryId d) {
  vfs::World& w = ctx.w;
  const InodeId ino = w.inode_of(d);
  if (S_ISDIR(w.inode(ino).mode)) {
    w.SetNlink(ino, 0);
    w.SetFlags(ino, vfs::kInodeDead, 0);
    const InodeId parent = w.inode_of(w.dentry(d).parent);
    w.SetNlink(parent, w.inode(parent).nlink - 1);
  } else {
    w.SetNlink(ino, w.inode(ino).nlink - 1);
  }
  w.Unhash(d);
}

void KillPriv(OpCtx& ctx, InodeId ino) {
  const std::string_view set = ctx.w.xattrs(ino);
  auto caps = vfs::FindXattr(set, vfs::kXattrNameCaps);
  if (!caps || caps->empty()) return;
  vfs::XattrMap m = vfs::DecodeXattrs(set);
  m.erase(std::string(vfs::kXattrNameCaps));
  ctx.w.SetXattrs(ino, vfs::EncodeXattrs(m));
}

int DoTruncate(OpCtx& ctx, PathPos at, InodeId ino, std::string_view what) {
  if (int err = SizeMayChange(ctx, at, ino, what)) return err;
  if (!ctx.apply) return 0;
  const vfs::Inode& i = ctx.w.inode(ino);
  ctx.w.SetData(ino, 0);
  KillPriv(ctx, ino);
  const uint32_t m = perm::KillSuidMode(ctx.cred(), i.mode, perm::Ids(i));
  if (m != i.mode) SetMode(ctx, ino, m);
  return 0;
}

void SetMode(OpCtx& ctx, InodeId ino, uint32_t mode) {
  vfs::World& w = ctx.w;
  vfs::AclId acl = w.inode(ino).acl;
  if (acl != vfs::kNone) {
    if (const PosixAcl* a = w.acl(acl)) {
      PosixAcl changed = *a;
      changed.Chmod(mode);
      uint32_t m = mode;
      acl = changed.EquivMode(&m) ? vfs::kNone : w.InternAcl(changed);
    }
  }
  w.SetModeAndAcl(ino, mode, acl);
}

OpenFile* FdGet(const OpCtx& ctx, Fd fd) {
  OpenFile* f = ctx.File(fd);
  if (!f || (f->f_mode & kFmodePath)) {
    ctx.Fail(Stage::kFd, [&] {
      return fmt::format("{} is {}", ctx.FdText(fd), f ? "an O_PATH file" : "not open");
    });
    return nullptr;
  }
  return f;
}

}  // namespace pathwarden::ops
