// The engine's research switches: the variants the tests and benchmarks
// compare (the fast search check, the walk's register loop, the two
// layer-mask layouts, the memo), how much to explain, self-checks, and
// the counters of a run. Internal: not part of the public API, whose
// answers do not depend on them.

#ifndef PATHWARDEN_SRC_BASE_ENGINE_OPTIONS_H_
#define PATHWARDEN_SRC_BASE_ENGINE_OPTIONS_H_

#include <cstdint>

namespace pathwarden {

// Landlock's unfulfilled-rights matrix, in the two layouts of the seed
// patch "landlock: Refactor layer masks".
enum class LayerLayout { kByAccess, kByLayer };

struct EngineOptions {
  // The fast search check ("permission check avoidance during lookup").
  bool fast_search = true;
  // The walk's register loop for plain components; off only to check it
  // against the general code (check --cross-check does).
  bool plain_components = true;
  LayerLayout layout = LayerLayout::kByLayer;
  // Memoized Landlock evaluation (results identical to the walk).
  bool memo = true;
  // The walk's prefix memo (src/walk/namei.h) for the model's evaluations
  // (SetPrefixMemo()); what a query::Session turns on. Off by default: a
  // single query gains nothing from it.
  bool prefix_memo = false;
  // Build a reason for each step (the hot path builds none without).
  bool explain = true;
  // With `explain`, only for the steps whose result is not the one the
  // scenario expects (a dry run without a reason decides first): what
  // check --quiet shows. Reasons name whole paths, so keeping one per
  // step would cost memory and time in the depth of the tree.
  bool explain_mismatches_only = false;
  bool capture_tree = false;
  // Explain allowed decisions too (which rule granted each right).
  bool explain_allowed = false;
  // Before every step, a dry run (Engine::Evaluate(), what readers get)
  // must give the step's result; after it, the engine's caches (the
  // fast-search bits, the dentries' mirrors, counts) must match their
  // definitions. Either failing stops the run with an internal error.
  // For tests: it costs a scan per step.
  bool verify = false;
};

// Counters of one engine run.
struct EngineStats {
  uint64_t components = 0;       // path components walked
  uint64_t fast_components = 0;  // of which took the fast search check
};

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_BASE_ENGINE_OPTIONS_H_
