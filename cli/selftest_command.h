// `pathwarden selftest`: does this kernel answer as the engine models it?

#ifndef PATHWARDEN_CLI_SELFTEST_COMMAND_H_
#define PATHWARDEN_CLI_SELFTEST_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/fuzz/selftest.h"

namespace pathwarden::cli {

struct SelftestCommandOptions {
  uint64_t fuzz_cases = 1000;
  uint64_t seed = 20261204;
  bool json = false;
  std::string colour = "auto";
};

void AddSelftest(CLI::App& app, SelftestCommandOptions* o, CLI::App** cmd);

// RunSelftestCommand()
//
// Exit: 0 when the kernel answers as modelled, 1 when something differs,
// 3 when something could not be checked (a rule the probe could not
// tell, no kernel executor: not root or no Landlock).
int RunSelftestCommand(const SelftestCommandOptions& o);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_SELFTEST_COMMAND_H_
