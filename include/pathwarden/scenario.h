// File: pathwarden/scenario.h
//
// Scenario files, format 1 (docs/scenario-spec.md): a file tree, the
// processes acting on it, and the steps they try, each with the result
// Linux gives. Both executors (the engine and the real kernel), the tests,
// the fuzzer and bug reports speak this format. Files are TOML; the same
// structure as JSON is accepted for machine-written files.
//
// Example:
//   auto s = LoadScenarioFile("tests/scenarios/vfs/walk.toml");
//   if (!s) { std::cerr << s.error() << "\n"; return 2; }
//   for (const StepSpec& step : s->steps) ...
//
// Extensions to the spec (documented in docs/scenario-format.md): node key
// `attrs` (immutable, append), mount flag `nosymfollow`, operations
// `utimensat` (step key `times`), `chroot` and `fchdir`; the xattr calls
// `getxattr`, `setxattr`, `listxattr`, `removexattr` (step keys `name`,
// `value`, `acl`, `xattr_flags`), `fallocate` (`offset`, `len`, FALLOC_FL_*
// in `flags`), `fchmod`, `fchown` and `futimens`.

#ifndef PATHWARDEN_SCENARIO_H_
#define PATHWARDEN_SCENARIO_H_

#include <array>
#include <cstdint>
#include "pathwarden/result.h"
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "pathwarden/kernel_rules.h"
#include "pathwarden/landlock.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "pathwarden/sysctls.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// SourceLoc
//
// Where a value came from: line and column (1-based, columns in
// characters), and in a JSON file also the key path ("/step/3/flags").
struct SourceLoc {
  int line = 0;
  int col = 0;
  std::string key_path;
};

enum class NodeType : uint8_t {
  kFile,
  kDir,
  kSymlink,
  kFifo,
  kSocket,
  kChar,
  kBlock,
  kTmpfs,
  kBind,
};
std::string_view NodeTypeName(NodeType t);

// FileTypeBits() / NodeTypeOf()
//
// S_IFREG, S_IFDIR, S_IFLNK, ... for a node type and back (kFile for
// anything unknown; kTmpfs and kBind are directories).
uint32_t FileTypeBits(NodeType t);
NodeType NodeTypeOf(uint32_t mode);

struct NodeSpec {
  SourceLoc loc;
  std::string path;
  NodeType type = NodeType::kFile;
  std::optional<uint32_t> mode;  // permission bits with setuid/setgid/sticky
  uint32_t uid = 0, gid = 0;
  bool has_owner = false;  // uid or gid given
  std::optional<std::vector<AclEntry>> acl;
  std::optional<std::vector<AclEntry>> default_acl;
  std::string target;
  uint32_t rdev_major = 1, rdev_minor = 3;
  std::string source;
  uint32_t mount_flags = 0;
  std::string content;
  uint32_t attrs = 0;

  // The mode the node gets: `mode`, else 0o755 for dir/tmpfs, 0o644 others
  // (0o777 for symlinks, which ignore it).
  uint32_t EffectiveMode() const;
};

struct RuleSpec {
  SourceLoc loc;
  bool is_port = false;
  std::string path;
  bool nofollow = false;
  uint64_t port = 0;
  landlock::AccessMask access = 0;
};

struct LayerSpec {
  SourceLoc loc;
  landlock::AccessMask handled_fs = 0;
  landlock::AccessMask handled_net = 0;
  landlock::AccessMask scoped = 0;
  std::vector<RuleSpec> rules;
};

struct ProcessSpec {
  SourceLoc loc;
  std::string name;
  std::string parent;  // empty: none
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  std::optional<uint64_t> caps;  // nullopt: all if uid 0, else none
  std::optional<std::string> cwd;     // nullopt: "/" or the parent's
  std::optional<uint32_t> umask;      // nullopt: 0o022 or the parent's
  std::vector<LayerSpec> layers;
  // A user namespace of its own (empty: the initial one), entered with
  // these maps (outside ids: the scenario's); uid, gid and groups stay the
  // scenario's ids, and uid and gid map.
  std::vector<IdRange> userns_uids, userns_gids;

  // All if uid 0 (in its user namespace), else none, unless `caps`.
  uint64_t EffectiveCaps() const;
  // The user namespace its credentials live in (null: the initial one).
  std::shared_ptr<const UserNamespace> UserNs() const;
};

std::string_view OpName(Op op);
std::optional<Op> OpFromName(std::string_view name);

struct StepSpec {
  SourceLoc loc;
  std::string as = "root";
  Op op = Op::kStat;
  std::string path, path2;
  std::string dirfd;        // empty: AT_FDCWD
  std::string flags_text;   // as written
  uint64_t flags = 0;       // Linux values: O_*, AT_*, RENAME_*, MNT_*, MS_*
  uint32_t access_mode = 0; // access: R_OK|W_OK|X_OK (F_OK is 0)
  uint32_t mode = 0;        // open/mknod 0o644, mkdir 0o755, chmod given
  NodeType mknod_type = NodeType::kFile;
  uint32_t rdev_major = 1, rdev_minor = 3;
  int64_t uid = -1, gid = -1;
  uint32_t port = 0;
  std::string fd;
  std::string cmd_text;
  uint32_t cmd = 0;
  std::string target;
  std::optional<LayerSpec> layer;
  std::optional<std::array<TimeSpec, 2>> times;
  // The xattr calls: `name`; `value` as bytes (for `acl`, its xattr form);
  // `acl` as written (system.posix_acl_* values in setfacl's short form);
  // `xattr_flags` (XATTR_CREATE|XATTR_REPLACE).
  std::string xattr_name, xattr_value;
  std::optional<std::string> xattr_acl;
  uint32_t xattr_flags = 0;
  // fallocate's range (its mode is `flags`).
  int64_t offset = 0, len = 1;
  // mount_setattr's MOUNT_ATTR_* to set and to clear.
  uint64_t attr_set = 0, attr_clr = 0;
  int expect = 0;
  std::string expect_text;
};

struct Scenario {
  std::string file;
  int format = 1;
  std::string description;
  int abi = landlock::kAbiLatest;
  Sysctls sysctl;  // `[sysctl]`
  ScenarioKernelRules kernel;  // `[kernel]`: the rules it was written for
  std::vector<NodeSpec> nodes;
  std::vector<ProcessSpec> processes;  // without the implicit "root"
  std::vector<StepSpec> steps;

  // Where()
  //
  // "file:line:col" (TOML) or "file: /step/3/flags" (JSON).
  std::string Where(const SourceLoc& loc) const;
};

// LoadScenarioFile()
//
// Reads and validates a scenario (".json" files as JSON, others as TOML).
// The error is one or more lines "file:line:col: message".
Result<Scenario, std::string> LoadScenarioFile(const std::string& path);

// ParseScenario()
//
// As LoadScenarioFile() for text in memory; `name` is used in messages.
Result<Scenario, std::string> ParseScenario(std::string_view text,
                                                  const std::string& name,
                                                  bool json);

// ScenarioToToml()
//
// A TOML rendering that parses back to the same scenario (for files the
// fuzzer writes).
std::string ScenarioToToml(const Scenario& s);

// FormatStepFlags()
//
// The symbolic form of a step's flags for its operation ("O_RDONLY|O_CREAT").
// ShownStepFlags() is the same, or "" when the step has no flags worth
// showing (none set, and not an open, whose access mode always shows).
std::string FormatStepFlags(const StepSpec& step);
std::string ShownStepFlags(const StepSpec& step);

// DescribeStep()
//
// A short rendering of what a step does: "open /a O_WRONLY", "rename /a
// /b", "restrict (fs: read_file; net: ; scoped: ; 1 rules)". Paths longer
// than `max_path` (when not 0) are shortened in the middle.
std::string DescribeStep(const StepSpec& st, size_t max_path = 0);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_SCENARIO_H_
