// The security hook points, dispatched to the world's security module.
// Linux: security/security.c (call_int_hook())

#include "src/security/hooks.h"

namespace pathwarden::security {

int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode) {
  Module* m = ctx.t.lsm();
  return m ? m->PathMknod(ctx, dir, mode) : 0;
}

int PathMkdir(OpCtx& ctx, vfs::PathPos dir) {
  Module* m = ctx.t.lsm();
  return m ? m->PathMkdir(ctx, dir) : 0;
}

int PathSymlink(OpCtx& ctx, vfs::PathPos dir) {
  Module* m = ctx.t.lsm();
  return m ? m->PathSymlink(ctx, dir) : 0;
}

int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  Module* m = ctx.t.lsm();
  return m ? m->PathUnlink(ctx, dir, victim) : 0;
}

int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) {
  Module* m = ctx.t.lsm();
  return m ? m->PathRmdir(ctx, dir, victim) : 0;
}

int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir, vfs::DentryId new_dentry) {
  Module* m = ctx.t.lsm();
  return m ? m->PathLink(ctx, old, new_dir, new_dentry) : 0;
}

int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry, vfs::PathPos new_dir,
               vfs::DentryId new_dentry, uint32_t flags) {
  Module* m = ctx.t.lsm();
  return m ? m->PathRename(ctx, old_dir, old_dentry, new_dir, new_dentry, flags) : 0;
}

int PathTruncate(OpCtx& ctx, vfs::PathPos file) {
  Module* m = ctx.t.lsm();
  return m ? m->PathTruncate(ctx, file) : 0;
}

int FileOpen(OpCtx& ctx, OpenFile& file) {
  Module* m = ctx.t.lsm();
  return m ? m->FileOpen(ctx, file) : 0;
}

int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode) {
  Module* m = ctx.t.lsm();
  return m ? m->FileOpenNew(ctx, dir, f_mode) : 0;
}

int FileTruncate(OpCtx& ctx, const OpenFile& file) {
  Module* m = ctx.t.lsm();
  return m ? m->FileTruncate(ctx, file) : 0;
}

int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd) {
  Module* m = ctx.t.lsm();
  return m ? m->FileIoctl(ctx, file, cmd) : 0;
}

int SbMount(OpCtx& ctx) {
  Module* m = ctx.t.lsm();
  return m ? m->SbMount(ctx) : 0;
}

int SbUmount(OpCtx& ctx) {
  Module* m = ctx.t.lsm();
  return m ? m->SbUmount(ctx) : 0;
}

int TaskKill(OpCtx& ctx, const Task& target) {
  Module* m = ctx.t.lsm();
  return m ? m->TaskKill(ctx, target) : 0;
}

int UnixStreamConnect(OpCtx& ctx, const Task& target) {
  Module* m = ctx.t.lsm();
  return m ? m->UnixStreamConnect(ctx, target) : 0;
}

int SocketBind(OpCtx& ctx, uint16_t port) {
  Module* m = ctx.t.lsm();
  return m ? m->SocketBind(ctx, port) : 0;
}

int SocketConnect(OpCtx& ctx, uint16_t port) {
  Module* m = ctx.t.lsm();
  return m ? m->SocketConnect(ctx, port) : 0;
}

}  // namespace pathwarden::security
