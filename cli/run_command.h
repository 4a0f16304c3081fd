// `pathwarden run`: enforce policies with the kernel, then exec a command
// (src/sandbox/run.h).

#ifndef PATHWARDEN_CLI_RUN_COMMAND_H_
#define PATHWARDEN_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pathwarden::cli {

struct RunCommandOptions {
  std::vector<std::string> policies;  // --policy, one layer each, in order
  bool from_env = false;              // --from-env: one more layer,
  size_t from_env_at = SIZE_MAX;      // after this many --policy layers (FromEnvPosition())
  bool hard = false;
  bool dry_run = false;
  bool verbose = false;
  std::optional<int> pretend_abi;     // --pretend-abi (hidden, for tests)
  std::vector<std::string> argv;
};

// RunRunCommand()
//
// Loads each --policy (relative rule paths against the working
// directory), then the sandboxer's environment at the running kernel's
// ABI, and hands them to sandbox::RunConfined(). Returns only when the
// command was not executed: 125 for run's own errors (a bad policy, a
// --hard refusal), 126/127 when the command cannot be run, 0 after a dry
// run.
int RunRunCommand(const RunCommandOptions& options);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_RUN_COMMAND_H_
