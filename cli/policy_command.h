// `pathwarden policy check FILE|DIR...` and `pathwarden policy print
// [--json|--toml] FILE|DIR`: landlockconfig policies, validated or
// printed as resolved.

#ifndef PATHWARDEN_CLI_POLICY_COMMAND_H_
#define PATHWARDEN_CLI_POLICY_COMMAND_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pathwarden::cli {

struct PolicyCommand {
  CLI::App* policy = nullptr;
  CLI::App* check = nullptr;
  CLI::App* print = nullptr;
  std::vector<std::string> check_files;
  std::string print_file;
  bool json = false;
  bool toml = false;
};

// AddPolicyCommand()
//
// Declares `policy` and its subcommands on `app`, their values in `pc`.
void AddPolicyCommand(CLI::App& app, PolicyCommand& pc);

// RunPolicyCommand()
//
// Exit status: 0, or 2 with "FILE:LINE:COL: message" lines on stderr for
// bad input (check: any file bad; every file is checked).
int RunPolicyCommand(const PolicyCommand& pc);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_POLICY_COMMAND_H_
