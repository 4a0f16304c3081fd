// The C API's requests: a C request (struct pathwarden_request) or a
// query line as a Request of the process's model, asked or applied
// (pathwarden_request_init(), pathwarden_ask(), _apply(), _ask_line()).

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/pathwarden.h"
#include "pathwarden/scenario.h"
#include "src/capi/capi_util.h"
#include "src/capi/handles.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::capi {
namespace {

// ToRequest()
//
// The C request as a Request of `p`'s model; the query's words for JSON.
int ToRequest(const pathwarden_process& p, const pathwarden_request* r, query::Query* q) {
  if (r == nullptr) return Fail(EINVAL, "request is NULL");
  if (r->op < 0 || r->op > PATHWARDEN_OP_FUTIMENS)
    return Fail(EINVAL, fmt::format("request: unknown op {}", r->op));
  const Op op = static_cast<Op>(r->op);
  const Fd dirfd{r->dirfd};
  const Fd fd{r->fd};
  auto path = [&](const char* s, const char* what) -> Result<std::string, int> {
    if (s == nullptr)
      return Unexpected(Fail(EINVAL, fmt::format("request: {} needs {}", OpName(op), what)));
    return std::string(s);
  };
  auto target = [&]() -> Result<Process, int> {
    if (Live(r->target, "request target") != 0) return Unexpected(-EINVAL);
    if (r->target->state != p.state)
      return Unexpected(Fail(EINVAL, "request: the target is a process of another model"));
    return r->target->p;
  };
  // utimensat's and futimens's times: NULL, or two PATHWARDEN_TIME_*.
  auto times = [&](std::optional<std::array<TimeSpec, 2>>* out) {
    if (!r->has_times) return 0;
    std::array<TimeSpec, 2> t{};
    for (int i = 0; i < 2; ++i) {
      if (r->times[i] < PATHWARDEN_TIME_NOW || r->times[i] > PATHWARDEN_TIME_SET)
        return Fail(EINVAL, fmt::format("request: times[{}] is {}, not a PATHWARDEN_TIME_*", i,
                                        r->times[i]));
      t[static_cast<size_t>(i)] = static_cast<TimeSpec>(r->times[i]);
    }
    *out = t;
    return 0;
  };
  q->op = std::string(OpName(op));
  q->path = r->path ? r->path : "";
  q->path2 = r->path2 ? r->path2 : "";
  // A path the op needs, or return its error.
#define PW_PATH(var, field, what)       \
  auto var##_r = path(r->field, what);  \
  if (!var##_r) return var##_r.error(); \
  std::string var = std::move(*var##_r)
#define PW_TARGET(var)                      \
  auto var##_r = target();                  \
  if (!var##_r) return -EINVAL;             \
  const Process var = *var##_r
  switch (op) {
    case Op::kOpen: {
      PW_PATH(s, path, "path");
      q->request = Open{dirfd, s, r->flags, r->mode};
      break;
    }
    case Op::kClose: q->request = Close{fd}; break;
    case Op::kStat: {
      PW_PATH(s, path, "path");
      q->request = Stat{dirfd, s, r->flags};
      break;
    }
    case Op::kLstat: {
      PW_PATH(s, path, "path");
      q->request = Lstat{dirfd, s, r->flags};
      break;
    }
    case Op::kAccess: {
      PW_PATH(s, path, "path");
      q->request = Access{dirfd, s, r->mode, r->flags};
      break;
    }
    case Op::kMkdir: {
      PW_PATH(s, path, "path");
      q->request = Mkdir{dirfd, s, r->mode};
      break;
    }
    case Op::kMknod: {
      PW_PATH(s, path, "path");
      q->request = Mknod{dirfd, s, r->type, r->mode, r->rdev_major, r->rdev_minor};
      break;
    }
    case Op::kSymlink: {
      PW_PATH(s, path, "path");
      PW_PATH(t, path2, "path2 (the target)");
      q->request = Symlink{t, dirfd, s};
      break;
    }
    case Op::kLink: {
      PW_PATH(s, path, "path");
      PW_PATH(t, path2, "path2");
      q->request = Link{dirfd, s, t, r->flags};
      break;
    }
    case Op::kUnlink: {
      PW_PATH(s, path, "path");
      q->request = Unlink{dirfd, s, r->flags};
      break;
    }
    case Op::kRmdir: {
      PW_PATH(s, path, "path");
      q->request = Rmdir{dirfd, s};
      break;
    }
    case Op::kRename: {
      PW_PATH(s, path, "path");
      PW_PATH(t, path2, "path2");
      q->request = Rename{dirfd, s, t, r->flags};
      break;
    }
    case Op::kTruncate: {
      PW_PATH(s, path, "path");
      q->request = Truncate{s};
      break;
    }
    case Op::kFtruncate: q->request = Ftruncate{fd}; break;
    case Op::kChmod: {
      PW_PATH(s, path, "path");
      q->request = Chmod{dirfd, s, r->mode, r->flags};
      break;
    }
    case Op::kChown: {
      PW_PATH(s, path, "path");
      q->request = Chown{dirfd, s, r->uid, r->gid, r->flags};
      break;
    }
    case Op::kLchown: {
      PW_PATH(s, path, "path");
      q->request = Lchown{dirfd, s, r->uid, r->gid, r->flags};
      break;
    }
    case Op::kReadlink: {
      PW_PATH(s, path, "path");
      q->request = Readlink{dirfd, s};
      break;
    }
    case Op::kChdir: {
      PW_PATH(s, path, "path");
      q->request = Chdir{s};
      break;
    }
    case Op::kExecCheck: {
      PW_PATH(s, path, "path");
      q->request = ExecCheck{dirfd, s, r->flags};
      break;
    }
    case Op::kIoctl: q->request = Ioctl{fd, r->cmd}; break;
    case Op::kBindTcp: q->request = BindTcp{r->port}; break;
    case Op::kConnectTcp: q->request = ConnectTcp{r->port}; break;
    case Op::kSignal: {
      PW_TARGET(t);
      q->request = Signal{t};
      break;
    }
    case Op::kConnectAbstract: {
      PW_TARGET(t);
      q->request = ConnectAbstract{t};
      break;
    }
    case Op::kSendFd: {
      PW_TARGET(t);
      q->request = SendFd{fd, t};
      break;
    }
    case Op::kMountTmpfs: {
      PW_PATH(s, path, "path");
      q->request = MountTmpfs{s, r->flags};
      break;
    }
    case Op::kBindMount: {
      PW_PATH(s, path, "path (the target)");
      PW_PATH(t, path2, "path2 (the source)");
      q->request = BindMount{t, s, r->flags};
      break;
    }
    case Op::kUmount: {
      PW_PATH(s, path, "path");
      q->request = Umount{s, r->flags};
      break;
    }
    case Op::kRestrict: {
      if (Live(r->ruleset, "request ruleset") != 0) return -EINVAL;
      q->request = Restrict{BuildOn(*r->ruleset, p).second.ruleset};
      break;
    }
    case Op::kUtimensat: {
      PW_PATH(s, path, "path");
      Utimensat u{dirfd, s, std::nullopt, r->flags};
      if (int e = times(&u.times)) return e;
      q->request = u;
      break;
    }
    case Op::kChroot: {
      PW_PATH(s, path, "path");
      q->request = Chroot{s};
      break;
    }
    case Op::kFchdir: q->request = Fchdir{fd}; break;
    case Op::kGetxattr: {
      PW_PATH(s, path, "path");
      PW_PATH(n, name, "name");
      q->request = Getxattr{dirfd, s, n, r->flags};
      break;
    }
    case Op::kSetxattr: {
      PW_PATH(s, path, "path");
      PW_PATH(n, name, "name");
      if (r->value == nullptr && r->value_len != 0)
        return Fail(EINVAL, "request: setxattr's value is NULL but value_len is not 0");
      std::string v(static_cast<const char*>(r->value), r->value == nullptr ? 0 : r->value_len);
      q->request = Setxattr{dirfd, s, n, std::move(v), r->xattr_flags, r->flags};
      break;
    }
    case Op::kListxattr: {
      PW_PATH(s, path, "path");
      q->request = Listxattr{dirfd, s, r->flags};
      break;
    }
    case Op::kRemovexattr: {
      PW_PATH(s, path, "path");
      PW_PATH(n, name, "name");
      q->request = Removexattr{dirfd, s, n, r->flags};
      break;
    }
    case Op::kFallocate: q->request = Fallocate{fd, r->mode, r->offset, r->len}; break;
    case Op::kFchmod: q->request = Fchmod{fd, r->mode}; break;
    case Op::kFchown: q->request = Fchown{fd, r->uid, r->gid}; break;
    case Op::kFutimens: {
      Futimens u{fd, std::nullopt};
      if (int e = times(&u.times)) return e;
      q->request = u;
      break;
    }
  }
#undef PW_PATH
#undef PW_TARGET
  return 0;
}

Model::Detail DetailOf(int detail) {
  return detail == PATHWARDEN_DETAIL_VERDICT_ONLY ? Model::Detail::kVerdictOnly
                                                  : Model::Detail::kTrace;
}

// Ask(): the body of pathwarden_ask(), _apply() and _ask_line().
int Ask(const pathwarden_process* p, query::Query q, int detail, bool apply,
        pathwarden_decision** out) {
  Model& m = p->state->model;
  std::shared_ptr<const Layers> layers = p->layers;
  if (apply) {
    Decision d = m.Apply(p->p, q.request, DetailOf(detail));
    *out = NewDecision(std::move(q), std::move(d), std::move(layers));
  } else {
    Decision d = m.Evaluate(p->p, q.request, DetailOf(detail));
    *out = NewDecision(std::move(q), std::move(d), std::move(layers));
  }
  return 0;
}

int CheckAsk(const pathwarden_process* p, int detail, pathwarden_decision** out, uint32_t flags) {
  if (int e = CheckFlags(flags)) return e;
  if (int e = Live(p, "process")) return e;
  if (out == nullptr) return Fail(EINVAL, "out is NULL");
  if (detail != PATHWARDEN_DETAIL_TRACE && detail != PATHWARDEN_DETAIL_VERDICT_ONLY)
    return Fail(EINVAL, fmt::format("detail {} is not a PATHWARDEN_DETAIL_*", detail));
  return 0;
}

}  // namespace
}  // namespace pathwarden::capi

using namespace pathwarden;         // NOLINT: the C API's own files
using namespace pathwarden::capi;   // NOLINT

extern "C" {

int pathwarden_request_init(pathwarden_request* r, int op) {
  return Guard([&] {
    if (r == nullptr) return Fail(EINVAL, "request is NULL");
    if (op < 0 || op > PATHWARDEN_OP_FUTIMENS) return Fail(EINVAL, fmt::format("unknown op {}", op));
    std::memset(r, 0, sizeof *r);
    r->op = op;
    r->dirfd = PATHWARDEN_AT_FDCWD;
    r->mode = op == PATHWARDEN_OP_MKDIR                                ? 0755
              : op == PATHWARDEN_OP_OPEN || op == PATHWARDEN_OP_MKNOD ? 0644
                                                                       : 0;
    r->type = S_IFREG;
    r->rdev_major = 1;
    r->rdev_minor = 3;
    r->uid = r->gid = -1;
    r->fd = -1;
    r->len = 1;
    return 0;
  });
}

int pathwarden_ask(const pathwarden_process* p, const pathwarden_request* r, int detail,
                   pathwarden_decision** out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckAsk(p, detail, out, flags)) return e;
    query::Query q;
    if (int e = ToRequest(*p, r, &q)) return e;
    return Ask(p, std::move(q), detail, false, out);
  });
}

int pathwarden_apply(pathwarden_process* p, const pathwarden_request* r, int detail,
                     pathwarden_decision** out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckAsk(p, detail, out, flags)) return e;
    query::Query q;
    if (int e = ToRequest(*p, r, &q)) return e;
    return Ask(p, std::move(q), detail, true, out);
  });
}

int pathwarden_ask_line(const pathwarden_process* p, const char* line, pathwarden_decision** out,
                        uint32_t flags) {
  return Guard([&] {
    if (int e = CheckAsk(p, PATHWARDEN_DETAIL_TRACE, out, flags)) return e;
    if (int e = NeedString(line, "line")) return e;
    auto q = query::ParseQueryLine(line);
    if (!q) return Fail(EINVAL, q.error());
    return Ask(p, std::move(*q), PATHWARDEN_DETAIL_TRACE, false, out);
  });
}

}  // extern "C"
