// File: pathwarden/executor.h
//
// The two executors of scenario files: the engine (the model) and the real
// kernel (the judge). Both take a parsed Scenario and return, for every
// step, the errno Linux gives; the engine also says why. Optionally both
// return the final tree, so the fuzzer can compare more than errnos.
//
// Example:
//   auto s = LoadScenarioFile("tests/scenarios/vfs/walk.toml");
//   RunResult engine = RunInEngine(*s, EngineOptions{});
//   RunResult kernel = RunInKernel(*s, KernelOptions{});

#ifndef PATHWARDEN_EXECUTOR_H_
#define PATHWARDEN_EXECUTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/scenario.h"

namespace pathwarden {

// StepResult
//
// `err` is 0 for success or the errno. `reason` is the engine's one-line
// explanation (empty from the kernel).
struct StepResult {
  int err = 0;
  std::string reason;
};

// TreeEntry
//
// One object of the final tree as the scenario's root process sees it,
// mounts included. `type` is a NodeType name ("file", "dir", "symlink",
// "fifo", "socket", "char", "block"). ACLs are PosixAcl::ToText() ("" when
// none). `size` is the content length of regular files (0 for others).
struct TreeEntry {
  std::string path;
  std::string type;
  uint32_t mode = 0;  // permission bits with setuid/setgid/sticky
  uint32_t uid = 0, gid = 0;
  uint32_t nlink = 0;
  uint64_t size = 0;
  std::string target;  // symlinks
  uint32_t rdev_major = 0, rdev_minor = 0;  // devices
  std::string acl, default_acl;
  friend bool operator==(const TreeEntry&, const TreeEntry&) = default;
};

// DescribeTreeEntry()
//
// "file 0644 1000:1000 nlink 1 size 3 acl u::rw-,...": everything but the
// path.
std::string DescribeTreeEntry(const TreeEntry& e);

// DiffTrees()
//
// One line per object that differs between two final trees (each sorted by
// path), naming both sides: "/a: engine file 0644 ..., kernel: none".
std::vector<std::string> DiffTrees(const std::vector<TreeEntry>& engine,
                                   const std::vector<TreeEntry>& kernel);

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
  std::vector<TreeEntry> tree;  // sorted by path, when requested
};

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
  // Build a reason for each step (the hot path builds none without).
  bool explain = true;
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

// EngineBuildError()
//
// Builds the scenario's world in the engine without running any step;
// the "file:line:col: message" of what the file gets wrong, or "".
std::string EngineBuildError(const Scenario& s);

// RunInEngine()
//
// Builds the scenario's world in the engine and runs every step.
RunResult RunInEngine(const Scenario& s, const EngineOptions& options,
                      EngineStats* stats = nullptr);

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

#endif  // PATHWARDEN_EXECUTOR_H_
