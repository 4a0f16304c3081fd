// `pathwarden trace`: a command traced, each call it makes predicted under
// policy layers on the live host and reported when denied; optionally
// enforced by the kernel too and compared, or a policy learnt from it
// (src/trace/).

#ifndef PATHWARDEN_CLI_TRACE_COMMAND_H_
#define PATHWARDEN_CLI_TRACE_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pathwarden::cli {

struct TraceOptions {
  std::vector<std::string> policies;
  bool from_env = false;
  size_t from_env_at = SIZE_MAX;  // --policy layers before --from-env's (FromEnvPosition())
  bool enforce = false;
  std::string learn;  // --learn OUT.toml
  bool keep_on_failure = false;
  bool assume_unseen_run_nothing = false;
  std::vector<std::string> trusted_lsms;  // --trust-lsm
  bool json = false;
  std::string output;  // -o FILE; "" for stderr
  std::string colour = "auto";
  std::vector<std::string> argv;
};

void AddTrace(CLI::App& app, TraceOptions* o, CLI::App** out);

// RunTrace()
//
// The command's exit status; 125 for trace's own errors, and when
// --enforce found a disagreement.
int RunTrace(const TraceOptions& o);

// PrintNoCounts()
//
// trace's last line when its options could not even be read.
void PrintNoCounts();

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_TRACE_COMMAND_H_
