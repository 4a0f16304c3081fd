// Policies enforced by the running kernel on the calling process, then a
// command executed under them: `pathwarden run`. Rule paths are opened
// and told apart (directory or not) on this host, rights this kernel's
// ABI lacks are dropped (best effort, as rust-landlock's default
// compatibility level) or refused (hard), and each layer is one
// landlock_restrict_self().
// Linux: samples/landlock/sandboxer.c, security/landlock/syscalls.c @v6.18

#ifndef PATHWARDEN_SRC_SANDBOX_RUN_H_
#define PATHWARDEN_SRC_SANDBOX_RUN_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pathwarden/landlock.h"
#include "pathwarden/result.h"
#include "src/policy/policy.h"

namespace pathwarden::sandbox {

// ProbeAbi()
//
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION): the
// running kernel's ABI, or 0 when Landlock is not built in (ENOSYS) or
// disabled (EOPNOTSUPP), with *why (if given) saying which.
int ProbeAbi(std::string* why = nullptr);

// UniqueFd
//
// One open descriptor, closed with its owner.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.Release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// HostRule
//
// One landlock_add_rule() as this host gets it: a path opened
// O_PATH|O_CLOEXEC (`fd`; `directory` from fstat()), or a port.
struct HostRule {
  bool is_port = false;
  std::string path;
  bool directory = false;
  UniqueFd fd;
  uint64_t port = 0;
  landlock::AccessMask access = 0;
  std::vector<policy::Origin> origins;
};

// HostLayer
//
// One policy built for this host at an ABI: handled rights and rule
// rights clamped to what the ABI knows. `dropped_*` are the rights the
// policy handles and the ABI lacks (compatibility issues: best effort
// drops them, --hard refuses); `warnings` are the host's (a rule path
// missing: skipped; a non-directory: only its file rights kept).
struct HostLayer {
  std::string source;
  landlock::AccessMask handled_fs = 0;
  landlock::AccessMask handled_net = 0;
  landlock::AccessMask scoped = 0;
  std::vector<HostRule> rules;
  landlock::AccessMask dropped_fs = 0;
  landlock::AccessMask dropped_net = 0;
  landlock::AccessMask dropped_scoped = 0;
  std::vector<std::string> warnings;

  // Whether the kernel gets anything to enforce (a ruleset handling
  // nothing is ENOMSG).
  bool Enforceable() const { return (handled_fs | handled_net | scoped) != 0; }
  bool Dropped() const { return (dropped_fs | dropped_net | dropped_scoped) != 0; }
};

// BuildHostLayer()
//
// `p` as this host and an `abi` (the kernel's, or an older one to
// pretend; 0: no Landlock, every right dropped) get it. Never fails: what
// cannot be built is a warning. Rule paths are opened relative to the
// working directory.
HostLayer BuildHostLayer(const policy::Policy& p, int abi);

// DroppedRights()
//
// "fs.truncate,net.bind_tcp" for a layer's dropped rights ("" if none).
std::string DroppedRights(const HostLayer& layer);

// DescribeLayers()
//
// The rulesets as the kernel would get them (run --dry-run): per layer,
// the handled rights, the scopes, then each rule with where it was
// written.
std::string DescribeLayers(const std::vector<HostLayer>& layers, int abi);

// EnforceLayers()
//
// PR_SET_NO_NEW_PRIVS, then for each enforceable layer in order
// landlock_create_ruleset(), landlock_add_rule() per rule,
// landlock_restrict_self(). Errors: the first call the kernel refused
// ("layer 2 (p.toml): landlock_restrict_self: E2BIG"); layers before it
// stay enforced (the caller must not go on).
Result<void, std::string> EnforceLayers(const std::vector<HostLayer>& layers);

enum class Compat { kBestEffort, kHard };

// RunOptions
//
// `pretend_abi`: enforce as if the kernel were this ABI (for tests: only
// rights it knows are used), never above the running one.
struct RunOptions {
  std::vector<policy::Policy> layers;
  Compat compat = Compat::kBestEffort;
  bool dry_run = false;
  bool verbose = false;
  std::optional<int> pretend_abi;
  std::vector<std::string> argv;
};

// Exit statuses of RunConfined(), as env(1) and timeout(1) give them.
inline constexpr int kExitOwnError = 125;
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;

// RunConfined()
//
// Builds every layer (BuildHostLayer() at the kernel's ABI, or the
// pretended one), prints warnings and dropped rights to `err`, refuses
// (125) under kHard when a right was dropped or Landlock is absent,
// prints the rulesets to `out` and returns 0 under dry_run; otherwise
// EnforceLayers() and execvp() of argv. Returns only on failure: 125 for
// its own errors, 127 when the command is not found, 126 when it cannot be
// executed.
int RunConfined(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace pathwarden::sandbox

#endif  // PATHWARDEN_SRC_SANDBOX_RUN_H_
