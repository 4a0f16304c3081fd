// `pathwarden bench`: run the benchmarks (bench/RunSelected()) and report.

#include "cli/bench_command.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/bench.h"

namespace pathwarden::cli {

int RunBench(const std::string& which, const bench::Options& o) {
  bench::Reporter r(o.json);
  const std::vector<std::string> missing = bench::RunSelected(which, o, r);
  if (!missing.empty()) {
    fmt::print(stderr, "bench --smoke: no measurement for: {}\n", fmt::join(missing, ", "));
    return 1;
  }
  return 0;
}

}  // namespace pathwarden::cli
