// ioctl(2), kill(2) with signal 0, connect(2) to an abstract UNIX socket,
// bind(2)/connect(2) of TCP sockets on loopback, and passing an fd with
// SCM_RIGHTS.
// Linux: fs/ioctl.c sys_ioctl(); kernel/signal.c check_kill_permission(),
// kill_ok_by_cred(); net/socket.c __sys_bind(), __sys_connect();
// net/ipv4/af_inet.c __inet_bind() (inet_port_requires_bind_service())

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"

namespace pathwarden::ops {
namespace {

// net.ipv4.ip_unprivileged_port_start of a fresh network namespace.
constexpr uint32_t kUnprivilegedPortStart = 1024;

// The peer a request names, or nullptr.
const Task* Target(const OpCtx& ctx) {
  const int t = ctx.a.peer;
  return t < 0 || t >= ctx.t.count() ? nullptr : &ctx.t.task(t);
}

// ns_capable(target's user namespace, CAP_KILL): in the target's own
// namespace, the capability; from the initial one, the capability or the
// target namespace's ownership (its owner has every capability in it);
// never from a namespace below the target's. Two other namespaces may be
// one read twice: not known.
// Linux: kernel/signal.c kill_ok_by_cred(); security/commoncap.c
// cap_capable()
bool KillCapable(const Cred& c, const Cred& target) {
  if (c.userns == target.userns) return c.Capable(kCapKill);
  if (c.InInitialUserNs())
    return c.Capable(kCapKill) || (target.userns->owner && *target.userns->owner == c.euid);
  if (target.InInitialUserNs()) return false;
  return c.CapableOver(kCapKill);
}

}  // namespace

template <>
int Do<pathwarden::Ioctl>(OpCtx& ctx) {
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  if (int err = security::FileIoctl(ctx, *f, ctx.a.cmd)) return err;
  ctx.Ok(Stage::kFd, "no check refuses the command (the driver's own answer is not the verdict)");
  return 0;
}

template <>
int Do<pathwarden::Signal>(OpCtx& ctx) {
  const Task* t = Target(ctx);
  if (!t) return ESRCH;
  const Cred& c = ctx.cred();
  const Cred& tc = t->cred;
  if (t != &ctx.p) {
    const bool ok = c.euid == tc.suid || c.euid == tc.ruid || c.ruid == tc.suid ||
                    c.ruid == tc.ruid || KillCapable(c, tc);
    if (!ok) {
      ctx.Fail(Stage::kUnix, [&] {
        return fmt::format("uid {} may not signal {} (uid {}) without CAP_KILL", c.euid, t->name,
                           tc.ruid);
      });
      return EPERM;
    }
  }
  if (int err = security::TaskKill(ctx, *t)) return err;
  ctx.Ok(Stage::kUnix, [&] { return fmt::format("{} may signal {}", ctx.p.name, t->name); });
  return 0;
}

template <>
int Do<pathwarden::ConnectAbstract>(OpCtx& ctx) {
  const Task* t = Target(ctx);
  if (!t) return ECONNREFUSED;
  if (int err = security::UnixStreamConnect(ctx, *t)) return err;
  ctx.Ok(Stage::kUnix, [&] {
    return fmt::format("{} may connect to {}'s abstract socket", ctx.p.name, t->name);
  });
  return 0;
}

template <>
int Do<pathwarden::BindTcp>(OpCtx& ctx) {
  const uint16_t port = static_cast<uint16_t>(ctx.a.port);
  if (int err = security::SocketBind(ctx, port)) return err;
  if (port != 0 && port < kUnprivilegedPortStart && !ctx.cred().CapableOver(kCapNetBindService)) {
    ctx.Fail(Stage::kCapability, [&] {
      return fmt::format("port {} is below 1024: binding needs CAP_NET_BIND_SERVICE", port);
    });
    return EACCES;
  }
  ctx.Ok(Stage::kUnix, [&] { return fmt::format("{} may bind TCP port {}", ctx.p.name, port); });
  return 0;
}

template <>
int Do<pathwarden::ConnectTcp>(OpCtx& ctx) {
  const uint16_t port = static_cast<uint16_t>(ctx.a.port);
  if (int err = security::SocketConnect(ctx, port)) return err;
  ctx.Ok(Stage::kUnix,
         [&] { return fmt::format("{} may connect to TCP port {}", ctx.p.name, port); });
  return 0;
}

template <>
int Do<pathwarden::SendFd>(OpCtx& ctx) {
  const Task* t = Target(ctx);
  auto it = ctx.p.fds.find(ctx.a.fd.num);
  if (it == ctx.p.fds.end()) {
    ctx.Fail(Stage::kFd, [&] { return fmt::format("{} is not open", ctx.FdText(ctx.a.fd)); });
    return EBADF;
  }
  if (!t) return ECONNREFUSED;
  if (ctx.apply) ctx.new_fd = ctx.t.InstallFd(ctx.t.task(t->index), it->second);
  ctx.Ok(Stage::kFd, [&] {
    return fmt::format("{} passed to {} (same open file, same frozen rights)",
                       ctx.FdText(ctx.a.fd), t->name);
  });
  return 0;
}

}  // namespace pathwarden::ops
