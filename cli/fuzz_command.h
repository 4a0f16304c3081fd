// `pathwarden fuzz`: the differential fuzzer (src/fuzz/fuzzer.h).

#ifndef PATHWARDEN_CLI_FUZZ_COMMAND_H_
#define PATHWARDEN_CLI_FUZZ_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>

namespace pathwarden::cli {

struct FuzzCommandOptions {
  uint64_t seed = 1;
  uint64_t cases = 100;
  std::optional<uint64_t> only_case;
  std::string out_dir;
  std::string save_all_dir;
  int jobs = 2;
  int steps_min = 10;
  int steps_max = 40;
  int shrink_tries = 600;
  int shrink_per_signature = 5;
  bool no_shrink = false;
  bool quiet = false;
};

// RunFuzzCommand()
//
// Prints a live progress line on a terminal, one line per disagreement,
// and finally exactly one line "fuzz: N scenarios, M steps, K mismatches
// (seed S)". Exit status: 1 when K > 0, 77 when the kernel executor
// cannot run here (the reason printed), 0 otherwise.
int RunFuzzCommand(const FuzzCommandOptions& options);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_FUZZ_COMMAND_H_
