// The security hook points, dispatched to Landlock, with the right each
// hook asks for.
// Linux: security/landlock/fs.c (hook_path_*, hook_file_*, hook_sb_*),
// net.c (hook_socket_bind/connect), task.c (hook_task_kill,
// hook_unix_stream_connect)

#include "src/security/hooks.h"

#include <stdio.h>  // RENAME_EXCHANGE
#include <sys/stat.h>

#include "src/landlock/fs_walk.h"
#include "src/landlock/landlock.h"

namespace pathwarden::security {

namespace ll = landlock;

int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode) {
  if (!ctx.p.domain) return 0;
  const ll::AccessMask right = ll::GetModeAccess(mode);
  return ctx.e.landlock().CheckPath(ctx, dir, right, "for creating in");
}

int PathMkdir(OpCtx& ctx, vfs::PathPos dir) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckPath(ctx, dir, ll::kFsMakeDir, "for creating in");
}

int PathSymlink(OpCtx& ctx, vfs::PathPos dir) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckPath(ctx, dir, ll::kFsMakeSym, "for creating in");
}

int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  (void)victim;
  if (!ctx.p.domain) return 0;
  // Any non-directory, even a symlink, socket or device, is a file here.
  return ctx.e.landlock().CheckPath(ctx, dir, ll::kFsRemoveFile, "for removing from");
}

int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  (void)victim;
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckPath(ctx, dir, ll::kFsRemoveDir, "for removing from");
}

int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir, vfs::DentryId new_dentry) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckRefer(ctx, old, new_dir, new_dentry, false, false);
}

int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry, vfs::PathPos new_dir,
               vfs::DentryId new_dentry, uint32_t flags) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckRefer(ctx, {old_dir.mnt, old_dentry}, new_dir, new_dentry, true,
                                     flags & RENAME_EXCHANGE);
}

int PathTruncate(OpCtx& ctx, vfs::PathPos file) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().CheckPath(ctx, file, ll::kFsTruncate, "for truncating");
}

int FileOpen(OpCtx& ctx, OpenFile& file) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().FileOpen(ctx, file);
}

int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().FileOpenNew(ctx, dir, f_mode);
}

int FileTruncate(OpCtx& ctx, const OpenFile& file) {
  // The rights frozen at open decide, whoever truncates now.
  return ctx.e.landlock().FileTruncate(ctx, file);
}

int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd) {
  return ctx.e.landlock().FileIoctl(ctx, file, cmd);
}

int SbMount(OpCtx& ctx) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().TopologyChange(ctx);
}

int SbUmount(OpCtx& ctx) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().TopologyChange(ctx);
}

int TaskKill(OpCtx& ctx, const Process& target) {
  // Threads of one process may always signal each other (erratum 2); a
  // process signalling itself is one.
  if (&target == &ctx.p || !ctx.p.domain) return 0;
  return ctx.e.landlock().Scope(ctx, target, target.domain.get(), ll::kScopeSignal);
}

int UnixStreamConnect(OpCtx& ctx, const Process& target) {
  if (!ctx.p.domain) return 0;
  // The server's domain is the listening socket's, fixed when it was
  // created (after the process's starting layers).
  return ctx.e.landlock().Scope(ctx, target, target.listen_domain.get(),
                                ll::kScopeAbstractUnixSocket);
}

int SocketBind(OpCtx& ctx, uint16_t port) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().Net(ctx, port, ll::kNetBindTcp);
}

int SocketConnect(OpCtx& ctx, uint16_t port) {
  if (!ctx.p.domain) return 0;
  return ctx.e.landlock().Net(ctx, port, ll::kNetConnectTcp);
}

}  // namespace pathwarden::security
