// Landlock as the world's security module: which right each hook asks
// for, and of which check; in a trace, what it asks is recorded whether
// or not the process has a domain (RecordFsRequest()).
// Linux: security/landlock/fs.c (hook_path_*, hook_sb_*), net.c
// (hook_socket_bind/connect), task.c (hook_task_kill,
// hook_unix_stream_connect)

#include <stdio.h>  // RENAME_EXCHANGE
#include <sys/stat.h>

#include "src/landlock/fs_walk.h"
#include "src/landlock/landlock.h"

namespace pathwarden::landlock {

int Landlock::PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode) {
  const AccessMask right = GetModeAccess(mode);
  RecordFsRequest(ctx, dir, right);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, dir, right, "for creating in");
}

int Landlock::PathMkdir(OpCtx& ctx, vfs::PathPos dir) {
  RecordFsRequest(ctx, dir, kFsMakeDir);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, dir, kFsMakeDir, "for creating in");
}

int Landlock::PathSymlink(OpCtx& ctx, vfs::PathPos dir) {
  RecordFsRequest(ctx, dir, kFsMakeSym);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, dir, kFsMakeSym, "for creating in");
}

int Landlock::PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  (void)victim;
  RecordFsRequest(ctx, dir, kFsRemoveFile);
  if (!ctx.p.domain) return 0;
  // Any non-directory, even a symlink, socket or device, is a file here.
  return CheckPath(ctx, dir, kFsRemoveFile, "for removing from");
}

int Landlock::PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  (void)victim;
  RecordFsRequest(ctx, dir, kFsRemoveDir);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, dir, kFsRemoveDir, "for removing from");
}

int Landlock::PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
                       vfs::DentryId new_dentry) {
  RecordReferRequests(ctx, old, new_dir, new_dentry, false, false);
  if (!ctx.p.domain) return 0;
  return CheckRefer(ctx, old, new_dir, new_dentry, false, false);
}

int Landlock::PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry,
                         vfs::PathPos new_dir, vfs::DentryId new_dentry, uint32_t flags) {
  RecordReferRequests(ctx, {old_dir.mnt, old_dentry}, new_dir, new_dentry, true,
                      flags & RENAME_EXCHANGE);
  if (!ctx.p.domain) return 0;
  return CheckRefer(ctx, {old_dir.mnt, old_dentry}, new_dir, new_dentry, true,
                    flags & RENAME_EXCHANGE);
}

int Landlock::PathTruncate(OpCtx& ctx, vfs::PathPos file) {
  RecordFsRequest(ctx, file, kFsTruncate);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, file, kFsTruncate, "for truncating");
}

int Landlock::SbMount(OpCtx& ctx) {
  if (!ctx.p.domain) return 0;
  return TopologyChange(ctx);
}

int Landlock::SbUmount(OpCtx& ctx) {
  if (!ctx.p.domain) return 0;
  return TopologyChange(ctx);
}

int Landlock::TaskKill(OpCtx& ctx, const Task& target) {
  // Threads of one process may always signal each other (erratum 2); a
  // process signalling itself is one.
  if (&target == &ctx.p || !ctx.p.domain) return 0;
  return Scope(ctx, target, target.domain.get(), kScopeSignal);
}

int Landlock::UnixStreamConnect(OpCtx& ctx, const Task& target) {
  if (!ctx.p.domain) return 0;
  // The server's domain is the listening socket's, fixed when it was
  // created (after the process's starting layers).
  return Scope(ctx, target, target.listen_domain.get(), kScopeAbstractUnixSocket);
}

int Landlock::SocketBind(OpCtx& ctx, uint16_t port) {
  if (!ctx.p.domain) return 0;
  return Net(ctx, port, kNetBindTcp);
}

int Landlock::SocketConnect(OpCtx& ctx, uint16_t port) {
  if (!ctx.p.domain) return 0;
  return Net(ctx, port, kNetConnectTcp);
}

}  // namespace pathwarden::landlock
