// File: src/fuzz/generator.h
//
// Random scenarios for the differential fuzzer: a tree (directories, files,
// symlinks of every kind, special files, tmpfs and bind mounts with their
// flags, modes with setuid/setgid/sticky, owners, ACLs, attributes,
// sysctls), processes (ids, groups, capabilities, umasks, cwds, valid
// Landlock layers, nested domains) and steps of every operation, with
// paths that mostly reach existing objects in many spellings.
//
// Every scenario it returns parses back from its TOML to the same value
// and builds in the engine; expectations are all "ok" (the runner fills in
// the kernel's answers when it writes one out).
//
// Example:
//   GenOptions o;
//   Scenario s = GenerateScenario(CaseSeed(seed, i), o);

#ifndef PATHWARDEN_SRC_FUZZ_GENERATOR_H_
#define PATHWARDEN_SRC_FUZZ_GENERATOR_H_

#include <cstdint>
#include <string>

#include "pathwarden/scenario.h"

namespace pathwarden::fuzz {

struct GenOptions {
  int steps_min = 10;
  int steps_max = 40;
  // The capabilities processes may be given (the machine's, for the
  // kernel to grant them); a cap outside is never generated.
  uint64_t caps_available = ~uint64_t{0};
};

// GenerateScenario()
//
// The scenario of `case_seed` (see CaseSeed()): the same seed and options
// give the same scenario. `description` names the seed.
Scenario GenerateScenario(uint64_t case_seed, const GenOptions& options);

// ValidateScenario()
//
// "" when `s` round-trips through ScenarioToToml() and ParseScenario()
// unchanged and builds in the engine; else what is wrong.
// `build` false leaves the last to the caller (whose RunInEngine() says
// kError then), as building is the costly part.
std::string ValidateScenario(const Scenario& s, bool build = true);


}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_GENERATOR_H_
