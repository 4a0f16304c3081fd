// The security hook points of the system calls, where Linux calls its
// LSMs (security_path_mknod(), security_file_open(), ...), and the
// interface a security module implements. Landlock (src/landlock) is the
// one module modelled; each hook returns 0 or its errno and explains it.
// Linux: include/linux/security.h, security/landlock/{fs,net,task}.c

#ifndef PATHWARDEN_SRC_SECURITY_HOOKS_H_
#define PATHWARDEN_SRC_SECURITY_HOOKS_H_

#include <cstdint>

#include "src/task/task.h"

namespace pathwarden::security {

// Module
//
// A security module: one function per hook. The hooks below call the
// world's module (TaskTable::lsm()) for a task that Landlock confines,
// and answer 0 for any other: Landlock, the one module, has nothing to
// say to a task without a domain (the open-file hooks excepted: rights
// frozen at open decide, whoever acts now).
class Module {
 public:
  virtual ~Module() = default;

  // security_path_mknod(): `mode` carries the file type (0 means regular).
  virtual int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode) = 0;
  virtual int PathMkdir(OpCtx& ctx, vfs::PathPos dir) = 0;
  virtual int PathSymlink(OpCtx& ctx, vfs::PathPos dir) = 0;
  virtual int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) = 0;
  virtual int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) = 0;

  // security_path_link(): `old` is the source (its mount is new_dir's).
  virtual int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
                       vfs::DentryId new_dentry) = 0;

  // security_path_rename(): `new_dentry` is kNone when the target does not
  // exist.
  virtual int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry,
                         vfs::PathPos new_dir, vfs::DentryId new_dentry, uint32_t flags) = 0;
  virtual int PathTruncate(OpCtx& ctx, vfs::PathPos file) = 0;

  // security_file_open(): also freezes the file's Landlock rights.
  virtual int FileOpen(OpCtx& ctx, OpenFile& file) = 0;
  // The open of a regular file a dry run would have created in `dir`.
  virtual int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode) = 0;
  virtual int FileTruncate(OpCtx& ctx, const OpenFile& file) = 0;
  virtual int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd) = 0;

  // security_sb_mount() and its kin (move_mount, remount, pivot_root).
  virtual int SbMount(OpCtx& ctx) = 0;
  virtual int SbUmount(OpCtx& ctx) = 0;

  virtual int TaskKill(OpCtx& ctx, const Task& target) = 0;
  virtual int UnixStreamConnect(OpCtx& ctx, const Task& target) = 0;
  virtual int SocketBind(OpCtx& ctx, uint16_t port) = 0;
  virtual int SocketConnect(OpCtx& ctx, uint16_t port) = 0;
};

// security_path_mknod(): `mode` carries the file type (0 means regular).
int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode);
int PathMkdir(OpCtx& ctx, vfs::PathPos dir);
int PathSymlink(OpCtx& ctx, vfs::PathPos dir);
int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim);
int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim);

// security_path_link(): `old` is the source (its mount is new_dir's).
int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir, vfs::DentryId new_dentry);

// security_path_rename(): `new_dentry` is kNone when the target does not
// exist.
int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry, vfs::PathPos new_dir,
               vfs::DentryId new_dentry, uint32_t flags);
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

int TaskKill(OpCtx& ctx, const Task& target);
int UnixStreamConnect(OpCtx& ctx, const Task& target);
int SocketBind(OpCtx& ctx, uint16_t port);
int SocketConnect(OpCtx& ctx, uint16_t port);

}  // namespace pathwarden::security

#endif  // PATHWARDEN_SRC_SECURITY_HOOKS_H_
