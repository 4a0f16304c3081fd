// The C API (include/pathwarden/pathwarden.h) over the Model, the policy
// files, the identities and explain's JSON: handles that own C++ values,
// arguments checked before anything is touched, -errno and a per-thread
// message for the API's own errors.

#include "pathwarden/pathwarden.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/scenario.h"
#include "src/capi/capi_util.h"
#include "src/api/model_impl.h"
#include "src/identity/identity.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"
#include "src/input/json_text.h"

namespace pathwarden::capi {
namespace {

static_assert(PATHWARDEN_OP_FCHDIR == static_cast<int>(Op::kFchdir), "pathwarden_op follows Op");
static_assert(PATHWARDEN_OP_FUTIMENS == static_cast<int>(Op::kFutimens), "pathwarden_op follows Op");
static_assert(PATHWARDEN_OP_RESTRICT == static_cast<int>(Op::kRestrict));
static_assert(PATHWARDEN_OP_UTIMENSAT == static_cast<int>(Op::kUtimensat));
static_assert(PATHWARDEN_FILE_BLOCK == static_cast<int>(FileType::kBlock));
static_assert(PATHWARDEN_MOUNT_RDONLY == kMountRdonly && PATHWARDEN_MOUNT_NOEXEC == kMountNoexec &&
              PATHWARDEN_MOUNT_NOSUID == kMountNosuid && PATHWARDEN_MOUNT_NODEV == kMountNodev &&
              PATHWARDEN_MOUNT_NOSYMFOLLOW == kMountNosymfollow);
static_assert(PATHWARDEN_CAPS_ALL == kCapAll);
static_assert(PATHWARDEN_AT_FDCWD == kAtFdcwd.num);

}  // namespace

// The layers a process was confined with, for the names decisions give
// them: replaced (never changed) when a layer is added, so a decision
// keeps the ones it was made under.
struct Layers {
  std::vector<policy::Policy> policies;
  std::vector<policy::HostLayer> built;
};

struct ModelState {
  explicit ModelState(Model m) : model(std::move(m)) {}
  Model model;
};

}  // namespace pathwarden::capi

using pathwarden::capi::Layers;
using pathwarden::capi::ModelState;

// The handles. Each starts with its own magic, checked on every call: a
// pointer to another kind of handle is -EBADF, not undefined behaviour.
struct pathwarden_model {
  static constexpr uint32_t kMagic = 0x70776d64;  // "pwmd"
  uint32_t magic = kMagic;
  std::shared_ptr<ModelState> state;
};

struct pathwarden_process {
  static constexpr uint32_t kMagic = 0x70777072;  // "pwpr"
  uint32_t magic = kMagic;
  std::shared_ptr<ModelState> state;
  pathwarden::Process p;
  std::shared_ptr<const Layers> layers = std::make_shared<const Layers>();
};

struct pathwarden_ruleset {
  static constexpr uint32_t kMagic = 0x7077726c;  // "pwrl"
  uint32_t magic = kMagic;
  bool from_policy = false;
  pathwarden::policy::Policy policy;       // from_policy
  pathwarden::LandlockRuleset ruleset;     // rules added by hand
};

struct pathwarden_decision {
  static constexpr uint32_t kMagic = 0x70776463;  // "pwdc"
  uint32_t magic = kMagic;
  pathwarden::query::Answer answer;
  std::shared_ptr<const Layers> layers;
  std::string stage, reason, result;
  std::vector<std::string> component_by;  // decided_by of each component
  std::string dac_by;
  std::vector<std::string> missing_names, policy;
  std::vector<std::vector<std::string>> grant_origin;
  mutable std::once_flag json_once;
  mutable std::string json;
};

namespace pathwarden::capi {
namespace {

// An error of the tree builder: Linux's errno, and in words.
int BuilderError(int err, std::string_view what, std::string_view path) {
  if (err < 0) return Fail(EIO, fmt::format("{} {}: the host model cannot see it", what, path));
  return Fail(err, fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

// Split()
//
// The directory (resolved) and the last name of absolute `path`.
int Split(const Model& m, std::string_view path, Node* dir, std::string* name, std::string_view what) {
  if (path.empty() || path[0] != '/')
    return Fail(EINVAL, fmt::format("{} {}: not an absolute path", what, path));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/") return BuilderError(EEXIST, what, path);
  const size_t slash = path.rfind('/');
  *name = std::string(path.substr(slash + 1));
  const std::string_view parent = slash == 0 ? std::string_view("/") : path.substr(0, slash);
  auto d = m.Lookup(parent);
  if (!d) return BuilderError(d.error(), what, path);
  *dir = *d;
  return 0;
}

int LookupNode(const Model& m, const char* path, Node* out, std::string_view what) {
  if (path[0] != '/') return Fail(EINVAL, fmt::format("{} {}: not an absolute path", what, path));
  auto n = m.Lookup(path);
  if (!n) return BuilderError(n.error(), what, path);
  *out = *n;
  return 0;
}

// A decision's refusal as the API's error (chmod by the builder, a
// process's chdir, a refused layer).
int Refused(const Decision& d, std::string_view what) {
  if (d.unknown()) return Fail(EIO, fmt::format("{}: unknown: {}", what, d.reason().unknown_why));
  return Fail(d.err(), fmt::format("{}: {}", what, d.ToText()));
}

// BuildOn()
//
// Ruleset `rs` as one layer on `p`'s model, as `p` opens its paths.
std::pair<policy::Policy, policy::HostLayer> BuildOn(const pathwarden_ruleset& rs,
                                                     const pathwarden_process& p) {
  const Model& m = p.state->model;
  if (!rs.from_policy) {
    policy::Policy none;
    policy::HostLayer l;
    l.ruleset = rs.ruleset;
    return {std::move(none), std::move(l)};
  }
  auto kind_of = [&](const std::string& path) {
    auto n = m.Resolve(p.p, path, true);
    if (!n) {
      const int err = n.error().err();
      return err == ENOENT || err == ENOTDIR ? policy::PathKind::kMissing
                                             : policy::PathKind::kDenied;
    }
    auto t = m.TypeOf(*n);
    return t && *t == FileType::kDirectory ? policy::PathKind::kDirectory
                                           : policy::PathKind::kOther;
  };
  return {rs.policy, policy::BuildLayer(rs.policy, m.abi(), kind_of)};
}

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

// NewDecision()
//
// The handle of one answer, its strings made now (the accessors only
// read; the JSON is made once, on first use).
pathwarden_decision* NewDecision(query::Query q, Decision d, std::shared_ptr<const Layers> layers) {
  auto* out = new pathwarden_decision;
  out->answer = query::Answer{std::move(q), std::move(d), std::nullopt, {}};
  out->layers = std::move(layers);
  const Decision& dec = out->answer.decision;
  const Reason& r = dec.reason();
  out->stage = std::string(StageName(r.stage));
  out->reason = dec.ToText();
  out->result = query::ResultName(dec);
  for (const ComponentVerdict& c : r.components)
    out->component_by.push_back(query::DecidedBy(c.check, c.fast));
  if (r.dac) out->dac_by = query::DecidedBy(*r.dac, false);
  const query::LayerOrigins origins{out->layers->policies, out->layers->built};
  for (const LayerVerdict& l : r.layers) {
    std::string names;
    for (const std::string& n : query::BlockerNames(l, l.missing)) {
      if (!names.empty()) names += ",";
      names += n;
    }
    out->missing_names.push_back(std::move(names));
    out->policy.push_back(query::LayerSource(origins, l.layer));
    std::vector<std::string> g;
    for (const RuleGrant& rg : l.grants) g.push_back(query::OriginOf(origins, rg));
    out->grant_origin.push_back(std::move(g));
  }
  return out;
}

void FillCheck(const PermVerdict& v, bool fast, const std::string& by, pathwarden_check* out) {
  out->path = v.path.c_str();
  out->want = v.want;
  out->granted = v.granted ? 1 : 0;
  out->fast = fast ? 1 : 0;
  out->decided_by = by.c_str();
  out->capability = v.capability;
  out->mode = v.mode;
  out->uid = v.uid;
  out->gid = v.gid;
  out->has_acl = v.has_acl ? 1 : 0;
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

const pathwarden_decision* LiveDecision(const pathwarden_decision* d) {
  return Live(d, "decision") == 0 ? d : nullptr;
}

}  // namespace
}  // namespace pathwarden::capi

using namespace pathwarden;         // NOLINT: the C API's one file
using namespace pathwarden::capi;   // NOLINT

extern "C" {

const char* pathwarden_version(void) { return PATHWARDEN_VERSION; }

const char* pathwarden_last_error(void) { return tls_error.c_str(); }

int pathwarden_model_new(pathwarden_model** out, int abi, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (abi < 0 || abi > landlock::kAbiLatest)
      return Fail(EINVAL, fmt::format("abi {} is not 0 (the latest) or 1 to {}", abi,
                                      landlock::kAbiLatest));
    auto* m = new pathwarden_model;
    m->state = std::make_shared<ModelState>(Model(abi == 0 ? landlock::kAbiLatest : abi));
    // A caller of the C API asks many queries of one model.
    SetPrefixMemo(m->state->model, true);
    *out = m;
    return 0;
  });
}

int pathwarden_model_from_host(pathwarden_model** out, const char* mountinfo, int consistency,
                               uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (consistency != PATHWARDEN_SNAPSHOT && consistency != PATHWARDEN_REVALIDATE)
      return Fail(EINVAL, fmt::format("consistency {} is not PATHWARDEN_SNAPSHOT or "
                                      "PATHWARDEN_REVALIDATE", consistency));
    HostOptions o;
    if (mountinfo != nullptr) o.mountinfo = mountinfo;
    o.consistency = consistency == PATHWARDEN_REVALIDATE ? HostOptions::Consistency::kRevalidate
                                                         : HostOptions::Consistency::kSnapshot;
    // Any process may ask such a model: read from inside a user namespace,
    // every id shown as the overflow id is ambiguous.
    o.overflow = identity::HostOverflowFor(Cred{}, /*many=*/true);
    auto host = Model::FromHost(o);
    if (!host) return Fail(EIO, host.error());
    auto* m = new pathwarden_model;
    m->state = std::make_shared<ModelState>(std::move(*host));
    SetPrefixMemo(m->state->model, true);
    *out = m;
    return 0;
  });
}

void pathwarden_model_free(pathwarden_model* m) {
  if (m == nullptr || m->magic != pathwarden_model::kMagic) return;
  m->magic = 0;
  delete m;
}

int pathwarden_model_mkdir(pathwarden_model* m, const char* path, uint32_t mode, uint32_t uid,
                           uint32_t gid, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    Model& model = m->state->model;
    Node dir;
    std::string name;
    if (int e = Split(model, path, &dir, &name, "mkdir")) return e;
    auto n = model.Mkdir(dir, name, {.mode = mode & 07777, .uid = uid, .gid = gid});
    return n ? 0 : BuilderError(n.error(), "mkdir", path);
  });
}

int pathwarden_model_create(pathwarden_model* m, const char* path, int type, const char* target,
                            uint32_t mode, uint32_t uid, uint32_t gid, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    if (type < PATHWARDEN_FILE_REGULAR || type > PATHWARDEN_FILE_BLOCK)
      return Fail(EINVAL, fmt::format("create {}: type {} is not a PATHWARDEN_FILE_*", path, type));
    if ((type == PATHWARDEN_FILE_SYMLINK) != (target != nullptr))
      return Fail(EINVAL, fmt::format("create {}: a symlink needs a target, other types none", path));
    Model& model = m->state->model;
    Node dir;
    std::string name;
    if (int e = Split(model, path, &dir, &name, "create")) return e;
    NodeKind kind;
    kind.type = static_cast<FileType>(type);
    if (target != nullptr) kind.target = target;
    auto n = model.Create(dir, name, kind, {.mode = mode & 07777, .uid = uid, .gid = gid});
    return n ? 0 : BuilderError(n.error(), "create", path);
  });
}

int pathwarden_model_chmod(pathwarden_model* m, const char* path, uint32_t mode, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    Model& model = m->state->model;
    const Decision d = model.Apply(model.Init(), Chmod{.path = path, .mode = mode});
    return d.allowed() ? 0 : Refused(d, fmt::format("chmod {}", path));
  });
}

int pathwarden_model_chown(pathwarden_model* m, const char* path, int64_t uid, int64_t gid,
                           uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    if (uid < -1 || uid > 0xfffffffe || gid < -1 || gid > 0xfffffffe)
      return Fail(EINVAL, fmt::format("chown {}: {}:{} are not ids (-1 keeps)", path, uid, gid));
    Model& model = m->state->model;
    const Decision d = model.Apply(model.Init(), Chown{.path = path, .uid = uid, .gid = gid});
    return d.allowed() ? 0 : Refused(d, fmt::format("chown {}", path));
  });
}

int pathwarden_model_setfacl(pathwarden_model* m, const char* path, const char* acl,
                             const char* default_acl, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    Model& model = m->state->model;
    Node n;
    if (int e = LookupNode(model, path, &n, "setfacl")) return e;
    const vfs::Inode& ino = EngineOf(model).world().inode(n.inode);
    NodeAttrs attrs{.mode = ino.mode & 07777, .uid = ino.uid, .gid = ino.gid};
    if (acl != nullptr) {
      auto entries = PosixAcl::ParseEntries(acl);
      if (!entries) return Fail(EINVAL, fmt::format("setfacl {}: {}", path, entries.error()));
      attrs.acl = std::move(*entries);
    }
    if (default_acl != nullptr) {
      auto t = model.TypeOf(n);
      if (!t || *t != FileType::kDirectory)
        return Fail(EACCES, fmt::format("setfacl {}: only a directory has a default ACL", path));
      auto entries = PosixAcl::ParseEntries(default_acl);
      if (!entries) return Fail(EINVAL, fmt::format("setfacl {}: {}", path, entries.error()));
      attrs.default_acl = std::move(*entries);
    }
    auto r = model.SetAttrs(n, attrs);
    return r ? 0 : BuilderError(r.error(), "setfacl", path);
  });
}

int pathwarden_model_mount_tmpfs(pathwarden_model* m, const char* path, uint32_t mode,
                                 uint32_t uid, uint32_t gid, uint32_t mount_flags,
                                 uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    constexpr uint32_t kKnown = PATHWARDEN_MOUNT_NOEXEC | PATHWARDEN_MOUNT_NOSUID |
                                PATHWARDEN_MOUNT_NODEV | PATHWARDEN_MOUNT_NOSYMFOLLOW;
    if (mount_flags & ~kKnown)
      return Fail(EINVAL, fmt::format("mount {}: mount flags {:#x}: only NOEXEC, NOSUID, NODEV and "
                                      "NOSYMFOLLOW (RDONLY: remount after filling it)",
                                      path, mount_flags));
    Model& model = m->state->model;
    Node at;
    if (int e = LookupNode(model, path, &at, "mount")) return e;
    auto r = model.MountTmpfs(at, {.mode = mode & 07777, .uid = uid, .gid = gid}, mount_flags);
    return r ? 0 : BuilderError(r.error(), "mount", path);
  });
}

int pathwarden_model_remount(pathwarden_model* m, const char* path, uint32_t mount_flags,
                             uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(path, "path")) return e;
    if (mount_flags & ~uint32_t{0x1f})
      return Fail(EINVAL, fmt::format("remount {}: unknown mount flags {:#x}", path, mount_flags));
    Model& model = m->state->model;
    Node root;
    if (int e = LookupNode(model, path, &root, "remount")) return e;
    auto r = model.Remount(root, mount_flags, true);
    return r ? 0 : BuilderError(r.error(), "remount", path);
  });
}

int pathwarden_model_set_sysctl(pathwarden_model* m, const char* name, int value, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (int e = NeedString(name, "name")) return e;
    Model& model = m->state->model;
    for (const SysctlField& f : kSysctlFields) {
      if (f.name != name) continue;
      if (value < 0 || value > f.max)
        return Fail(EINVAL, fmt::format("{}: {} is not 0 to {}", name, value, f.max));
      Sysctls s = model.sysctls();
      s.*f.value = value;
      model.SetSysctls(s);
      return 0;
    }
    return Fail(EINVAL, fmt::format("{}: not a protected_* sysctl", name));
  });
}

int pathwarden_process_new(pathwarden_model* m, const char* name, const pathwarden_cred* cred,
                           pathwarden_process** out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (cred == nullptr) return Fail(EINVAL, "cred is NULL");
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (cred->ngroups > 0 && cred->groups == nullptr)
      return Fail(EINVAL, "cred: ngroups > 0 and groups NULL");
    if (cred->caps & ~kCapAll)
      return Fail(EINVAL, fmt::format("cred: caps {:#x} has bits above CAP_CHECKPOINT_RESTORE",
                                      cred->caps));
    if (cred->umask & ~0777u) return Fail(EINVAL, fmt::format("cred: umask {:o}", cred->umask));
    Cred c = Cred::ForUser(cred->uid, cred->gid);
    c.cap_effective = c.cap_permitted = cred->caps;
    c.umask = cred->umask;
    c.SetGroups(std::vector<uint32_t>(cred->groups, cred->groups + cred->ngroups));
    auto* p = new pathwarden_process;
    p->state = m->state;
    p->p = m->state->model.Spawn(name != nullptr ? name : "process", c);
    *out = p;
    return 0;
  });
}

int pathwarden_process_from_pid(pathwarden_model* m, pid_t pid, pathwarden_process** out,
                                uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(m, "model")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (pid <= 0) return Fail(EINVAL, fmt::format("pid {} is not a process", pid));
    const std::string proc = fmt::format("/proc/{}", pid);
    struct stat st;
    if (stat(proc.c_str(), &st) != 0)
      return Fail(errno == ENOENT ? ESRCH : errno, fmt::format("{}: {}", proc, std::strerror(errno)));
    identity::IdentityOptions o;
    o.pid = pid;
    auto who = identity::ResolveIdentity(o);
    if (!who) return Fail(EACCES, who.error());
    Model& model = m->state->model;
    Process setup = model.Spawn(fmt::format("setup of pid {}", pid), Cred::ForUser(0, 0));
    if (who->root != "/") {
      const Decision d = model.Apply(setup, Chroot{.path = who->root});
      if (!d.allowed()) return Refused(d, fmt::format("pid {}: root {}", pid, who->root));
    }
    if (who->cwd != "/") {
      const Decision d = model.Apply(setup, Chdir{.path = who->cwd});
      if (!d.allowed()) return Refused(d, fmt::format("pid {}: working directory {}", pid, who->cwd));
    }
    auto* p = new pathwarden_process;
    p->state = m->state;
    p->p = model.Spawn(fmt::format("pid {}", pid), who->cred, setup);
    *out = p;
    return 0;
  });
}

void pathwarden_process_free(pathwarden_process* p) {
  if (p == nullptr || p->magic != pathwarden_process::kMagic) return;
  p->magic = 0;
  delete p;
}

int pathwarden_process_layers(const pathwarden_process* p, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(p, "process")) return e;
    return p->state->model.layers(p->p);
  });
}

int pathwarden_process_chdir(pathwarden_process* p, const char* path, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(p, "process")) return e;
    if (int e = NeedString(path, "path")) return e;
    const Decision d = p->state->model.Apply(p->p, Chdir{.path = path});
    return d.allowed() ? 0 : Refused(d, fmt::format("chdir {}", path));
  });
}

int pathwarden_ruleset_load(pathwarden_ruleset** out, const char* file_or_dir, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (int e = NeedString(file_or_dir, "file_or_dir")) return e;
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == nullptr)
      return Fail(errno, fmt::format("the working directory: {}", std::strerror(errno)));
    auto p = policy::LoadPolicy(file_or_dir, cwd);
    if (!p) return Fail(EINVAL, p.error());
    auto* rs = new pathwarden_ruleset;
    rs->from_policy = true;
    rs->policy = std::move(*p);
    *out = rs;
    return 0;
  });
}

int pathwarden_ruleset_new(pathwarden_ruleset** out, uint64_t handled_fs, uint64_t handled_net,
                           uint64_t scoped, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    // Masks beyond 32 bits are no rights the model has: the kernel's
    // EINVAL comes when restricting, for those it does not know.
    if ((handled_fs | handled_net | scoped) >> 32)
      return Fail(EINVAL, "ruleset: rights above bit 31");
    auto* rs = new pathwarden_ruleset;
    rs->ruleset.handled_access_fs = static_cast<landlock::AccessMask>(handled_fs);
    rs->ruleset.handled_access_net = static_cast<landlock::AccessMask>(handled_net);
    rs->ruleset.scoped = static_cast<landlock::AccessMask>(scoped);
    *out = rs;
    return 0;
  });
}

int pathwarden_ruleset_allow_path(pathwarden_ruleset* rs, const char* path, uint64_t access,
                                  uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(rs, "ruleset")) return e;
    if (int e = NeedString(path, "path")) return e;
    if (rs->from_policy) return Fail(EINVAL, "ruleset: loaded from a policy file: add rules there");
    if (access >> 32) return Fail(EINVAL, "ruleset: rights above bit 31");
    rs->ruleset.AllowPath(path, static_cast<landlock::AccessMask>(access));
    return 0;
  });
}

int pathwarden_ruleset_allow_port(pathwarden_ruleset* rs, uint64_t port, uint64_t access,
                                  uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(rs, "ruleset")) return e;
    if (rs->from_policy) return Fail(EINVAL, "ruleset: loaded from a policy file: add rules there");
    if (access >> 32) return Fail(EINVAL, "ruleset: rights above bit 31");
    rs->ruleset.AllowPort(port, static_cast<landlock::AccessMask>(access));
    return 0;
  });
}

void pathwarden_ruleset_free(pathwarden_ruleset* rs) {
  if (rs == nullptr || rs->magic != pathwarden_ruleset::kMagic) return;
  rs->magic = 0;
  delete rs;
}

int pathwarden_process_restrict(pathwarden_process* p, const pathwarden_ruleset* rs,
                                uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(p, "process")) return e;
    if (int e = Live(rs, "ruleset")) return e;
    auto [pol, layer] = BuildOn(*rs, *p);
    const Decision d = p->state->model.Apply(p->p, Restrict{layer.ruleset});
    if (!d.allowed()) return Refused(d, "restrict");
    auto next = std::make_shared<Layers>(*p->layers);
    // Layer numbers count the domain's layers: one made elsewhere (none
    // here; a fork would inherit) is named "".
    next->policies.resize(static_cast<size_t>(p->state->model.layers(p->p)) - 1);
    next->built.resize(next->policies.size());
    next->policies.push_back(std::move(pol));
    next->built.push_back(std::move(layer));
    p->layers = std::move(next);
    return 0;
  });
}

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

void pathwarden_decision_free(pathwarden_decision* d) {
  if (d == nullptr || d->magic != pathwarden_decision::kMagic) return;
  d->magic = 0;
  delete d;
}

int pathwarden_decision_verdict(const pathwarden_decision* d) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    const Decision& dec = d->answer.decision;
    return static_cast<int>(dec.allowed()  ? PATHWARDEN_ALLOWED
                            : dec.denied() ? PATHWARDEN_DENIED
                                           : PATHWARDEN_UNKNOWN);
  });
}

int pathwarden_decision_errno(const pathwarden_decision* d) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    const Decision& dec = d->answer.decision;
    return dec.unknown() ? -ENODATA : dec.err();
  });
}

int pathwarden_decision_fd(const pathwarden_decision* d) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    return d->answer.decision.fd().num;
  });
}

const char* pathwarden_decision_stage(const pathwarden_decision* d) {
  tls_error.clear();
  return LiveDecision(d) ? d->stage.c_str() : nullptr;
}

const char* pathwarden_decision_reason(const pathwarden_decision* d) {
  tls_error.clear();
  return LiveDecision(d) ? d->reason.c_str() : nullptr;
}

const char* pathwarden_decision_unknown_why(const pathwarden_decision* d) {
  tls_error.clear();
  return LiveDecision(d) ? d->answer.decision.reason().unknown_why.c_str() : nullptr;
}

const char* pathwarden_decision_result(const pathwarden_decision* d) {
  tls_error.clear();
  return LiveDecision(d) ? d->result.c_str() : nullptr;
}

const char* pathwarden_decision_json(const pathwarden_decision* d, uint32_t flags) {
  const char* out = nullptr;
  Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    std::call_once(d->json_once, [&] {
      d->json = input::JsonText(query::RenderJson(
          query::LayerOrigins{d->layers->policies, d->layers->built}, d->answer));
    });
    out = d->json.c_str();
    return 0;
  });
  return out;
}

int pathwarden_decision_component_count(const pathwarden_decision* d) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    return static_cast<int>(d->answer.decision.reason().components.size());
  });
}

int pathwarden_decision_component(const pathwarden_decision* d, size_t i, pathwarden_check* out,
                                  uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    const auto& c = d->answer.decision.reason().components;
    if (i >= c.size())
      return Fail(ERANGE, fmt::format("component {}: the walk has {}", i, c.size()));
    FillCheck(c[i].check, c[i].fast, d->component_by[i], out);
    return 0;
  });
}

int pathwarden_decision_dac(const pathwarden_decision* d, pathwarden_check* out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    const auto& dac = d->answer.decision.reason().dac;
    if (!dac) return Fail(ENOENT, "no DAC check was made");
    FillCheck(*dac, false, d->dac_by, out);
    return 0;
  });
}

int pathwarden_decision_layer_count(const pathwarden_decision* d) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    return static_cast<int>(d->answer.decision.reason().layers.size());
  });
}

int pathwarden_decision_layer(const pathwarden_decision* d, size_t i, pathwarden_layer* out,
                              uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    const auto& layers = d->answer.decision.reason().layers;
    if (i >= layers.size())
      return Fail(ERANGE, fmt::format("layer {}: the decision has {}", i, layers.size()));
    const LayerVerdict& l = layers[i];
    out->layer = l.layer;
    out->kind = l.kind == LayerVerdict::Kind::kFs    ? PATHWARDEN_LAYER_FS
                : l.kind == LayerVerdict::Kind::kNet ? PATHWARDEN_LAYER_NET
                                                     : PATHWARDEN_LAYER_SCOPE;
    out->requested = l.requested;
    out->missing = l.missing;
    out->missing_names = d->missing_names[i].c_str();
    out->policy = d->policy[i].c_str();
    out->grant_count = l.grants.size();
    return 0;
  });
}

int pathwarden_decision_grant(const pathwarden_decision* d, size_t layer, size_t i,
                              pathwarden_grant* out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    const auto& layers = d->answer.decision.reason().layers;
    if (layer >= layers.size())
      return Fail(ERANGE, fmt::format("layer {}: the decision has {}", layer, layers.size()));
    const auto& grants = layers[layer].grants;
    if (i >= grants.size())
      return Fail(ERANGE, fmt::format("grant {}: layer {} has {}", i, layer, grants.size()));
    out->path = grants[i].path.c_str();
    out->granted = grants[i].granted;
    out->origin = d->grant_origin[layer][i].c_str();
    return 0;
  });
}

}  // extern "C"
