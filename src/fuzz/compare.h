// File: src/fuzz/compare.h
//
// The comparator of the differential fuzzer: where the engine's run of a
// scenario disagrees with the kernel's (a step's errno, the final tree, or
// whether the scenario builds at all), in a form the shrinker can ask
// "is this still the same disagreement?".
//
// Example:
//   Disagreement d = Compare(s, engine, kernel);
//   if (d) fmt::print("{}\n", d.Summary(s));

#ifndef PATHWARDEN_SRC_FUZZ_COMPARE_H_
#define PATHWARDEN_SRC_FUZZ_COMPARE_H_

#include <string>
#include <vector>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"

namespace pathwarden::fuzz {

struct Disagreement {
  enum class Kind { kNone, kStep, kTree, kBuild };
  Kind kind = Kind::kNone;
  // kStep: the first step (0-based) whose errnos differ, and its errnos.
  size_t step = 0;
  Op op = Op::kStat;
  int engine_err = 0, kernel_err = 0;
  std::string engine_reason;
  // kTree: the first differences ("path: engine ..., kernel ...", at most
  // kMaxTreeDetails: a deep tree's paths are long); kBuild: the messages of
  // the side that did not build.
  std::vector<std::string> details;
  // kTree: how many objects differ in all.
  size_t tree_differences = 0;
  static constexpr size_t kMaxTreeDetails = 10;
  // kTree: what differs first ("presence", "type", "mode", "owner",
  // "nlink", "size", "target", "rdev", "acl", "default_acl").
  std::string tree_field;

  explicit operator bool() const { return kind != Kind::kNone; }

  // Summary()
  //
  // One line: "engine EACCES, kernel ok at step 3 (rename /a /b)",
  // "final trees differ: /a: engine ..., kernel ...".
  std::string Summary(const Scenario& s) const;

  // Signature()
  //
  // What must stay the same while shrinking: "step rename EACCES/ok",
  // "tree mode", "build".
  std::string Signature() const;
};

// Compare()
//
// The first disagreement of two runs of `s` (kernel kSkipped: none).
// Steps come first; the trees count only when every step agrees.
Disagreement Compare(const Scenario& s, const RunResult& engine, const RunResult& kernel);

// HasDisagreement()
//
// Whether the first disagreement of the runs has `signature`, so that a
// shrunk scenario keeps the one disagreement it was shrunk for.
bool HasDisagreement(const Scenario& s, const RunResult& engine, const RunResult& kernel,
                     const std::string& signature);

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_COMPARE_H_
