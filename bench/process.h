// Commands measured as processes: one run's wall time and memory, the
// best of several runs of commands taking turns.

#ifndef PATHWARDEN_BENCH_PROCESS_H_
#define PATHWARDEN_BENCH_PROCESS_H_

#include <sys/wait.h>

#include <optional>
#include <string>
#include <vector>

namespace pathwarden::bench {

// One finished child: its wall time, its maximum resident set, how it
// ended.
struct Run {
  double seconds = 0;
  long max_rss_kib = 0;
  int status = 0;
  bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// RunProcess()
//
// `argv` run with stdout and stderr on /dev/null: fork() to wait4().
Run RunProcess(const std::vector<std::string>& argv);

// BestOfEach()
//
// The best wall time of `n` runs of each command of `argvs` (and the
// largest resident set), the commands taking turns so that a slow spell
// of the machine falls on all of them; nullopt for one that failed.
std::vector<std::optional<Run>> BestOfEach(const std::vector<std::vector<std::string>>& argvs,
                                           int n);

// SelfExe()
//
// This binary (/proc/self/exe), to run its commands.
std::string SelfExe();

}  // namespace pathwarden::bench

#endif  // PATHWARDEN_BENCH_PROCESS_H_
