// The C API's learner (pathwarden_learner_*): the needs a program's calls
// had, made into a landlockconfig policy for this machine by the same
// code as `pathwarden trace --learn` (src/trace/learn_host.h).

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/landlock.h"
#include "pathwarden/pathwarden.h"
#include "src/capi/capi_util.h"
#include "src/trace/learn.h"
#include "src/trace/learn_host.h"

struct pathwarden_learner {
  static constexpr uint32_t kMagic = 0x70776c6e;  // "pwln"
  uint32_t magic = kMagic;
  // Each need checked as it comes (an error refuses it at once) and kept
  // by the learner, summed by path and rights; the policy learnt from it
  // each time it is asked for.
  pathwarden::trace::Learner learner;
  std::string toml;
  std::vector<std::string> beyond;
};

using pathwarden::capi::CheckFlags;
using pathwarden::capi::Fail;
using pathwarden::capi::Guard;
using pathwarden::capi::Live;
using pathwarden::capi::NeedString;
namespace trace = pathwarden::trace;
namespace landlock = pathwarden::landlock;

namespace {

int Add(pathwarden_learner* l, const trace::Need& n) {
  if (auto r = l->learner.Add(n); !r) return Fail(EINVAL, r.error());
  return 0;
}

}  // namespace

int pathwarden_learner_new(pathwarden_learner** out, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    *out = new pathwarden_learner;
    return 0;
  });
}

int pathwarden_learner_add_path(pathwarden_learner* l, const char* path, uint64_t access,
                                int directory, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(l, "learner")) return e;
    if (int e = NeedString(path, "path")) return e;
    if (access >> 32) return Fail(EINVAL, "learner: rights above bit 31");
    trace::Need n;
    n.kind = trace::Need::Kind::kFs;
    n.path = path;
    n.access = static_cast<landlock::AccessMask>(access);
    n.directory = directory != 0;
    return Add(l, n);
  });
}

int pathwarden_learner_add_port(pathwarden_learner* l, uint64_t port, uint64_t access,
                                uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(l, "learner")) return e;
    if (port > 65535) return Fail(EINVAL, fmt::format("learner: port {} is above 65535", port));
    if (access >> 32) return Fail(EINVAL, "learner: rights above bit 31");
    trace::Need n;
    n.kind = trace::Need::Kind::kNet;
    n.port = static_cast<uint32_t>(port);
    n.access = static_cast<landlock::AccessMask>(access);
    return Add(l, n);
  });
}

int pathwarden_learner_need_unscoped(pathwarden_learner* l, uint64_t scopes, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(l, "learner")) return e;
    if (scopes & ~uint64_t{landlock::kScopeAll})
      return Fail(EINVAL, fmt::format("learner: scopes {:#x} beyond Landlock's", scopes));
    trace::Need n;
    n.kind = trace::Need::Kind::kUnscope;
    n.access = static_cast<landlock::AccessMask>(scopes);
    return Add(l, n);
  });
}

int pathwarden_learner_policy(pathwarden_learner* l, int abi, const char** toml, uint32_t flags) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(l, "learner")) return e;
    if (toml == nullptr) return Fail(EINVAL, "toml is NULL");
    if (abi < 0 || abi > landlock::kAbiLatest)
      return Fail(EINVAL, fmt::format("learner: ABI {} (0 for this kernel's, or 1 to {})", abi,
                                      landlock::kAbiLatest));
    trace::LearnOptions options = trace::HostLearnOptions();
    if (abi != 0) options.abi = abi;
    auto r = trace::LearnOnHost(l->learner, options);
    if (!r) return Fail(EINVAL, "learner: " + r.error());
    l->toml = trace::ToToml(r->policy);
    l->beyond = std::move(r->beyond);
    *toml = l->toml.c_str();
    return static_cast<int>(l->beyond.size());
  });
}

const char* pathwarden_learner_beyond(const pathwarden_learner* l, size_t i) {
  pathwarden::capi::tls_error.clear();
  if (Live(l, "learner") != 0) return nullptr;
  if (i >= l->beyond.size()) {
    Fail(ERANGE, fmt::format("learner: note {} of {}", i, l->beyond.size()));
    return nullptr;
  }
  return l->beyond[i].c_str();
}

void pathwarden_learner_free(pathwarden_learner* l) {
  if (l == nullptr || l->magic != pathwarden_learner::kMagic) return;
  l->magic = 0;
  delete l;
}
