// The security hook points of the system calls, where Linux calls its
// LSMs (security_path_mknod(), security_file_open(), ...). Landlock is the
// one LSM modelled; each hook returns 0 or its errno and explains it.
// Linux: include/linux/security.h, security/landlock/{fs,net,task}.c

#ifndef PATHWARDEN_SRC_SECURITY_HOOKS_H_
#define PATHWARDEN_SRC_SECURITY_HOOKS_H_

#include <cstdint>

#include "src/engine/engine.h"

namespace pathwarden::security {

// security_path_mknod(): `mode` carries the file type (0 means regular).
int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode);
int PathMkdir(OpCtx& ctx, vfs::PathPos dir);
int PathSymlink(OpCtx& ctx, vfs::PathPos dir);
int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim);
int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim);

// security_path_link(): `old` is the source (its mount is new_dir's).
int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
             vfs::DentryId new_dentry);

// security_path_rename(): `new_dentry` is kNone when the target does not
// exist.
int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry,
               vfs::PathPos new_dir, vfs::DentryId new_dentry, uint32_t flags);
int PathTruncate(OpCtx& ctx, vfs::PathPos file);

// security_file_open(): also freezes the file's Landlock rights.
int FileOpen(OpCtx& ctx, OpenFile& file);
// The open of a regular file a dry run would have created in `dir`.
int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode);
int FileTruncate(OpCtx& ctx, const OpenFile& file);
int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd);

// security_sb_mount() and its kin (move_mount, remount, pivot_root).
int SbMount(OpCtx& ctx);
int SbUmount(OpCtx& ctx);

int TaskKill(OpCtx& ctx, const Process& target);
int UnixStreamConnect(OpCtx& ctx, const Process& target);
int SocketBind(OpCtx& ctx, uint16_t port);
int SocketConnect(OpCtx& ctx, uint16_t port);

}  // namespace pathwarden::security

#endif  // PATHWARDEN_SRC_SECURITY_HOOKS_H_
