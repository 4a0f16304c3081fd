// File: src/fuzz/fuzzer.h
//
// The differential fuzzer's loop: generate scenarios from a seed, run each
// in the engine and on the kernel (several at a time), compare every
// step's errno and the final trees, shrink each disagreement to a minimal
// scenario and write it out with the kernel's answers as expectations.
//
// Example:
//   FuzzOptions o;
//   o.seed = 1;
//   o.cases = 1000;
//   o.out_dir = "fuzz-out";
//   auto r = RunFuzz(o);
//   if (!r) return Skip(r.error());  // no kernel executor here

#ifndef PATHWARDEN_SRC_FUZZ_FUZZER_H_
#define PATHWARDEN_SRC_FUZZ_FUZZER_H_

#include <cstdint>
#include "pathwarden/result.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/fuzz/generator.h"
#include "src/fuzz/shrinker.h"

namespace pathwarden::fuzz {

struct FuzzProgress {
  uint64_t cases_done = 0, cases_total = 0;
  uint64_t steps = 0;  // kernel-checked steps of the generated scenarios
  uint64_t mismatches = 0;
  double seconds = 0;
};

// One disagreement found (and shrunk, unless shrinking was off).
struct FoundMismatch {
  uint64_t case_index = 0;
  std::string signature;  // Disagreement::Signature() of the original
  std::string summary;    // of the shrunk scenario
  std::string engine_reason;
  std::string file;       // where it was written ("" when not)
  size_t steps_before = 0, steps_after = 0;
  int shrink_tries = 0;
};

struct FuzzOptions {
  uint64_t seed = 1;
  uint64_t cases = 100;
  // Run only this case of the seed (a replay).
  std::optional<uint64_t> only_case;
  std::string out_dir;  // "" writes nothing
  // Also write every case run here, with the kernel's answers as
  // expectations (for looking at what the generator makes).
  std::string save_all_dir;
  int jobs = 2;
  GenOptions gen;
  bool shrink = true;
  ShrinkOptions shrink_options;
  // Disagreements of a signature already shrunk this often in the run are
  // written as found (shrinking the same bug again costs much, tells little).
  int shrink_per_signature = 5;
  // Called after every batch, and once at the end.
  std::function<void(const FuzzProgress&)> on_progress;
  // Called for each disagreement once it is shrunk and written.
  std::function<void(const FoundMismatch&)> on_mismatch;
  // Called for what is not a disagreement but needs a look: a generated
  // scenario that is not valid, a kernel run that failed internally.
  std::function<void(const std::string&)> on_problem;
};

struct FuzzResult {
  uint64_t scenarios = 0;  // run on the kernel (not skipped)
  uint64_t steps = 0;      // their steps
  uint64_t mismatches = 0;
  uint64_t skipped = 0;        // kernel kSkipped
  uint64_t invalid = 0;        // generator bugs
  uint64_t kernel_errors = 0;  // kernel runs that failed internally
  uint64_t shrink_runs = 0;    // kernel runs spent shrinking
  double seconds = 0;          // wall time of the whole run
  double check_seconds = 0;    // of which generating, running, comparing
  double kernel_seconds = 0;   // of which waiting for the kernel's batches
  double wait_seconds = 0;     // of which waiting for the generator
  std::vector<FoundMismatch> found;
};

// RunFuzz()
//
// Runs the cases of `options`; fails (with the reason) only when the
// kernel executor cannot run here (not root, no Landlock).
Result<FuzzResult, std::string> RunFuzz(const FuzzOptions& options);

// CleanRun()
//
// Whether a run of `options` compared enough to count: no generated
// scenario was invalid, no kernel run failed, and some scenario was
// compared when cases were asked for. A run that compared little proves
// little, so an unclean run fails even without mismatches.
bool CleanRun(const FuzzResult& r, const FuzzOptions& options);

// MismatchFileText()
//
// The scenario file written for a disagreement: comment lines saying how
// to replay it and the engine's reason, then `s` (whose description and
// expectations the caller set).
std::string MismatchFileText(const Scenario& s, uint64_t seed, uint64_t case_index,
                             const std::string& engine_reason);

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_FUZZER_H_
