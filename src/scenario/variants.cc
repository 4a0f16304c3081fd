// The cross-check matrix of engine variants, and the comparison of their
// runs with a reference run.

#include "src/scenario/variants.h"

#include <fmt/format.h>

namespace pathwarden {

std::vector<EngineVariant> CrossCheckVariants(const EngineOptions& base) {
  struct Switches {
    bool fast, memo, explain, plain;
    LayerLayout layout;
    bool prefix = false;  // the walk's prefix memo (a session's evaluations)
  };
  std::vector<Switches> all;
  for (LayerLayout layout : {LayerLayout::kByLayer, LayerLayout::kByAccess}) {
    for (bool fast : {true, false})
      for (bool memo : {true, false}) all.push_back({fast, memo, true, true, layout});
    for (bool memo : {true, false}) all.push_back({true, memo, false, true, layout});
  }
  for (bool explain : {true, false})
    all.push_back({true, true, explain, true, LayerLayout::kByLayer, true});
  for (bool fast : {true, false}) all.push_back({fast, true, true, false, LayerLayout::kByLayer});

  std::vector<EngineVariant> variants;
  variants.reserve(all.size());
  for (const Switches& sw : all) {
    EngineVariant v;
    v.name = fmt::format("{}, {}, {}{}{}{}", sw.fast ? "fast search" : "no fast search",
                         sw.layout == LayerLayout::kByLayer ? "by-layer" : "by-access",
                         sw.memo ? "memo" : "no memo", sw.explain ? "" : ", no reasons",
                         sw.plain ? "" : ", no register loop", sw.prefix ? ", prefix memo" : "");
    v.options = base;
    v.options.fast_search = sw.fast;
    v.options.memo = sw.memo;
    v.options.explain = sw.explain;
    v.options.plain_components = sw.plain;
    v.options.layout = sw.layout;
    v.options.prefix_memo = sw.prefix;
    v.options.verify = true;
    variants.push_back(std::move(v));
  }
  return variants;
}

std::vector<VariantDifference> CrossCheck(const Scenario& s, const RunResult& reference,
                                          const EngineOptions& base) {
  std::vector<VariantDifference> diffs;
  for (const EngineVariant& v : CrossCheckVariants(base)) {
    RunResult other = RunInEngine(s, v.options);
    if (other.status == RunResult::Status::kError) {
      VariantDifference d;
      d.variant = v.name;
      d.error = other.message;
      diffs.push_back(std::move(d));
      continue;
    }
    for (size_t i = 0; i < s.steps.size() && i < reference.steps.size() && i < other.steps.size();
         ++i) {
      const StepResult& a = reference.steps[i];
      const StepResult& b = other.steps[i];
      if (a.err == b.err && (!v.options.explain || a.reason == b.reason)) continue;
      VariantDifference d;
      d.variant = v.name;
      d.step = i;
      d.reference = a;
      d.got = b;
      diffs.push_back(std::move(d));
    }
  }
  return diffs;
}

}  // namespace pathwarden
