// Unix permission checks.
// Linux: fs/namei.c acl_permission_check(), generic_permission(),
// inode_permission(); fs/posix_acl.c posix_acl_permission()

#include "src/perm/permission.h"

#include "src/base/check.h"
#include "src/vfs/backend.h"

namespace pathwarden::perm {
namespace {

using Via = PermCheck::Via;

// Linux: fs/posix_acl.c posix_acl_permission(). Entries are in canonical
// order: the owner entry, named users, the owning group, named groups, the
// mask, other.
PermCheck AclPermission(const PosixAcl& acl, const Cred& cred,
                        const vfs::Inode& inode, uint8_t want) {
  PermCheck r;
  r.want = want;
  const auto& e = acl.entries();
  uint8_t mask = 7;
  bool has_mask = false;
  for (const AclEntry& x : e)
    if (x.tag == AclTag::kMask) {
      mask = x.perm;
      has_mask = true;
    }
  auto masked = [&](const AclEntry& x, Via via) {
    r.via = via;
    r.bits = x.perm;
    r.mask = has_mask ? mask : 7;
    r.entry_id = x.id;
    uint8_t eff = has_mask ? (x.perm & mask) : x.perm;
    r.err = (eff & want) == want ? 0 : EACCES;
    return r;
  };
  bool found = false;
  const AclEntry* first_denying_group = nullptr;
  for (const AclEntry& x : e) {
    switch (x.tag) {
      case AclTag::kUserObj:
        // The owner was decided before the ACL is consulted; kept for
        // completeness, as Linux's loop is.
        if (inode.uid == cred.fsuid) {
          r.via = Via::kOwner;
          r.bits = x.perm;
          r.err = (x.perm & want) == want ? 0 : EACCES;
          return r;
        }
        break;
      case AclTag::kUser:
        if (x.id == cred.fsuid) return masked(x, Via::kAclUser);
        break;
      case AclTag::kGroupObj:
      case AclTag::kGroup:
        // Linux: ACL_GROUP_OBJ asks of the inode's group, ACL_GROUP of
        // the entry's.
        if (cred.InGroup(x.tag == AclTag::kGroupObj ? uint32_t{inode.gid} : x.id)) {
          found = true;
          if ((x.perm & want) == want) return masked(x, Via::kAclGroup);
          if (!first_denying_group) first_denying_group = &x;
        }
        break;
      case AclTag::kMask:
        break;
      case AclTag::kOther:
        if (found) {
          // A group-class member is denied even if other would grant.
          r.via = Via::kAclGroup;
          r.bits = first_denying_group->perm;
          r.mask = has_mask ? mask : 7;
          r.entry_id = first_denying_group->id;
          r.err = EACCES;
          return r;
        }
        r.via = Via::kAclOther;
        r.bits = x.perm;
        r.err = (x.perm & want) == want ? 0 : EACCES;
        return r;
    }
  }
  // A valid ACL always has an other entry; fail closed if not.
  r.err = internal::FailClosed("ACL without an other entry");
  r.via = Via::kInternal;
  return r;
}

// Linux: fs/namei.c acl_permission_check().
PermCheck AclPermissionCheck(const vfs::World& w, const Cred& cred,
                             const vfs::Inode& inode, uint32_t mask) {
  const uint32_t mode = inode.mode;
  const uint8_t want = mask & 7;
  const vfs::AclId acl = inode.acl;
  PermCheck r;
  r.want = want;
  // Everybody has the bits and there is no ACL: no owner or group test.
  if (((want * 0111u) & ~mode) == 0 && acl == vfs::kNone) {
    r.via = Via::kAllHave;
    r.bits = want;
    return r;
  }
  if (inode.uid == cred.fsuid) {
    r.via = Via::kOwner;
    r.bits = (mode >> 6) & 7;
    r.err = (want & ~r.bits) ? EACCES : 0;
    return r;
  }
  // The ACL is skipped when the group class bits (the mask) are 000.
  if (acl != vfs::kNone && (mode & 070) != 0) {
    if (const PosixAcl* a = w.acl(acl)) return AclPermission(*a, cred, inode, want);
    r.err = internal::FailClosed("dangling ACL id");
    r.via = Via::kInternal;
    return r;
  }
  // A group member gets the group bits even when other is wider.
  if (cred.InGroup(inode.gid)) {
    r.via = Via::kGroup;
    r.bits = (mode >> 3) & 7;
  } else {
    r.via = Via::kOther;
    r.bits = mode & 7;
  }
  r.err = (want & ~r.bits) ? EACCES : 0;
  return r;
}

}  // namespace

namespace {

// proc_sys_permission(): no file under /proc/sys executes; the sysctl's
// mode, widened by its namespace's rules, read by euid and egid alone.
// Linux: fs/proc/proc_sysctl.c test_perm(), sysctl_perm();
// net/sysctl_net.c net_ctl_permissions(); kernel/ucount.c
// set_permissions().
PermCheck ProcSysPermission(const Cred& cred, const vfs::Inode& inode, uint32_t mask) {
  PermCheck r;
  r.want = mask & 7;
  r.via = Via::kProcSys;
  const uint32_t mode = inode.mode;
  if ((mask & kMayExec) && S_ISREG(mode)) {
    r.err = EACCES;
    r.bits = 0;
    r.entry_id = 3;  // for the reason: refused by type
    return r;
  }
  auto all = [](uint32_t b) { return b << 6 | b << 3 | b; };
  uint32_t m = mode & 0777;
  // The namespaces' rules are their sysctls', not their directories'.
  if (!S_ISDIR(mode)) {
    if ((inode.flags & vfs::kInodeProcSysNet) && cred.CapableInitial(kCapNetAdmin)) m = all(m >> 6);
    if (inode.flags & vfs::kInodeProcSysUser)
      m = cred.CapableInitial(kCapSysResource) ? all(m >> 6) : all(m & 4);
  }
  bool group0 = cred.egid == 0;
  for (uint32_t g : cred.groups()) group0 |= g == 0;
  r.bits = static_cast<uint8_t>((cred.euid == 0 ? m >> 6 : group0 ? m >> 3 : m) & 7);
  r.entry_id = cred.euid == 0 ? 0 : group0 ? 1 : 2;  // the class read, for the reason
  r.err = (r.want & ~r.bits) ? EACCES : 0;
  return r;
}

}  // namespace

int FuseAllows(const vfs::SbFuse* f, const Cred& cred) {
  tls_fuse_met = true;
  if (f == nullptr) [[unlikely]]
    return internal::FailClosed("a FUSE inode without its mount's gate");
  if (!f->gated) return 0;
  // Linux: fs/fuse/dir.c fuse_permissible_uidgid().
  if (cred.ruid == f->uid && cred.euid == f->uid && cred.suid == f->uid &&
      cred.rgid == f->gid && cred.egid == f->gid && cred.sgid == f->gid)
    return 0;
  if (!cred.CapableInitial(kCapSysAdmin)) return EACCES;
  if (!f->sys_admin)
    return vfs::Unknown(
        "whether CAP_SYS_ADMIN enters a FUSE mount without allow_other depends on the fuse "
        "module's allow_sys_admin_access, which could not be read");
  return *f->sys_admin ? 0 : EACCES;
}

PermCheck GenericPermission(const vfs::World& w, const Cred& cred,
                            vfs::InodeId ino, uint32_t mask) {
  const vfs::Inode& inode = w.inode(ino);
  if (inode.flags & (vfs::kInodeOpaque | vfs::kInodeFuse | vfs::kInodeProcSys)) [[unlikely]] {
    if ((inode.flags & (vfs::kInodeOpaque | vfs::kInodeProcSys)) == vfs::kInodeProcSys)
      return ProcSysPermission(cred, inode, mask);
    PermCheck r;
    r.want = mask & 7;
    // FUSE's ->permission asks who may enter first (fuse_permission()):
    // a mount's gate, decided whatever its inodes show.
    if (inode.flags & vfs::kInodeFuse) {
      const vfs::SbFuse* gate = w.sb_fuse(inode.sb);
      r.err = FuseAllows(gate, cred);
      r.via = gate == nullptr ? Via::kInternal : r.err == EACCES ? Via::kFuseGate : Via::kUnknown;
    }
    // Its filesystem decides (its own ->permission), or the backend could
    // not see it: unknown, never a guess from mode bits.
    if (r.err == 0 && (inode.flags & vfs::kInodeOpaque)) {
      r.err = vfs::UnknownAt(ino);
      r.via = Via::kUnknown;
    }
    if (r.err != 0) return r;
  }
  PermCheck r = AclPermissionCheck(w, cred, inode, mask);
  if (r.err != EACCES) return r;
  // A check that failed closed denies: no capability grants past it.
  if (r.via == Via::kInternal) [[unlikely]] return r;
  const uint32_t mode = inode.mode;
  if (S_ISDIR(mode)) {
    // Read and search of directories: CAP_DAC_READ_SEARCH; anything:
    // CAP_DAC_OVERRIDE.
    if (!(mask & kMayWrite) && CapableWrt(cred, kCapDacReadSearch, inode)) {
      r.err = 0;
      r.via = Via::kCapReadSearch;
      return r;
    }
    if (CapableWrt(cred, kCapDacOverride, inode)) {
      r.err = 0;
      r.via = Via::kCapOverride;
    }
    return r;
  }
  const uint32_t rwx = mask & (kMayRead | kMayWrite | kMayExec);
  if (rwx == kMayRead && CapableWrt(cred, kCapDacReadSearch, inode)) {
    r.err = 0;
    r.via = Via::kCapReadSearch;
    return r;
  }
  // Exec is overridable only when some class has an x bit.
  if (!(rwx & kMayExec) || (mode & 0111)) {
    if (CapableWrt(cred, kCapDacOverride, inode)) {
      r.err = 0;
      r.via = Via::kCapOverride;
    }
  } else if (CapableWrt(cred, kCapDacOverride, inode)) {
    r.exec_lacks_x = true;
  }
  return r;
}

PermCheck InodePermission(const vfs::World& w, const Cred& cred,
                          vfs::InodeId ino, uint32_t mask) {
  const vfs::Inode& inode = w.inode(ino);
  if (mask & kMayWrite) {
    const uint32_t mode = inode.mode;
    if ((w.sb(inode.sb).flags & vfs::kSbReadonly) &&
        (S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode))) {
      PermCheck r;
      r.err = EROFS;
      r.via = Via::kReadonlySb;
      r.want = mask & 7;
      return r;
    }
    if (inode.flags & vfs::kInodeImmutable) {
      PermCheck r;
      r.err = EPERM;
      r.via = Via::kImmutable;
      r.want = mask & 7;
      return r;
    }
    // HAS_UNMAPPED_ID(): an idmapped mount maps its owner or group
    // nowhere, and a write would store them back wrong.
    if (inode.uid == vfs::kInvalidId || inode.gid == vfs::kInvalidId) [[unlikely]] {
      PermCheck r;
      r.err = EACCES;
      r.via = Via::kUnmappedId;
      r.want = mask & 7;
      return r;
    }
    // Linux: fs/btrfs/inode.c btrfs_permission(), the filesystem's own
    // ->permission, before generic_permission().
    if ((inode.flags & vfs::kInodeSubvolReadonly) &&
        (S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode))) [[unlikely]] {
      PermCheck r;
      r.err = EROFS;
      r.via = Via::kReadonlySubvol;
      r.want = mask & 7;
      return r;
    }
  }
  return GenericPermission(w, cred, ino, mask);
}

}  // namespace pathwarden::perm
