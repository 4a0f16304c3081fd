// The engine's configurations that must all answer alike: what
// `pathwarden check --cross-check` runs every scenario file in.

#ifndef PATHWARDEN_SRC_SCENARIO_VARIANTS_H_
#define PATHWARDEN_SRC_SCENARIO_VARIANTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/scenario/run_engine.h"

namespace pathwarden {

// EngineVariant
//
// One setting of the engine's research switches, named as reports print
// it: "fast search, by-layer, memo", "no fast search, by-access, no memo,
// no reasons", "..., no register loop".
struct EngineVariant {
  std::string name;
  EngineOptions options;
};

// CrossCheckVariants()
//
// `base` in every variant that must give the same results, and when it
// explains (`options.explain`) the same reasons: for each layer-mask
// layout, fast search on and off with the memo on and off, then the
// unexplained hot path with the memo on and off; then by-layer with the
// memo and without the walk's register loop, fast search on and off.
// Each also checks the engine's caches and a dry run of every step
// (`verify`).
//
// Example:
//   for (const EngineVariant& v : CrossCheckVariants(EngineOptions{}))
//     RunResult r = RunInEngine(s, v.options);
std::vector<EngineVariant> CrossCheckVariants(const EngineOptions& base);

// VariantDifference
//
// A variant that did not run (`error` is its message, and nothing else is
// set), or a step (0-based) where it answered otherwise than the
// reference: another errno, or another reason from a variant that
// explains.
struct VariantDifference {
  std::string variant;
  std::string error;
  size_t step = 0;
  StepResult reference;
  StepResult got;
};

// CrossCheck()
//
// Runs `s` in every variant of CrossCheckVariants(base) and compares each
// with `reference`, a run of `s` with `base` that ran. The differences in
// variant order, each variant's in step order; none when all agree.
std::vector<VariantDifference> CrossCheck(const Scenario& s, const RunResult& reference,
                                          const EngineOptions& base);

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_SCENARIO_VARIANTS_H_
