// `pathwarden check`: run scenario files and report each step.

#ifndef PATHWARDEN_CLI_CHECK_COMMAND_H_
#define PATHWARDEN_CLI_CHECK_COMMAND_H_

#include <string>
#include <vector>

#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"

namespace pathwarden::cli {

struct CheckOptions {
  std::vector<std::string> files;
  bool json = false;
  bool kernel = false;
  bool both = false;
  bool quiet = false;  // only failures and the summary
  // Also run the engine in every variant of CrossCheckVariants()
  // (src/scenario/variants.h) and fail on any difference in result or reason.
  bool cross_check = false;
  // Print the final tree of each file (the kernel's with --kernel).
  bool show_tree = false;
  EngineOptions engine;
};

// RunCheck()
//
// Exit status: 2 when any file has an error (and nothing runs), else 1
// when any step fails, else 77 when every file was skipped, else 0.
int RunCheck(const CheckOptions& options);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_CHECK_COMMAND_H_
