// BuildLayer(): a policy as landlockconfig builds it on a host
// (landlockconfig:src/config.rs ResolvedConfig::build_ruleset, with
// rust-landlock's best-effort compatibility).

#include <cerrno>

#include <fmt/format.h>

#include "pathwarden/model.h"
#include "src/policy/policy.h"

namespace pathwarden::policy {
namespace {

std::string At(const std::vector<Origin>& origins) {
  if (origins.empty()) return "";
  const Origin& o = origins.front();
  if (o.line == 0) return o.file + ": ";
  return fmt::format("{}:{}:{}: ", o.file, o.line, o.col);
}

}  // namespace

HostLayer BuildLayer(const Policy& p, int abi,
                     const std::function<PathKind(const std::string&)>& kind_of) {
  using landlock::AccessMask;
  HostLayer h;
  if (abi < 1) abi = 1;
  if (abi > landlock::kAbiLatest) abi = landlock::kAbiLatest;
  const landlock::AbiRights k = landlock::RightsForAbi(abi);
  if (p.abi && *p.abi > abi)
    h.warnings.push_back(fmt::format("{}: policy ABI {} is above the kernel's ({}): clamped to {}",
                                     p.source, *p.abi, abi, abi));
  // Best effort: what the kernel's ABI lacks is not asked for.
  auto drop = [&](AccessMask want, AccessMask known, std::string (*names)(AccessMask),
                  std::string_view what) {
    if (AccessMask lost = want & ~known)
      h.warnings.push_back(fmt::format("{}: {} unknown to ABI {} dropped: {}", p.source, what, abi,
                                       names(lost)));
    return want & known;
  };
  h.ruleset.handled_access_fs = drop(p.handled_fs, k.fs, landlock::FsAuditNames, "handled rights");
  h.ruleset.handled_access_net =
      drop(p.handled_net, k.net, landlock::NetAuditNames, "handled rights");
  h.ruleset.scoped = drop(p.scoped, k.scoped, landlock::ScopeAuditNames, "scopes");
  for (const PathRule& r : p.paths) {
    AccessMask access = r.access & h.ruleset.handled_access_fs;
    if (access == 0) {
      h.warnings.push_back(fmt::format("{}rule on \"{}\": none of its rights ({}) exists at ABI {}; "
                                       "skipped",
                                       At(r.origins), r.path, landlock::FsAuditNames(r.access), abi));
      continue;
    }
    const PathKind kind = kind_of(r.path);
    if (kind == PathKind::kMissing) {
      h.warnings.push_back(
          fmt::format("{}rule on \"{}\": no such file or directory; skipped", At(r.origins), r.path));
      continue;
    }
    if (kind == PathKind::kDenied) {
      h.warnings.push_back(fmt::format(
          "{}rule on \"{}\": the process may not open it (permission denied); skipped",
          At(r.origins), r.path));
      continue;
    }
    if (kind == PathKind::kOther && (access & ~landlock::kFsFileRights)) {
      const AccessMask kept = access & landlock::kFsFileRights;
      h.warnings.push_back(fmt::format(
          "{}rule on \"{}\": not a directory, so only file rights apply: {} dropped{}",
          At(r.origins), r.path, landlock::FsAuditNames(access & ~landlock::kFsFileRights),
          kept ? "" : "; skipped"));
      access = kept;
      if (access == 0) continue;
    }
    h.ruleset.AllowPath(r.path, access);
    h.origins.push_back(r.origins);
  }
  for (const PortRule& r : p.ports) {
    const AccessMask access = r.access & h.ruleset.handled_access_net;
    if (access == 0) {
      h.warnings.push_back(fmt::format("{}rule on port {}: none of its rights exists at ABI {}; "
                                       "skipped",
                                       At(r.origins), r.port, abi));
      continue;
    }
    h.ruleset.AllowPort(r.port, access);
    h.origins.push_back(r.origins);
  }
  return h;
}

HostLayer BuildLayerOn(const Policy& p, const Model& m, Process builder) {
  return BuildLayer(p, m.abi(), [&](const std::string& path) {
    auto n = m.Resolve(builder, path, true);
    if (!n) {
      const int err = n.error().err();
      return err == ENOENT || err == ENOTDIR ? PathKind::kMissing : PathKind::kDenied;
    }
    auto t = m.TypeOf(*n);
    return t && *t == FileType::kDirectory ? PathKind::kDirectory : PathKind::kOther;
  });
}

}  // namespace pathwarden::policy
