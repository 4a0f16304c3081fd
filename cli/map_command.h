// `pathwarden map`: flags to the query module.

#ifndef PATHWARDEN_CLI_MAP_COMMAND_H_
#define PATHWARDEN_CLI_MAP_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/explain_command.h"

namespace pathwarden::cli {

struct MapCommandOptions {
  std::vector<std::string> policies;
  bool from_env = false;
  size_t from_env_at = SIZE_MAX;  // --policy layers before --from-env's (FromEnvPosition())
  IdentityFlags who;
  std::string dir;
  int depth = -1;
  std::string only;
  std::optional<std::string> diff_policy;
  std::optional<std::string> diff_uid, diff_gid, diff_groups, diff_caps;
  bool json = false;
  std::string colour = "auto";
};

void AddMap(CLI::App& app, MapCommandOptions* o, CLI::App** cmd);

// RunMapCommand()
//
// Exit: 0, 3 when any path was unknown, 2 bad input.
int RunMapCommand(const MapCommandOptions& o);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_MAP_COMMAND_H_
