// `pathwarden fuzz`: flags to FuzzOptions, progress and findings to the
// terminal.

#include "cli/fuzz_command.h"

#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "src/base/progress.h"
#include "src/fuzz/fuzzer.h"

namespace pathwarden::cli {

int RunFuzzCommand(const FuzzCommandOptions& c) {
  fuzz::FuzzOptions o;
  o.seed = c.seed;
  o.cases = c.cases;
  o.only_case = c.only_case;
  o.out_dir = c.out_dir;
  o.save_all_dir = c.save_all_dir;
  o.jobs = c.jobs;
  o.gen.steps_min = c.steps_min;
  o.gen.steps_max = c.steps_max;
  o.shrink = !c.no_shrink;
  o.shrink_options.max_tries = c.shrink_tries;
  o.shrink_per_signature = c.shrink_per_signature;
  // The status line: on a terminal only, unless quiet.
  internal::ProgressLine line("fuzz", "steps");
  o.on_progress = [&](const fuzz::FuzzProgress& p) {
    if (c.quiet) return;
    line.Update(p.steps, fmt::format("{}/{} cases, {} mismatches", p.cases_done, p.cases_total,
                                     p.mismatches));
  };
  o.on_mismatch = [&](const fuzz::FoundMismatch& m) {
    if (c.quiet) return;
    line.Clear();
    fmt::print("MISMATCH case {}: {}{}\n", m.case_index, m.summary,
               m.file.empty() ? "" : " -> " + m.file);
    if (!m.engine_reason.empty()) fmt::print("  engine: {}\n", m.engine_reason);
    std::fflush(stdout);
  };
  o.on_problem = [&](const std::string& what) {
    line.Clear();
    fmt::print(stderr, "fuzz: {}\n", what);
  };
  auto r = fuzz::RunFuzz(o);
  line.Clear();
  if (!r) {
    fmt::print(stderr, "fuzz: skipped: {}\n", r.error());
    return 77;
  }
  if (!c.quiet) {
    std::map<std::string, int> by_signature;
    for (const auto& m : r->found) ++by_signature[m.signature];
    for (const auto& [sig, n] : by_signature) fmt::print("  {} x {}\n", n, sig);
    fmt::print(stderr,
               "fuzz: {:.1f} s, {:.0f} steps/s checked ({:.1f} s generating, running and comparing: "
               "{:.1f} s on kernel batches, {:.1f} s waiting for the generator), "
               "{} kernel runs shrinking, {} skipped, {} invalid, {} kernel failures\n",
               r->seconds, r->check_seconds > 0 ? r->steps / r->check_seconds : 0.0,
               r->check_seconds, r->kernel_seconds, r->wait_seconds, r->shrink_runs, r->skipped,
               r->invalid, r->kernel_errors);
  }
  fmt::print("fuzz: {} scenarios, {} steps, {} mismatches (seed {})\n", r->scenarios, r->steps,
             r->mismatches, c.seed);
  if (!fuzz::CleanRun(*r, o)) {
    fmt::print(stderr, "fuzz: not a clean run: {} invalid generated scenarios, {} kernel failures, "
               "{} scenarios compared\n", r->invalid, r->kernel_errors, r->scenarios);
    return 1;
  }
  return r->mismatches > 0 ? 1 : 0;
}

}  // namespace pathwarden::cli
