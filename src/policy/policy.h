// Landlock policies as users write them: landlockconfig files (JSON and
// TOML, a file or a directory of them), and the kernel sample sandboxer's
// environment (LL_FS_RO, LL_FS_RW, LL_TCP_BIND, LL_TCP_CONNECT,
// LL_SCOPED); each one Landlock layer. See
// ../shared/docs/reference/ecosystem.md §1 for landlockconfig's semantics,
// which this module follows exactly.

#ifndef PATHWARDEN_SRC_POLICY_POLICY_H_
#define PATHWARDEN_SRC_POLICY_POLICY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/landlock.h"
#include "pathwarden/result.h"
#include "pathwarden/ruleset.h"

namespace pathwarden {
class Model;
struct Process;
}  // namespace pathwarden

namespace pathwarden::policy {

// Origin
//
// Where something was written: a policy file, line and column (1-based);
// for the environment, the variable's name and line 0.
struct Origin {
  std::string file;
  int line = 0;
  int col = 0;
  friend bool operator==(const Origin&, const Origin&) = default;
};

// PathRule / PortRule
//
// One rule after landlockconfig's resolution: groups resolved at the
// policy's ABI, variables expanded, the path normalised (repeated and
// trailing '/' and inner "." dropped, ".." kept), rules on one path (or
// port) merged, with every place that contributed.
struct PathRule {
  std::string path;
  landlock::AccessMask access = 0;
  std::vector<Origin> origins;
};
struct PortRule {
  uint64_t port = 0;
  landlock::AccessMask access = 0;
  std::vector<Origin> origins;
};

// Policy
//
// One Landlock layer as configured, before it meets a host: handled
// rights widened to every right a rule uses; `paths` sorted bytewise,
// `ports` ascending; rules whose access resolved empty dropped.
struct Policy {
  std::optional<int> abi;  // as configured, clamped to landlock::kAbiLatest; nullopt: none
  landlock::AccessMask handled_fs = 0;
  landlock::AccessMask handled_net = 0;
  landlock::AccessMask scoped = 0;
  std::vector<PathRule> paths;
  std::vector<PortRule> ports;
  std::string source;  // the file or directory, or "environment"
};

// LoadPolicy()
//
// A landlockconfig file (".json" or ".toml", by its name) or a directory
// composed of its non-hidden *.json and *.toml files (others and
// subdirectories ignored) as landlockconfig composes them. Relative rule
// paths resolve against `cwd` (the command's working directory). Errors:
// "FILE:LINE:COL: message" for bad input.
Result<Policy, std::string> LoadPolicy(const std::string& file_or_dir, const std::string& cwd);

// ParsePolicy()
//
// One landlockconfig document `text` (JSON when `json`, else TOML), named
// `name` in messages and origins; as LoadPolicy() for a file.
Result<Policy, std::string> ParsePolicy(std::string_view text, const std::string& name, bool json,
                                        const std::string& cwd);

// SameRules()
//
// Whether two policies are equal but for their origins and source (what
// a policy printed and read back must be).
bool SameRules(const Policy& a, const Policy& b);

// PolicyFromEnv()
//
// The kernel sample sandboxer's environment (samples/landlock/
// sandboxer.c): LL_FS_RO and LL_FS_RW colon-separated paths, LL_TCP_BIND
// and LL_TCP_CONNECT colon-separated ports, LL_SCOPED ("a" abstract
// sockets, "s" signals), with the rights the sandboxer gives each at
// `abi`. `getenv` reads a variable (nullptr when unset). A relative path
// is the one the sandboxer opens from its working directory: `cwd` (the
// command's) joined to it, as written otherwise (`..` is the kernel's to
// resolve); an empty `cwd` keeps it relative.
Result<Policy, std::string> PolicyFromEnv(const std::function<const char*(const char*)>& getenv,
                                          int abi, const std::string& cwd);

// HostLayer
//
// A policy built as a layer on a host, as landlockconfig builds it: a
// rule whose path is missing is skipped with a warning; a rule on a
// non-directory keeps only the file rights (execute, write_file,
// read_file, truncate, ioctl_dev), with a warning; an ABI above `abi`
// (the kernel's) is clamped to it and rights it lacks dropped.
// `origins[i]` says where ruleset.rules[i] was written.
struct HostLayer {
  LandlockRuleset ruleset;
  std::vector<std::vector<Origin>> origins;
  std::vector<std::string> warnings;
};

// PathKind
//
// What a rule path is on the host: missing, a directory, or not one; or
// one the process building the layer may not open (no search permission
// on the way), which landlockconfig skips like a missing one.
enum class PathKind { kMissing, kDirectory, kOther, kDenied };

// BuildLayer()
//
// `kind_of` says what a rule path is (the caller's host: the live
// machine, or a model).
HostLayer BuildLayer(const Policy& p, int abi,
                     const std::function<PathKind(const std::string&)>& kind_of);

// BuildLayerOn()
//
// BuildLayer() at the model's ABI, each rule path looked up on model `m`
// as process `builder` opens it (following symlinks; ENOENT and ENOTDIR
// are missing, any other refusal denied): landlockconfig and the
// sandboxer building a layer on the host the model stands for.
HostLayer BuildLayerOn(const Policy& p, const Model& m, Process builder);

// LiteralTemplate()
//
// `path` as a landlockconfig template that stands for exactly itself:
// each '$' written "$$", so that no part of it reads as a variable.
std::string LiteralTemplate(std::string_view path);

// ToText() / ToJson() / ToToml()
//
// The resolved policy, for people, or as a landlockconfig file that reads
// back to the same policy: explicit right names only (in the kernel's bit
// order), no variables ('$' written "$$"), empty lists and a null abi
// left out, one pathBeneath entry per path, one netPort entry per port.
std::string ToText(const Policy& p);
std::string ToJson(const Policy& p);
std::string ToToml(const Policy& p);

}  // namespace pathwarden::policy

#endif  // PATHWARDEN_SRC_POLICY_POLICY_H_
