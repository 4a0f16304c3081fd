// File: src/fuzz/gen_internal.h
//
// The generator's working state, shared by its parts: the tree
// (gen_tree.cc), the processes and layers (gen_process.cc), the paths
// (gen_paths.cc) and the steps (gen_steps.cc).

#ifndef PATHWARDEN_SRC_FUZZ_GEN_INTERNAL_H_
#define PATHWARDEN_SRC_FUZZ_GEN_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/scenario.h"
#include "src/fuzz/generator.h"
#include "src/fuzz/random.h"

namespace pathwarden::fuzz::gen_internal {

// Owners and ACL qualifiers come from small pools, so that ids collide.
inline constexpr uint32_t kUids[] = {0, 1000, 1001, 2000};
inline constexpr uint32_t kGids[] = {0, 50, 1000, 2000};
// Ports of port rules and TCP steps: both sides of 1024, some common.
inline constexpr uint32_t kPorts[] = {22, 80, 443, 1023, 1024, 5000, 8080};

// An object the generator believes is in the tree: from the engine's view
// of the built tree, plus the names steps create. `type` is a TreeEntry
// type name, or "" for a name no object may have yet.
struct Known {
  std::string path;  // absolute, normalised
  std::string type;
  std::string target;  // symlinks
};

struct FdInfo {
  std::string name;
  std::string path;  // absolute path it was opened on
  bool dir = false;
};

struct ProcInfo {
  std::string name;
  uint32_t uid = 0;
  std::string cwd = "/";
  std::vector<FdInfo> fds;
  // In a user namespace of its own (or its parent's): the steps it makes
  // leave out what the engine answers unknown there (GenerateSteps()).
  bool userns = false;
};

struct GenState {
  GenState(Rng& r, const GenOptions& o, Scenario* sc) : rng(r), options(o), s(sc) {}
  Rng& rng;
  const GenOptions& options;
  Scenario* s;
  std::vector<Known> tree;
  std::vector<std::string> mounts;  // mount points
  std::vector<ProcInfo> procs;      // [0] is root
  int next_fd = 1;
  int next_name = 1;
};

// What a path should reach.
enum class Want { kAny, kFile, kDir, kSymlink, kNew, kMount, kExisting };

// generator.cc
// The objects the nodes of `s` make, as the root sees them once built
// (path, and whether a directory), mounts hiding what they cover and
// binds showing their sources; nodes relying on an object the executor
// would make on its own are left out, the first one described in
// `*error` (when given).
std::map<std::string, bool> NodeView(const Scenario& s, std::string* error);

// gen_tree.cc
void GenerateTree(GenState& g);
// Reads `g.tree` from the engine's view of the built nodes; false (and
// nothing read) when the nodes do not build.
bool LoadTree(GenState& g);

// gen_process.cc
void GenerateProcesses(GenState& g);
// A Landlock layer for `actor`. `odd`: now and then one the kernel
// refuses (for restrict steps); else always a valid one.
LayerSpec RandomLayer(GenState& g, const ProcInfo& actor, bool odd);

// gen_paths.cc
std::string Dirname(std::string_view path);
bool IsUnder(std::string_view path, std::string_view dir);  // or equal
// `to` relative to the directory `from` (both absolute, normalised).
std::string Relative(std::string_view from, std::string_view to);
const Known* PickKnown(GenState& g, Want want);
// A fresh name under an existing directory.
std::string NewPath(GenState& g);
// A path for `actor` reaching something `want`-like, in one of many
// spellings; may set `step->dirfd` (when `step` is given) to one of the
// actor's fds and return a path relative to it. `*resolved` (if given)
// gets the absolute path meant.
std::string PickPath(GenState& g, const ProcInfo& actor, Want want, StepSpec* step,
                     std::string* resolved = nullptr);
void AddKnown(GenState& g, const std::string& path, std::string type);

// gen_steps.cc
void GenerateSteps(GenState& g);

}  // namespace pathwarden::fuzz::gen_internal

#endif  // PATHWARDEN_SRC_FUZZ_GEN_INTERNAL_H_
