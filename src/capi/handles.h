// The C API's handles (the opaque types of include/pathwarden/
// pathwarden.h) and what the files of src/capi share about them: each
// handle owns C++ values, and starts with its own magic, checked on every
// call.

#ifndef PATHWARDEN_SRC_CAPI_HANDLES_H_
#define PATHWARDEN_SRC_CAPI_HANDLES_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/decision.h"
#include "pathwarden/model.h"
#include "pathwarden/pathwarden.h"
#include "src/capi/capi_util.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::capi {

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

// A decision's refusal as the API's error (chmod by the builder, a
// process's chdir, a refused layer).
inline int Refused(const Decision& d, std::string_view what) {
  if (d.unknown()) return Fail(EIO, fmt::format("{}: unknown: {}", what, d.reason().unknown_why));
  return Fail(d.err(), fmt::format("{}: {}", what, d.ToText()));
}

// BuildOn()
//
// Ruleset `rs` as one layer on `p`'s model, as `p` opens its paths
// (ruleset.cc).
std::pair<policy::Policy, policy::HostLayer> BuildOn(const pathwarden_ruleset& rs,
                                                     const pathwarden_process& p);

// NewDecision()
//
// The handle of one answer (decision.cc).
pathwarden_decision* NewDecision(query::Query q, Decision d, std::shared_ptr<const Layers> layers);

}  // namespace pathwarden::capi

#endif  // PATHWARDEN_SRC_CAPI_HANDLES_H_
