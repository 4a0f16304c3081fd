// `pathwarden explain`: flags to the query module.

#ifndef PATHWARDEN_CLI_EXPLAIN_COMMAND_H_
#define PATHWARDEN_CLI_EXPLAIN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/identity/identity.h"
#include "src/policy/policy.h"

namespace pathwarden::cli {

// IdentityFlags
//
// --uid, --gid, --groups, --caps, --umask, --cwd, --pid, as text until
// resolved (so that each bad value gets its own message); and how the host
// is read for them, --assume-unseen-run-nothing.
struct IdentityFlags {
  std::optional<std::string> uid, gid, groups, caps, umask, cwd, userns, userns_gids;
  std::optional<int> pid;
  bool assume_unseen_run_nothing = false;
  std::vector<std::string> trusted_lsms;
  void Add(CLI::App* cmd);
  // The identity, or the message for a bad value.
  Result<identity::Identity, std::string> Resolve() const;
};

// --assume-unseen-run-nothing's help (explain, map, trace).
inline constexpr const char* kAssumeUnseenHelp =
    "take the processes whose program cannot be read (/proc/PID/exe: other users' when not "
    "root, those a security module hides) to run none of the files asked about: writing a "
    "file with an execute bit is then answered, not unknown";

// --trust-lsm's help (explain, map, trace), the option, and the check of
// its names (SecurityModuleNames()).
inline constexpr const char* kTrustLsmHelp =
    "NAME[,NAME]: take these security modules to refuse nothing that Unix and Landlock allow "
    "(you checked, e.g. that `bpftool prog show` lists no lsm program where reading that takes "
    "root): their allowed answers are then allowed, not unknown";
void AddTrustLsm(CLI::App* cmd, std::vector<std::string>* names);
Result<void, std::string> CheckTrustLsm(const std::vector<std::string>& names);

// CurrentDir()
//
// The command's working directory ("/" when it cannot be named).
std::string CurrentDir();

// LoadLayers()
//
// The layers the flags give, in order: each --policy file or directory
// (relative rule paths from `cwd`), with --from-env's after the first
// `env_at` of them (where it stood on the command line: FromEnvPosition()).
// Errors: the bad policy's message.
Result<std::vector<policy::Policy>, std::string> LoadLayers(const std::vector<std::string>& files,
                                                            bool from_env, const std::string& cwd,
                                                            size_t env_at = SIZE_MAX);

// AddLayerFlags()
//
// --policy (each into `policies`) and --from-env (`from_env`): the
// Landlock layers, stacked as written (LoadLayers(), FromEnvPosition()).
// `none`: what the command does without any, for --policy's help.
void AddLayerFlags(CLI::App* cmd, std::vector<std::string>* policies, bool* from_env,
                   std::string_view none = {});

// FromEnvPosition()
//
// How many of `cmd`'s --policy options stand before its first
// --from-env on the command line (CLI11's parse order): the layers
// --from-env's is stacked after. Layers are stacked as the options are
// written, whichever kind.
size_t FromEnvPosition(const CLI::App& cmd);

// WantColour()
//
// --colour auto|always|never on stdout (auto: a terminal, and no NO_COLOR).
bool WantColour(const std::string& setting);

struct ExplainOptions {
  std::vector<std::string> policies;
  bool from_env = false;
  size_t from_env_at = SIZE_MAX;  // --policy layers before --from-env's (FromEnvPosition())
  IdentityFlags who;
  std::vector<std::string> query;
  std::optional<std::string> batch;
  bool json = false;
  bool verify = false;
  bool verbose = false;  // -v: the security modules' states on stderr
  std::string scratch;
  std::string format = "full";  // or "result"
  std::string colour = "auto";
};

void AddExplain(CLI::App& app, ExplainOptions* o, CLI::App** cmd);

// RunExplain()
//
// Exit: 0 allowed, 1 denied, 3 unknown, 2 bad input; with --batch, 0 when
// every query was answered, 3 when any was unknown, 2 bad input.
int RunExplain(const ExplainOptions& o);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_EXPLAIN_COMMAND_H_
