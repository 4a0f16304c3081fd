// File: pathwarden/executor.h
//
// What running a scenario file gives, and its executor on the real
// kernel (the judge). The engine's executor is the scenario adapter onto
// the library (src/scenario/run_engine.h). Both take a parsed Scenario and return, for every
// step, the errno Linux gives; the engine also says why. Optionally both
// return the final tree, so the fuzzer can compare more than errnos.
//
// Example:
//   auto s = LoadScenarioFile("tests/scenarios/vfs/walk.toml");
//   RunResult kernel = RunInKernel(*s, KernelOptions{});

#ifndef PATHWARDEN_EXECUTOR_H_
#define PATHWARDEN_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/scenario.h"
#include "pathwarden/tree.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// StepResult
//
// `err` is 0 for success or the errno. `reason` is the engine's one-line
// explanation (empty from the kernel).
struct StepResult {
  int err = 0;
  std::string reason;
};

// DescribeTreeEntry()
//
// "file 0644 1000:1000 nlink 1 size 3 acl u::rw-,...": everything but the
// path.
std::string DescribeTreeEntry(const TreeEntry& e);

// DiffTrees()
//
// One line per object that differs between two final trees (each in path
// order, pathwarden/tree.h), naming both sides, in path order: "/a: engine
// file 0644 ..., kernel: none". Only the first `limit` lines are made (a
// line's path is as long as the tree is deep); `*count`, when given, is
// how many objects differ in all. A malformed tree differs: one line says
// so. Linear in the entries, whatever the depth.
std::vector<std::string> DiffTrees(const std::vector<TreeEntry>& engine,
                                   const std::vector<TreeEntry>& kernel,
                                   size_t limit = SIZE_MAX, size_t* count = nullptr);

// RunResult
//
// kRan: `steps` has one result per step. kSkipped: the executor cannot run
// this file here (`message` says why). kError: the file is wrong in a way
// only building it shows (a rule path that does not resolve, a layer the
// kernel refuses); `message` is "file:line:col: message" and no step ran.
struct RunResult {
  enum class Status { kRan, kSkipped, kError };
  Status status = Status::kRan;
  std::string message;
  std::vector<StepResult> steps;
  std::vector<TreeEntry> tree;  // in path order (pathwarden/tree.h), when requested
};

struct KernelOptions {
  bool capture_tree = false;
};

// KernelUnavailableReason()
//
// Empty when RunInKernel() can run files here (root, Landlock enabled);
// else the reason it skips them.
std::string KernelUnavailableReason();

// KernelAbi()
//
// The running kernel's Landlock ABI (landlock_create_ruleset(NULL, 0,
// VERSION)), or a negative errno.
int KernelAbi();

// RunInKernel()
//
// Runs the scenario on the real kernel: a private mount and network
// namespace, a fresh tmpfs as the scenario's "/", one long-lived child per
// scenario process with its credentials, capabilities, no_new_privs and
// Landlock layers, each step as the raw system call. Sets the protected_*
// sysctls for the file and restores the host's values afterwards (also
// after a crash: the saved values are kept on disk). Skips (kSkipped) when
// not root, without Landlock, or when the file's `abi` differs from the
// kernel's.
RunResult RunInKernel(const Scenario& s, const KernelOptions& options);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_EXECUTOR_H_
