// File: src/fuzz/shrinker.h
//
// Delta debugging of scenarios: the smallest scenario found that still
// has a property (for the fuzzer: "still builds, runs on the kernel and
// disagrees with it in the same way"). It removes steps, processes,
// layers, rules and nodes, then simplifies what remains (flags, modes,
// owners, ACLs, capabilities, sysctls, paths), and repeats while anything
// shrinks.
//
// Example:
//   Scenario small = Shrink(s, [&](const Scenario& c) { return StillFails(c); }, {});

#ifndef PATHWARDEN_SRC_FUZZ_SHRINKER_H_
#define PATHWARDEN_SRC_FUZZ_SHRINKER_H_

#include <cstdint>
#include <functional>

#include "pathwarden/scenario.h"

namespace pathwarden::fuzz {

struct ShrinkOptions {
  // At most this many candidates are tried (each costs one predicate call).
  int max_tries = 600;
};

struct ShrinkStats {
  int tries = 0;     // predicate calls
  int accepted = 0;  // candidates that kept the property
};

// Shrink()
//
// `keep(s)` must hold. Returns a scenario for which `keep` holds and no
// single reduction tried keeps it (or the best one when the budget ran
// out). `keep` is never called on `s` itself.
Scenario Shrink(const Scenario& s, const std::function<bool(const Scenario&)>& keep,
                const ShrinkOptions& options, ShrinkStats* stats = nullptr);

// ScenarioSize()
//
// A measure shrinking decreases: elements, set bits and path lengths.
uint64_t ScenarioSize(const Scenario& s);

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_SHRINKER_H_
