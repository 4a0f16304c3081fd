// The system calls: each Do<pathwarden::R>() follows its Linux counterpart's order of
// checks (argument checks, the walk, the may_* checks, the security hooks,
// the filesystem's own errors) and, when ctx.apply, changes the world as
// the call does.
// Linux: fs/namei.c, fs/open.c, fs/attr.c, fs/stat.c, fs/utimes.c,
// fs/namespace.c, fs/exec.c, fs/ioctl.c, kernel/signal.c, fs/xattr.c

#ifndef PATHWARDEN_SRC_OPS_OPS_H_
#define PATHWARDEN_SRC_OPS_OPS_H_

#include "pathwarden/request.h"
#include "src/task/task.h"

namespace pathwarden::ops {

// Do<pathwarden::R>()
//
// The op of request type R (pathwarden/request.h) on the step in ctx.a,
// defined in this folder by its kernel concern; the engine dispatches on
// R::kOp to it (engine.cc, Dispatch()). Each op is declared here, so
// that every caller sees the specialization it calls.
template <typename R>
int Do(OpCtx& ctx);

template <>
int Do<pathwarden::Open>(OpCtx& ctx);
template <>
int Do<pathwarden::Close>(OpCtx& ctx);
template <>
int Do<pathwarden::Stat>(OpCtx& ctx);
template <>
int Do<pathwarden::Lstat>(OpCtx& ctx);
template <>
int Do<pathwarden::Access>(OpCtx& ctx);
template <>
int Do<pathwarden::ExecCheck>(OpCtx& ctx);
template <>
int Do<pathwarden::Mkdir>(OpCtx& ctx);
template <>
int Do<pathwarden::Mknod>(OpCtx& ctx);
template <>
int Do<pathwarden::Symlink>(OpCtx& ctx);
template <>
int Do<pathwarden::Link>(OpCtx& ctx);
template <>
int Do<pathwarden::Unlink>(OpCtx& ctx);
template <>
int Do<pathwarden::Rmdir>(OpCtx& ctx);
template <>
int Do<pathwarden::Rename>(OpCtx& ctx);
template <>
int Do<pathwarden::Truncate>(OpCtx& ctx);
template <>
int Do<pathwarden::Ftruncate>(OpCtx& ctx);
template <>
int Do<pathwarden::Chmod>(OpCtx& ctx);
template <>
int Do<pathwarden::Chown>(OpCtx& ctx);
template <>
int Do<pathwarden::Lchown>(OpCtx& ctx);
template <>
int Do<pathwarden::Utimensat>(OpCtx& ctx);
template <>
int Do<pathwarden::Readlink>(OpCtx& ctx);
template <>
int Do<pathwarden::Chdir>(OpCtx& ctx);
template <>
int Do<pathwarden::Fchdir>(OpCtx& ctx);
template <>
int Do<pathwarden::Chroot>(OpCtx& ctx);
template <>
int Do<pathwarden::MountTmpfs>(OpCtx& ctx);
template <>
int Do<pathwarden::BindMount>(OpCtx& ctx);
template <>
int Do<pathwarden::Umount>(OpCtx& ctx);
template <>
int Do<pathwarden::Ioctl>(OpCtx& ctx);
template <>
int Do<pathwarden::BindTcp>(OpCtx& ctx);
template <>
int Do<pathwarden::ConnectTcp>(OpCtx& ctx);
template <>
int Do<pathwarden::Signal>(OpCtx& ctx);
template <>
int Do<pathwarden::ConnectAbstract>(OpCtx& ctx);
template <>
int Do<pathwarden::SendFd>(OpCtx& ctx);
template <>
int Do<pathwarden::Restrict>(OpCtx& ctx);
template <>
int Do<pathwarden::Getxattr>(OpCtx& ctx);
template <>
int Do<pathwarden::Setxattr>(OpCtx& ctx);
template <>
int Do<pathwarden::Listxattr>(OpCtx& ctx);
template <>
int Do<pathwarden::Removexattr>(OpCtx& ctx);
template <>
int Do<pathwarden::Fallocate>(OpCtx& ctx);
template <>
int Do<pathwarden::Fchmod>(OpCtx& ctx);
template <>
int Do<pathwarden::Fchown>(OpCtx& ctx);
template <>
int Do<pathwarden::Futimens>(OpCtx& ctx);
template <>
int Do<pathwarden::MountSetattr>(OpCtx& ctx);

}  // namespace pathwarden::ops

#endif  // PATHWARDEN_SRC_OPS_OPS_H_
