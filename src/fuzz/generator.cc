// The generator's entry points: a scenario from a case seed (tree, then
// processes, then steps), and the validity check every scenario passes.

#include "src/fuzz/generator.h"

#include <fmt/format.h>

#include "pathwarden/executor.h"
#include "src/fuzz/gen_internal.h"
#include "src/fuzz/scenario_equal.h"

namespace pathwarden::fuzz {

Scenario GenerateScenario(uint64_t case_seed, const GenOptions& options) {
  Rng rng(case_seed);
  Scenario s;
  s.file = fmt::format("case-{:016x}", case_seed);
  s.description = fmt::format("fuzz case {:016x}", case_seed);
  gen_internal::GenState g(rng, options, &s);
  gen_internal::GenerateTree(g);
  gen_internal::GenerateProcesses(g);
  // Processes that still do not build (none should) go, last first.
  while (!s.processes.empty() && !EngineBuildError(s).empty()) {
    s.processes.pop_back();
    g.procs.pop_back();
  }
  gen_internal::GenerateSteps(g);
  return s;
}

std::string ValidateScenario(const Scenario& s) {
  const std::string toml = ScenarioToToml(s);
  auto back = ParseScenario(toml, s.file, /*json=*/false);
  if (!back) return fmt::format("its TOML does not parse: {}", back.error());
  if (std::string d = FirstDifference(s, *back); !d.empty())
    return fmt::format("its TOML parses to another scenario: {}", d);
  if (std::string e = EngineBuildError(s); !e.empty())
    return fmt::format("it does not build in the engine: {}", e);
  return "";
}

}  // namespace pathwarden::fuzz
