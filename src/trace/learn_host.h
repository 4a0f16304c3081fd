// Learning a policy for this machine: the options `pathwarden trace
// --learn` uses here (the running kernel's Landlock ABI, $HOME, /dev never
// widened), the needs of a run fed to a Learner, and what the learnt
// policy grants beyond what the run used. The CLI, the C API
// (pathwarden_learner_*) and Python's pathwarden.Learner all learn
// through LearnOnHost().
//
// Example:
//   auto r = LearnOnHost(needs, HostLearnOptions());
//   if (!r) return r.error();
//   for (const std::string& w : r->warnings) std::cerr << w << "\n";
//   WriteFile(out, ToToml(r->policy));

#ifndef PATHWARDEN_SRC_TRACE_LEARN_HOST_H_
#define PATHWARDEN_SRC_TRACE_LEARN_HOST_H_

#include <span>
#include <string>
#include <vector>

#include "pathwarden/result.h"
#include "src/trace/learn.h"

namespace pathwarden::trace {

// HostLearnOptions()
//
// LearnOptions for this machine: `abi` the running kernel's Landlock ABI
// (kAbiLatest where Landlock is off: the policy is for a kernel that has
// it; at most kAbiLatest, the rights this build knows), `home` $HOME when it is an absolute path other than / (normalised,
// no trailing '/'), `never_widen` /dev (a rule widened to /dev would
// reach the raw disks); the default sibling threshold.
LearnOptions HostLearnOptions();

// LearnReport
//
// A learnt policy, the needs it could not take (`warnings`: "not learnt:
// why", one per path or port refused), and what it grants beyond the run
// (`beyond`: for each directory a right was widened to, the rights and
// how many entries lie beneath it against how many the run used).
struct LearnReport {
  LearntPolicy policy;
  std::vector<std::string> warnings;
  std::vector<std::string> beyond;
};

// LearnOnHost()
//
// `needs` fed to a Learner (a need it refuses is a warning, once per
// path), then Learn(options), then the widened directories counted on
// this host (at most 100,000 entries each, symlinks not followed,
// unreadable directories skipped). Errors: Learn()'s.
Result<LearnReport, std::string> LearnOnHost(std::span<const Need> needs,
                                             const LearnOptions& options);

// The same for needs already fed to `learner` (which checked each as it
// came): no warnings.
Result<LearnReport, std::string> LearnOnHost(const Learner& learner, const LearnOptions& options);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_LEARN_HOST_H_
