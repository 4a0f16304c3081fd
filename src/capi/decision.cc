// The C API's decisions (pathwarden_decision_*): one answer's verdict,
// errno, reason, walk, DAC check and Landlock layers, made once when the
// answer comes; its JSON on first use.

#include <nlohmann/json.hpp>

#include "src/input/json_text.h"
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

namespace {

void FillCheck(const PermVerdict& v, bool fast, const std::string& by, pathwarden_check* out) {
  out->path = v.path.c_str();
  out->want = v.want;
  out->granted = v.decided_by == PermClass::kUnknown ? -1 : v.granted ? 1 : 0;
  out->fast = fast ? 1 : 0;
  out->decided_by = by.c_str();
  out->capability = v.capability;
  out->mode = v.mode;
  out->uid = v.uid;
  out->gid = v.gid;
  out->has_acl = v.has_acl ? 1 : 0;
  out->layer = v.layer.c_str();
}

const pathwarden_decision* LiveDecision(const pathwarden_decision* d) {
  return Live(d, "decision") == 0 ? d : nullptr;
}

// What every accessor of a decision's parts checks (its flags, the
// handle, `out`), then `fill(reason)`: 0 or -errno.
template <class Out, class Fill>
int WithReason(const pathwarden_decision* d, uint32_t flags, Out* out, Fill fill) {
  return Guard([&] {
    if (int e = CheckFlags(flags)) return e;
    if (int e = Live(d, "decision")) return e;
    if (out == nullptr) return Fail(EINVAL, "out is NULL");
    return fill(d->answer.decision.reason());
  });
}

// Index `i` of a part holding `n` (`what`: "component", `of`: "the
// walk"): 0, or ERANGE.
int InRange(size_t i, size_t n, std::string_view what, std::string_view of) {
  if (i < n) return 0;
  return Fail(ERANGE, fmt::format("{} {}: {} has {}", what, i, of, n));
}

// The number of a decision's parts (`part` of its reason).
template <class Part>
int PartCount(const pathwarden_decision* d, Part part) {
  return Guard([&] {
    if (int e = Live(d, "decision")) return e;
    return static_cast<int>(part(d->answer.decision.reason()).size());
  });
}

}  // namespace
}  // namespace pathwarden::capi

using namespace pathwarden;         // NOLINT: the C API's own files
using namespace pathwarden::capi;   // NOLINT

extern "C" {

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
  return PartCount(d, [](const Reason& r) -> const auto& { return r.components; });
}

int pathwarden_decision_component(const pathwarden_decision* d, size_t i, pathwarden_check* out,
                                  uint32_t flags) {
  return WithReason(d, flags, out, [&](const Reason& r) {
    if (int e = InRange(i, r.components.size(), "component", "the walk")) return e;
    FillCheck(r.components[i].check, r.components[i].fast, d->component_by[i], out);
    return 0;
  });
}

int pathwarden_decision_dac(const pathwarden_decision* d, pathwarden_check* out, uint32_t flags) {
  return WithReason(d, flags, out, [&](const Reason& r) {
    if (!r.dac) return Fail(ENOENT, "no DAC check was made");
    FillCheck(*r.dac, false, d->dac_by, out);
    return 0;
  });
}

int pathwarden_decision_layer_count(const pathwarden_decision* d) {
  return PartCount(d, [](const Reason& r) -> const auto& { return r.layers; });
}

int pathwarden_decision_layer(const pathwarden_decision* d, size_t i, pathwarden_layer* out,
                              uint32_t flags) {
  return WithReason(d, flags, out, [&](const Reason& r) {
    if (int e = InRange(i, r.layers.size(), "layer", "the decision")) return e;
    const LayerVerdict& l = r.layers[i];
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
  return WithReason(d, flags, out, [&](const Reason& r) {
    if (int e = InRange(layer, r.layers.size(), "layer", "the decision")) return e;
    const auto& grants = r.layers[layer].grants;
    if (int e = InRange(i, grants.size(), "grant", fmt::format("layer {}", layer))) return e;
    out->path = grants[i].path.c_str();
    out->granted = grants[i].granted;
    out->origin = d->grant_origin[layer][i].c_str();
    return 0;
  });
}

}  // extern "C"
