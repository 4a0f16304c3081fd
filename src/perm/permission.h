// Unix permission checks: mode bits, POSIX ACLs and capabilities.
// Linux: fs/namei.c generic_permission(), acl_permission_check(),
// inode_permission(), sb_permission(); fs/posix_acl.c posix_acl_permission()

#ifndef PATHWARDEN_SRC_PERM_PERMISSION_H_
#define PATHWARDEN_SRC_PERM_PERMISSION_H_

#include <cstdint>

#include "pathwarden/cred.h"
#include "src/perm/setid.h"
#include "src/vfs/world.h"

namespace pathwarden::perm {

// MAY_* bits (include/linux/fs.h). Only the low three reach DAC.
inline constexpr uint32_t kMayExec = 0x1;
inline constexpr uint32_t kMayWrite = 0x2;
inline constexpr uint32_t kMayRead = 0x4;
inline constexpr uint32_t kMayAppend = 0x8;
inline constexpr uint32_t kMayAccess = 0x10;
inline constexpr uint32_t kMayOpen = 0x20;
inline constexpr uint32_t kMayChdir = 0x40;

// PermCheck
//
// What decided a permission check, so a reason can name it.
struct PermCheck {
  enum class Via : uint8_t {
    kOwner,          // the owner class bits (owner never uses the ACL)
    kGroup,          // the group class bits (fsgid or a supplementary group)
    kOther,          // the other class bits
    kAclUser,        // a named user entry, limited by the mask
    kAclGroup,       // the owning group or named group entries (masked)
    kAclOther,       // the ACL's other entry
    kAllHave,        // every class has the bits and there is no ACL
    kCapOverride,    // CAP_DAC_OVERRIDE
    kCapReadSearch,  // CAP_DAC_READ_SEARCH
    kReadonlySb,     // EROFS: read-only filesystem
    kImmutable,      // EPERM: immutable inode
    kUnmappedId,     // EACCES: a write where an idmapped mount maps the
                     // owner or group nowhere (HAS_UNMAPPED_ID())
    kReadonlySubvol, // EROFS: a read-only btrfs subvolume or snapshot
                     // (btrfs_permission())
    kFuseGate,       // EACCES: a FUSE mount without allow_other admits
                     // only its mounter's ids (fuse_allow_current_process())
    kProcSys,        // a sysctl's mode, by euid and egid (proc_sys_permission());
                     // entry_id: the class read (0 owner, 1 group, 2 other),
                     // 3 a file asked to execute
    kInternal,       // the check failed closed (internal::FailClosed()):
                     // nothing, no capability either, overrides it
    kUnknown,        // vfs::kErrUnknown: its filesystem decides, or the
                     // backend could not see it; neither granted nor refused
  };
  int err = 0;
  Via via = Via::kOwner;
  uint8_t want = 0;  // rwx requested
  uint8_t bits = 0;  // rwx of the class or entry that decided
  uint8_t mask = 7;  // the ACL mask applied (kAclUser/kAclGroup)
  uint32_t entry_id = 0;      // named entry qualifier
  bool exec_lacks_x = false;  // CAP_DAC_OVERRIDE refused exec: no x bit
};

// FuseAllows()
//
// fuse_allow_current_process() for a FUSE superblock's `gate`
// (World::sb_fuse()): 0
// with allow_other, or when `cred` is its mounter (every uid and gid but
// the fs ones the mount's) or, where the fuse module allows it, holds
// CAP_SYS_ADMIN; EACCES otherwise; vfs::kErrUnknown where that allowance
// could not be read; EACCES failing closed for no gate (null). Sets
// tls_fuse_met.
int FuseAllows(const vfs::SbFuse* gate, const Cred& cred);

// tls_fuse_met
//
// Set on this thread when a check met a FUSE inode (FuseAllows()): what
// the kernel lets through there goes to the server, which answers last.
// Model::Evaluate() clears it before, and turns an allowed answer into
// unknown after, on a model with FUSE mounts (Model::Impl::kFuse).
inline thread_local bool tls_fuse_met = false;

// GenericPermission()
//
// Grants `mask` (MAY_*) on `ino` from its owner, ACL or group/other bits,
// then CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE. Errors: EACCES only.
// Linux: fs/namei.c generic_permission()
PermCheck GenericPermission(const vfs::World& w, const Cred& cred,
                            vfs::InodeId ino, uint32_t mask);

// InodePermission()
//
// As GenericPermission(), after the checks that come first for writes:
// EROFS on a read-only superblock (regular files, directories, symlinks
// only) and EPERM on an immutable inode.
// Linux: fs/namei.c inode_permission(), sb_permission()
PermCheck InodePermission(const vfs::World& w, const Cred& cred,
                          vfs::InodeId ino, uint32_t mask);

// CapableWrt()
//
// Cred::CapableWrtInode() over `i`: its ids are read only when the
// capability is held.
inline bool CapableWrt(const Cred& cred, int cap, const vfs::Inode& i) {
  return cred.Capable(cap) && cred.CapableWrtInode(cap, i.uid, i.gid);
}

// OwnerOrCapable()
//
// The caller's fsuid owns the inode, or it has CAP_FOWNER and the owner
// maps into its user namespace (only the owner: unlike
// capable_wrt_inode_uidgid(), the group is not asked).
// Linux: fs/inode.c inode_owner_or_capable()
inline bool OwnerOrCapable(const vfs::World& w, const Cred& cred,
                           vfs::InodeId ino) {
  const vfs::Inode& i = w.inode(ino);
  if (i.uid == cred.fsuid) return true;
  return cred.Capable(kCapFowner) && i.uid != vfs::kInvalidId &&
         (cred.InInitialUserNs() || cred.userns->ShownUidMaps(i.uid));
}

// Ids()
//
// The owner and group of an inode, for the rules in setid.h.
inline InodeIds Ids(const vfs::Inode& i) { return {i.uid, i.gid}; }

// OverflowUidAmbiguous()
//
// Whether `uid`, read from the host by a reader inside a user namespace,
// is the overflow uid, which stands for every owner that does not map
// into it: two owners shown with it may be different users, and one may
// be `cred`'s own. The checks that compare owners with each other or with
// the fsuid (protected_symlinks, protected_regular, protected_fifos) are
// then unknown. UserNamespace::overflow_shown.
inline bool OverflowUidAmbiguous(const Cred& cred, uint32_t uid) {
  return cred.userns != nullptr && cred.userns->overflow_shown && uid == cred.userns->overflow_uid;
}

}  // namespace pathwarden::perm

#endif  // PATHWARDEN_SRC_PERM_PERMISSION_H_
