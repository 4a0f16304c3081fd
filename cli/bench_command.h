// `pathwarden bench`.

#ifndef PATHWARDEN_CLI_BENCH_COMMAND_H_
#define PATHWARDEN_CLI_BENCH_COMMAND_H_

#include <string>

#include "bench/bench.h"

namespace pathwarden::cli {

// RunBench()
//
// `which` is landlock, lookup, import, threads or all.
int RunBench(const std::string& which, const bench::Options& o);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_BENCH_COMMAND_H_
