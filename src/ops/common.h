// Checks shared by several system calls: write access to a mount, the
// may_create/may_delete rules, creating an inode, the sticky and
// protected_* rules.
// Linux: fs/namei.c may_create(), may_delete(), check_sticky(),
// filename_create(), lookup_one_qstr_excl(); fs/inode.c inode_init_owner(),
// mode_strip_sgid(); fs/posix_acl.c posix_acl_create()

#ifndef PATHWARDEN_SRC_OPS_COMMON_H_
#define PATHWARDEN_SRC_OPS_COMMON_H_

#include <fcntl.h>

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "src/task/task.h"
#include "src/perm/permission.h"

namespace pathwarden::ops {

// FailAt() / OkAt()
//
// ctx.Fail() / ctx.Ok() with `text`, whose one "{}" is the path at `at`
// (ctx.PathOf()); formatted only when the operation explains.
inline void FailAt(const OpCtx& ctx, Stage s, fmt::format_string<std::string> text,
                   vfs::PathPos at) {
  if (ctx.explain()) ctx.Fail(s, fmt::format(text, ctx.PathOf(at)));
}
inline void OkAt(const OpCtx& ctx, Stage s, fmt::format_string<std::string> text,
                 vfs::PathPos at) {
  if (ctx.explain()) ctx.Ok(s, fmt::format(text, ctx.PathOf(at)));
}

// MntWantWrite()
//
// EROFS when the mount or its superblock is read-only (mnt_want_write()).
int MntWantWrite(const OpCtx& ctx, vfs::PathPos at);

// GetWriteAccess()
//
// ETXTBSY when a process runs the file at `at` (get_write_access(): its
// i_writecount held negative by exec; vfs::kInodeDenyWrite), unknown when
// one might (kInodeDenyWriteUnknown).
int GetWriteAccess(const OpCtx& ctx, vfs::PathPos at);

// FsIdsMap()
//
// fsuidgid_has_mapping(): creating in directory `dir` through an
// idmapped mount needs the caller's fsuid and fsgid among the ids its
// idmapping gives (the new inode's owner is them mapped back), or
// EOVERFLOW; nothing to check on any other mount.
int FsIdsMap(const OpCtx& ctx, vfs::PathPos dir);

// IdmapUnmapped()
//
// EOVERFLOW where the object at `at` is reached through an idmapped mount
// that maps its owner (unless the call sets a new one, `uid_set`) or its
// group (`gid_set`) nowhere (vfs::kInvalidId): the kernel writes no inode
// back with an invalid id (notify_change(), may_delete(), may_linkat()).
// `what`: what cannot happen, for the reason.
int IdmapUnmapped(const OpCtx& ctx, vfs::PathPos at, bool uid_set, bool gid_set,
                  std::string_view what);

// SizeMayChange()
//
// notify_change()'s refusals of a new size, after the LSM's truncate
// check: ETXTBSY when inode `ino` (at `at`) is an active swap file
// (vfs::kInodeSwapfile), unknown when it may be one
// (kInodeSwapfileUnknown) or is an fs-verity file (kInodeVerity, its
// filesystem's EPERM). `what`: the call, for the reason.
int SizeMayChange(const OpCtx& ctx, vfs::PathPos at, vfs::InodeId ino, std::string_view what);

// VerityWriteUnknown()
//
// For a write (`what`) to an fs-verity file: the reason, as
// vfs::Unknown(), that its filesystem's refusal is not modelled.
int VerityWriteUnknown(const OpCtx& ctx, vfs::PathPos at, std::string_view what);

// ProcLookupMissing()
//
// For a name `name` absent from procfs directory `dir`: ENOENT, as
// procfs's ->lookup answers it (proc_lookup_de(), proc_sys_lookup()),
// before creating calls get to their permission checks; 0 elsewhere
// (kErrNeedFill while the name is not filled).
int ProcLookupMissing(const OpCtx& ctx, vfs::PathPos dir, std::string_view name);

// ProcDirOps()
//
// For a procfs directory `dir`, where the permission checks let a name
// be removed: unknown (its missing inode operation answers, by the
// call); 0 elsewhere.
int ProcDirOps(const OpCtx& ctx, vfs::PathPos dir);

// SubvolReadonly()
//
// EROFS, explained, when the inode at `at` is in a read-only btrfs
// subvolume, whose filesystem refuses `what` ("its attributes change")
// whatever the inode's type (btrfs_setattr(), btrfs_xattr_handler_set()):
// 0 otherwise.
int SubvolReadonly(const OpCtx& ctx, vfs::PathPos at, std::string_view what);

// FuseGate()
//
// For an inode behind a FUSE mount's gate (vfs::kInodeFuse), what its
// getattr, setattr and listxattr ask first (fuse_allow_current_process()):
// EACCES, explained with `what` ("stat"), when the caller is not the
// mounter; 0 otherwise (vfs::kErrUnknown where that cannot be known).
int FuseGateSlow(const OpCtx& ctx, vfs::PathPos at, std::string_view what);
inline int FuseGate(const OpCtx& ctx, vfs::PathPos at, std::string_view what) {
  if (!ctx.w.any_fuse()) [[likely]]
    return 0;
  return FuseGateSlow(ctx, at, what);
}

// CrossSubvol()
//
// EXDEV, explained with `why`, when the inode at `from` and directory
// `dir` are in different btrfs subvolumes: 0 when they are one
// subvolume's, or on a filesystem without subvolumes.
int CrossSubvol(const OpCtx& ctx, vfs::PathPos from, vfs::PathPos dir, std::string_view why);

// SwapfileUnknown()
//
// The reason, as vfs::Unknown(), that whether the file at `at` is an
// active swap file is not known.
int SwapfileUnknown(const OpCtx& ctx, vfs::PathPos at);

// DacCheck()
//
// inode_permission() on the inode at `at`, explaining a failure as
// "<what> <path> (...)" under Stage::kDac (or kMount for EROFS). An empty
// `what` says what the mask asks ("read and write permission on",
// "permission to open"), built only when explaining.
int DacCheck(const OpCtx& ctx, vfs::PathPos at, uint32_t mask, std::string_view what = {});

// FdGet()
//
// fdget() of the f* calls: `fd`'s open file when it is open and not
// O_PATH, else nullptr with the reason (the call's EBADF).
OpenFile* FdGet(const OpCtx& ctx, Fd fd);

// UserPathAt()
//
// The request's path looked up with `lookup` flags from where it starts:
// the cwd, the root, or the request's dirfd (user_path_at()).
inline int UserPathAt(OpCtx& ctx, uint32_t lookup, vfs::PathPos* at) {
  return walk::FilenameLookup(ctx.env, ctx.StartFor(ctx.a.path), ctx.a.path, lookup, at);
}

// LookupFlagsFor()
//
// The walk's flags for an *at() call's AT_SYMLINK_NOFOLLOW and
// AT_EMPTY_PATH; `follow_default` when the call follows without them.
inline uint32_t LookupFlagsFor(uint32_t at_flags, bool follow_default) {
  uint32_t l = 0;
  if (follow_default && !(at_flags & AT_SYMLINK_NOFOLLOW)) l |= walk::kLookupFollow;
  if (at_flags & AT_EMPTY_PATH) l |= walk::kLookupEmpty;
  return l;
}

// MayCreate()
//
// may_create() of a name known to be free (the callers' lookups give
// EEXIST themselves): ENOENT in a removed directory, then write and search
// permission on the directory.
int MayCreate(const OpCtx& ctx, vfs::PathPos dir);

// MayDelete()
//
// may_delete(): ENOENT, write and search on the directory, append-only
// directory, the sticky rule (EPERM), immutable or append-only victim,
// the type (ENOTDIR/EBUSY/EISDIR), a removed directory.
int MayDelete(const OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim,
              bool isdir);

// CheckSticky()
//
// __check_sticky(): true when the sticky rule refuses the caller.
bool CheckSticky(const OpCtx& ctx, vfs::InodeId dir, vfs::InodeId victim);

// IsLocalMountpoint()
//
// Something is mounted on `d` (is_local_mountpoint()).
bool IsLocalMountpoint(const vfs::World& w, vfs::DentryId d);

// Created
//
// The result of FilenameCreate(): the parent, the new name, and whether a
// trailing slash followed it.
// LookupOneQstr()
//
// lookup_one_qstr_excl(): the hashed child named pr.last into *out, or
// kNone. A miss in a removed directory is ENOENT, and a name over NAME_MAX
// ENAMETOOLONG (the filesystem's ->lookup()); a plain miss is 0 with *out
// kNone, for the caller to judge. FailMissing() explains and returns the
// ENOENT of a child that must exist.
int LookupOneQstr(const OpCtx& ctx, const walk::ParentResult& pr, vfs::DentryId* out);
int FailMissing(const OpCtx& ctx, const walk::ParentResult& pr);

struct Created {
  vfs::PathPos parent;
  std::string_view name;
  bool trailing_slash = false;
};

// FilenameCreate()
//
// filename_create(): walk to the parent, EEXIST for ".", ".." or "/",
// the name's own lookup (ENOENT in a removed directory, ENAMETOOLONG,
// EEXIST, ENOENT for a trailing slash on a missing non-directory), and
// only then EROFS.
int FilenameCreate(const OpCtx& ctx, std::string_view name,
                   const walk::Start& start, bool want_dir, Created* out);

// NewInodeAttrs, NewAttrs()
//
// The mode and owner a new inode gets in `dir` for a requested `mode`
// (type included): setgid stripping, umask or the parent's default ACL,
// the setgid directory's group. `acl`/`default_acl` receive the ACLs the
// new inode starts with (kNone when none).
struct NewInodeAttrs {
  uint32_t mode = 0;
  uint32_t uid = 0, gid = 0;
  vfs::AclId acl = vfs::kNone;
  vfs::AclId default_acl = vfs::kNone;
};
NewInodeAttrs NewAttrs(OpCtx& ctx, vfs::InodeId dir, uint32_t mode);

// CreateObject()
//
// Creates and links an inode named `name` in `dir` (when ctx.apply).
// Returns the new dentry (kNone in a dry run).
vfs::DentryId CreateObject(OpCtx& ctx, vfs::PathPos dir, std::string_view name,
                           uint32_t mode, uint32_t rdev,
                           std::string_view content = {});

// DropLink()
//
// Removes one name of an inode: unhash the dentry, drop nlink (a
// directory dies: nlink 0, IS_DEADDIR, parent loses its ".." link).
void DropLink(OpCtx& ctx, vfs::DentryId d);

// DoTruncate()
//
// do_truncate() to size 0 of inode `ino` at `at`, once the call's own
// checks passed (`what`: truncate, O_TRUNC, ftruncate): notify_change()'s
// refusals of a new size (SizeMayChange()), then, when applying, the
// content goes and setuid/setgid as perm::KillSuidMode() says.
int DoTruncate(OpCtx& ctx, vfs::PathPos at, vfs::InodeId ino, std::string_view what);

// KillPriv()
//
// cap_inode_killpriv(), when a write, truncation or chown drops
// privileges: a non-empty security.capability goes.
void KillPriv(OpCtx& ctx, vfs::InodeId ino);

// SetMode()
//
// Changes the mode (keeping the type) and updates an access ACL to match
// (posix_acl_chmod()); the one road to World::SetModeAndAcl() for ops.
void SetMode(OpCtx& ctx, vfs::InodeId ino, uint32_t mode);

}  // namespace pathwarden::ops

#endif  // PATHWARDEN_SRC_OPS_COMMON_H_
