// File: src/fuzz/scenario_equal.h
//
// Structural comparison of two scenarios: every field that changes what
// runs, none of the bookkeeping (source locations, the text flags and
// expectations were written as, the file name, the description).
//
// Example:
//   auto back = ParseScenario(ScenarioToToml(s), "x.toml", false);
//   std::string diff = FirstDifference(s, *back);  // "" when equal

#ifndef PATHWARDEN_SRC_FUZZ_SCENARIO_EQUAL_H_
#define PATHWARDEN_SRC_FUZZ_SCENARIO_EQUAL_H_

#include <string>

#include "pathwarden/scenario.h"

namespace pathwarden::fuzz {

// FirstDifference()
//
// "" when `a` and `b` run the same; else where they first differ
// ("step 3: flags differs").
std::string FirstDifference(const Scenario& a, const Scenario& b);

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_SCENARIO_EQUAL_H_
