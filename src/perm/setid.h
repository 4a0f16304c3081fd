// What the kernel does to the setuid and setgid bits, and which owner and
// group a new inode gets: the one place these rules are written. The
// engine's ops (src/ops/) apply them to the model; pathwarden-fs applies
// them to the files it creates and changes as root for a caller.
//
// Plain functions of the caller's credentials and the inode's mode and
// group: no filesystem behind them.

#ifndef PATHWARDEN_SRC_PERM_SETID_H_
#define PATHWARDEN_SRC_PERM_SETID_H_

#include <sys/stat.h>

#include <cstdint>

#include "pathwarden/cred.h"

namespace pathwarden::perm {

// InodeIds
//
// The owner and group of the inode a rule is about: a capability applies
// to it only when both map into the caller's user namespace
// (Cred::CapableWrtInode()).
struct InodeIds {
  uint32_t uid = 0, gid = 0;
};

// InGroupOrCapable()
//
// In `gid`, or CAP_FSETID over the inode `ino`.
// Linux: fs/inode.c in_group_or_capable()
inline bool InGroupOrCapable(const Cred& cred, uint32_t gid, InodeIds ino) {
  return cred.InGroup(gid) || cred.CapableWrtInode(kCapFsetid, ino.uid, ino.gid);
}

// NewOwner
//
// The owner, group and mode a new inode gets in a directory of mode
// `dir_mode` owned by `dir`, before the umask or the default ACL.
struct NewOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0;
};

// InitOwner()
//
// A setgid, group-executable file made in a setgid directory keeps
// S_ISGID only for members of the directory's group (or CAP_FSETID over
// the directory); the
// new inode belongs to the fsuid, and to the directory's group when the
// directory is setgid (a new directory is then setgid too), else to the
// fsgid. `mode` carries the type.
// Linux: fs/inode.c mode_strip_sgid(), inode_init_owner()
inline NewOwner InitOwner(const Cred& cred, uint32_t mode, uint32_t dir_mode, InodeIds dir) {
  if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && !S_ISDIR(mode) &&
      (dir_mode & S_ISGID) && !InGroupOrCapable(cred, dir.gid, dir))
    mode &= ~S_ISGID;
  NewOwner o{cred.fsuid, cred.fsgid, mode};
  if (dir_mode & S_ISGID) {
    o.gid = dir.gid;
    if (S_ISDIR(mode)) o.mode |= S_ISGID;
  }
  return o;
}

// KillSuidMode()
//
// The mode of an inode after a write or a truncation by `cred`: a regular
// file `ino` loses setuid, and setgid when group-executable or when the
// caller is outside its group without CAP_FSETID over it -- unless the
// caller has CAP_FSETID in the initial user namespace (capable()). Other
// types keep theirs.
// Linux: fs/attr.c setattr_should_drop_suidgid(), fs/inode.c
// file_remove_privs()
inline uint32_t KillSuidMode(const Cred& cred, uint32_t mode, InodeIds ino) {
  if (!S_ISREG(mode) || cred.CapableInitial(kCapFsetid)) return mode;
  uint32_t kill = mode & S_ISUID;
  if ((mode & S_ISGID) && ((mode & S_IXGRP) || !InGroupOrCapable(cred, ino.gid, ino)))
    kill |= S_ISGID;
  return mode & ~kill;
}

// ChownKillsSgid()
//
// Whether a chown of an inode `ino` of `mode` (its ids before the change)
// drops setgid: when set and group-executable, or when the caller is
// outside its group without CAP_FSETID over it. Directories keep it
// (chown_common() asks only for other types); setuid always goes.
// Linux: fs/attr.c setattr_should_drop_sgid(), fs/open.c chown_common()
inline bool ChownKillsSgid(const Cred& cred, uint32_t mode, InodeIds ino) {
  if (S_ISDIR(mode) || !(mode & S_ISGID)) return false;
  return (mode & S_IXGRP) || !InGroupOrCapable(cred, ino.gid, ino);
}

// ModeSetBy()
//
// A mode `cred` sets (chmod, or the mode an access ACL gives) on an inode
// `ino` (its ids before the change) of group `gid` (the group it has after
// the same change): setgid stays only for members of that group or with
// CAP_FSETID over the inode.
// Linux: fs/attr.c setattr_prepare(), fs/posix_acl.c
// posix_acl_update_mode()
inline uint32_t ModeSetBy(const Cred& cred, uint32_t mode, uint32_t gid, InodeIds ino) {
  return InGroupOrCapable(cred, gid, ino) ? mode : mode & ~static_cast<uint32_t>(S_ISGID);
}

}  // namespace pathwarden::perm

#endif  // PATHWARDEN_SRC_PERM_SETID_H_
