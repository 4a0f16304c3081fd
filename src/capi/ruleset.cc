// The C API's Landlock rulesets (pathwarden_ruleset_*) and a process's
// restriction by one (pathwarden_process_restrict()).

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
#include "src/capi/capi_util.h"
#include "src/capi/handles.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::capi {

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
  return {rs.policy, policy::BuildLayerOn(rs.policy, m, p.p)};
}

}  // namespace pathwarden::capi

using namespace pathwarden;         // NOLINT: the C API's own files
using namespace pathwarden::capi;   // NOLINT

extern "C" {

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

}  // extern "C"
