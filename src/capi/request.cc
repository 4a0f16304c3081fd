// The C API's requests: a C request (struct pathwarden_request) or a
// query line as a Request of the process's model, asked or applied
// (pathwarden_request_init(), pathwarden_ask(), _apply(), _ask_line()).

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
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
#include "src/task/request_fields.h"

namespace pathwarden::capi {
namespace {

// The operations: one per request type (pathwarden_op follows Op; its
// values are checked in capi_test.cc).
constexpr int kNumOps = static_cast<int>(std::variant_size_v<Request>);

// FillRequest()
//
// Each member of the request type `T` from the C request's field of its
// name (src/task/request_fields.h goes the other way for the engine): the
// paths the type has must not be NULL (link and rename take path and
// path2 as oldpath and newpath, symlink path2 as its target, a bind mount
// path as its target and path2 as its source), times are two
// PATHWARDEN_TIME_*, a target a live process of `p`'s model, a ruleset
// built on `p`. The first error found, in member order, is returned.
template <typename T>
int FillRequest(const pathwarden_process& p, const pathwarden_request& r, T& t) {
  const std::string_view op = OpName(T::kOp);
  const auto need = [&](const char* s, std::string_view what, std::string* out) {
    if (s == nullptr) return Fail(EINVAL, fmt::format("request: {} needs {}", op, what));
    *out = s;
    return 0;
  };
  if constexpr (requires { t.dirfd; }) t.dirfd = Fd{r.dirfd};
  if constexpr (requires { t.fd; }) t.fd = Fd{r.fd};
  if constexpr (std::is_same_v<T, BindMount>) {
    if (int e = need(r.path, "path (the target)", &t.target)) return e;
    if (int e = need(r.path2, "path2 (the source)", &t.source)) return e;
  } else if constexpr (std::is_same_v<T, Symlink>) {
    if (int e = need(r.path, "path", &t.path)) return e;
    if (int e = need(r.path2, "path2 (the target)", &t.target)) return e;
  } else if constexpr (requires { t.oldpath; }) {
    if (int e = need(r.path, "path", &t.oldpath)) return e;
    if (int e = need(r.path2, "path2", &t.newpath)) return e;
  } else if constexpr (requires { t.path; }) {
    if (int e = need(r.path, "path", &t.path)) return e;
  }
  if constexpr (requires { t.name; }) {
    if (int e = need(r.name, "name", &t.name)) return e;
  }
  if constexpr (requires { t.value; }) {
    if (r.value == nullptr && r.value_len != 0)
      return Fail(EINVAL, fmt::format("request: {}'s value is NULL but value_len is not 0", op));
    t.value.assign(static_cast<const char*>(r.value), r.value == nullptr ? 0 : r.value_len);
  }
  if constexpr (requires { t.flags; }) t.flags = r.flags;
  if constexpr (requires { t.mode; }) t.mode = r.mode;
  if constexpr (requires { t.type; }) t.type = r.type;
  if constexpr (requires { t.rdev_major; }) {
    t.rdev_major = r.rdev_major;
    t.rdev_minor = r.rdev_minor;
  }
  if constexpr (requires { t.uid; }) {
    t.uid = r.uid;
    t.gid = r.gid;
  }
  if constexpr (requires { t.cmd; }) t.cmd = r.cmd;
  if constexpr (requires { t.attr_set; }) {
    t.attr_set = r.attr_set;
    t.attr_clr = r.attr_clr;
  }
  if constexpr (requires { t.port; }) t.port = r.port;
  if constexpr (requires { t.xattr_flags; }) t.xattr_flags = r.xattr_flags;
  if constexpr (requires { t.offset; }) {
    t.offset = r.offset;
    t.len = r.len;
  }
  // utimensat's and futimens's times: NULL, or two PATHWARDEN_TIME_*.
  if constexpr (requires { t.times; }) {
    if (r.has_times) {
      std::array<TimeSpec, 2> times{};
      for (size_t i = 0; i < 2; ++i) {
        if (r.times[i] < PATHWARDEN_TIME_NOW || r.times[i] > PATHWARDEN_TIME_SET)
          return Fail(EINVAL, fmt::format("request: times[{}] is {}, not a PATHWARDEN_TIME_*", i,
                                          r.times[i]));
        times[i] = static_cast<TimeSpec>(r.times[i]);
      }
      t.times = times;
    }
  }
  if constexpr (requires { t.target.index; }) {  // a process, not a path
    if (Live(r.target, "request target") != 0) return -EINVAL;
    if (r.target->state != p.state)
      return Fail(EINVAL, "request: the target is a process of another model");
    t.target = r.target->p;
  }
  if constexpr (requires { t.ruleset; }) {
    if (Live(r.ruleset, "request ruleset") != 0) return -EINVAL;
    t.ruleset = BuildOn(*r.ruleset, p).second.ruleset;
  }
  return 0;
}

// ToRequest()
//
// The C request as a Request of `p`'s model; the query's words for JSON.
int ToRequest(const pathwarden_process& p, const pathwarden_request* r, query::Query* q) {
  if (r == nullptr) return Fail(EINVAL, "request is NULL");
  if (r->op < 0 || r->op >= kNumOps)
    return Fail(EINVAL, fmt::format("request: unknown op {}", r->op));
  const Op op = static_cast<Op>(r->op);
  q->op = std::string(OpName(op));
  q->path = r->path ? r->path : "";
  q->path2 = r->path2 ? r->path2 : "";
  int err = 0;
  const bool known = WithRequestType(op, [&](auto t) {
    err = FillRequest(p, *r, t);
    if (err == 0) q->request = std::move(t);
  });
  if (!known) return Fail(EINVAL, fmt::format("request: unknown op {}", r->op));
  return err;
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
    // The model changes as Unix and Landlock allow; the answer is ask's,
    // where a security module could refuse.
    Decision d = m.Apply(p->p, q.request, DetailOf(detail));
    if (const SecurityModules* lsms = m.security_modules(p->p))
      d = UnknownWhereModulesMayRefuse(*lsms, OpOf(q.request), std::move(d));
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
    if (op < 0 || op >= kNumOps) return Fail(EINVAL, fmt::format("unknown op {}", op));
    std::memset(r, 0, sizeof *r);
    r->op = op;
    r->dirfd = PATHWARDEN_AT_FDCWD;
    // The request type's own default mode (open and mknod 0644, mkdir
    // 0755), else 0.
    r->mode = 0;
    WithRequestType(static_cast<Op>(op), [&](const auto& t) {
      if constexpr (requires { t.mode; }) r->mode = t.mode;
    });
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
