// The system calls: each Do*() follows its Linux counterpart's order of
// checks (argument checks, the walk, the may_* checks, the security hooks,
// the filesystem's own errors) and, when ctx.apply, changes the world as
// the call does.
// Linux: fs/namei.c, fs/open.c, fs/attr.c, fs/stat.c, fs/utimes.c,
// fs/namespace.c, fs/exec.c, fs/ioctl.c, kernel/signal.c, fs/xattr.c

#ifndef PATHWARDEN_SRC_OPS_OPS_H_
#define PATHWARDEN_SRC_OPS_OPS_H_

#include "src/task/task.h"

namespace pathwarden::ops {

int DoOpen(OpCtx& ctx);
int DoClose(OpCtx& ctx);
int DoStat(OpCtx& ctx, bool nofollow);
int DoAccess(OpCtx& ctx);
int DoMkdir(OpCtx& ctx);
int DoMknod(OpCtx& ctx);
int DoSymlink(OpCtx& ctx);
int DoLink(OpCtx& ctx);
int DoUnlink(OpCtx& ctx);
int DoRmdir(OpCtx& ctx);
int DoRename(OpCtx& ctx);
int DoTruncate(OpCtx& ctx);
int DoFtruncate(OpCtx& ctx);
int DoChmod(OpCtx& ctx);
int DoChown(OpCtx& ctx, bool nofollow);
int DoUtimensat(OpCtx& ctx);
int DoReadlink(OpCtx& ctx);
int DoChdir(OpCtx& ctx);
int DoFchdir(OpCtx& ctx);
int DoChroot(OpCtx& ctx);
int DoExecCheck(OpCtx& ctx);
int DoIoctl(OpCtx& ctx);
int DoMountTmpfs(OpCtx& ctx);
int DoBindMount(OpCtx& ctx);
int DoUmount(OpCtx& ctx);
int DoSendFd(OpCtx& ctx);
int DoSignal(OpCtx& ctx);
int DoConnectAbstract(OpCtx& ctx);
int DoBindTcp(OpCtx& ctx);
int DoConnectTcp(OpCtx& ctx);
int DoRestrict(OpCtx& ctx);
int DoGetxattr(OpCtx& ctx);
int DoSetxattr(OpCtx& ctx);
int DoListxattr(OpCtx& ctx);
int DoRemovexattr(OpCtx& ctx);
int DoFallocate(OpCtx& ctx);
int DoFchmod(OpCtx& ctx);
int DoFchown(OpCtx& ctx);
int DoFutimens(OpCtx& ctx);

}  // namespace pathwarden::ops

#endif  // PATHWARDEN_SRC_OPS_OPS_H_
