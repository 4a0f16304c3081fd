// `pathwarden bench`: run the benchmarks and report (bench/).

#include "cli/bench_command.h"

#include <fmt/format.h>

#include "bench/bench.h"

namespace pathwarden::cli {

int RunBench(const std::string& which, const bench::Options& o) {
  bench::Reporter r(o.json);
  const bool all = which == "all";
  if (all || which == "landlock") bench::RunLandlock(o, r);
  if (all || which == "lookup") bench::RunLookup(o, r);
  if (all || which == "import") bench::RunImport(o, r);
  if (all || which == "threads") bench::RunThreads(o, r);
  if (!o.plot_dir.empty()) {
    const std::string made = bench::Plot(r, o.plot_dir);
    r.Note(made.empty() ? "no chart made" : "charts: " + made);
  }
  return 0;
}

}  // namespace pathwarden::cli
