// The C API (include/pathwarden/pathwarden.h) over the Model, the policy
// files, the identities and explain's JSON: handles that own C++ values,
// arguments checked before anything is touched, -errno and a per-thread
// message for the API's own errors. This file: the version, the last
// error, models, building their trees, and processes; rulesets in
// ruleset.cc, requests in request.cc, decisions in decision.cc, the
// learner in learn.cc; the handles in handles.h.

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
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/scenario.h"
#include "src/capi/capi_util.h"
#include "src/capi/handles.h"
#include "src/api/model_impl.h"
#include "src/identity/identity.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"
#include "src/input/json_text.h"

namespace pathwarden::capi {
namespace {

static_assert(PATHWARDEN_FILE_BLOCK == static_cast<int>(FileType::kBlock));
static_assert(PATHWARDEN_MOUNT_RDONLY == kMountRdonly && PATHWARDEN_MOUNT_NOEXEC == kMountNoexec &&
              PATHWARDEN_MOUNT_NOSUID == kMountNosuid && PATHWARDEN_MOUNT_NODEV == kMountNodev &&
              PATHWARDEN_MOUNT_NOSYMFOLLOW == kMountNosymfollow);
static_assert(PATHWARDEN_CAPS_ALL == kCapAll);
static_assert(PATHWARDEN_AT_FDCWD == kAtFdcwd.num);

}  // namespace

}  // namespace pathwarden::capi

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

}  // namespace
}  // namespace pathwarden::capi

using namespace pathwarden;         // NOLINT: the C API's own files
using namespace pathwarden::capi;   // NOLINT

extern "C" {

const char* pathwarden_version(void) { return PATHWARDEN_VERSION; }

const char* pathwarden_last_error(void) { return tls_error.c_str(); }

const char* pathwarden_op_name(int op) {
  if (op < 0 || op >= static_cast<int>(std::variant_size_v<Request>)) return nullptr;
  // A codec row's name, a string literal: NUL-terminated.
  return OpName(static_cast<Op>(op)).data();
}

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
    if (flags & ~uint32_t{PATHWARDEN_HOST_ASSUME_UNSEEN_RUN_NOTHING})
      return Fail(EINVAL, fmt::format("flags {:#x}: only PATHWARDEN_HOST_* are known", flags));
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    if (consistency != PATHWARDEN_SNAPSHOT && consistency != PATHWARDEN_REVALIDATE)
      return Fail(EINVAL, fmt::format("consistency {} is not PATHWARDEN_SNAPSHOT or "
                                      "PATHWARDEN_REVALIDATE", consistency));
    HostOptions o;
    if (mountinfo != nullptr) o.mountinfo = mountinfo;
    o.assume_unseen_run_nothing = (flags & PATHWARDEN_HOST_ASSUME_UNSEEN_RUN_NOTHING) != 0;
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
    (void)model.SetControllingTty(p->p, who->ctty);
    // Its own labels (an AppArmor profile), not the reader's.
    if (model.security_modules() != nullptr) (void)model.ReadSecurityModulesOf(p->p, pid);
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

int pathwarden_process_set_userns(pathwarden_process* p, const char* uid_map,
                                  const char* gid_map, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(p, "process")) return e;
    if (int e = NeedString(uid_map, "uid_map")) return e;
    auto uids = ParseIdMap(uid_map, "uid_map");
    if (!uids) return Fail(EINVAL, uids.error());
    auto gids = gid_map ? ParseIdMap(gid_map, "gid_map") : uids;
    if (!gids) return Fail(EINVAL, gids.error());
    Model& m = p->state->model;
    Cred c = m.cred(p->p);
    auto ns = std::make_shared<UserNamespace>();
    ns->uid_map = std::move(*uids);
    ns->gid_map = std::move(*gids);
    ns->reader_inside = false;
    ns->owner = c.euid;  // the process makes it, as itself
    // A model read from inside a user namespace shows unmapped owners as
    // the overflow ids: the new namespace is a child of that one.
    if (const auto& reader = m.impl().reader_userns) {
      ns->overflow_shown = true;
      ns->overflow_uid = reader->overflow_uid;
      ns->overflow_gid = reader->overflow_gid;
    }
    for (uint32_t id : {c.ruid, c.euid, c.suid, c.fsuid})
      if (!ns->NamedUidMaps(id))
        return Fail(EINVAL, fmt::format("uid {} has no mapping in {}", id, ns->Describe()));
    for (uint32_t id : {c.rgid, c.egid, c.sgid, c.fsgid})
      if (!ns->NamedGidMaps(id))
        return Fail(EINVAL, fmt::format("gid {} has no mapping in {}", id, ns->Describe()));
    c.userns = std::move(ns);
    if (auto r = m.SetCred(p->p, c); !r) return Fail(r.error(), "the process is gone");
    return 0;
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

}  // extern "C"
