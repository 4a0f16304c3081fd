// The generator's entry points: a scenario from a case seed (tree, then
// processes, then steps), and the validity check every scenario passes.

#include "src/fuzz/generator.h"

#include <map>

#include <fmt/format.h>

#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
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
  gen_internal::GenerateSteps(g);
  return s;
}

namespace gen_internal {

std::map<std::string, bool> NodeView(const Scenario& s, std::string* error) {
  // Node paths made so far, and whether each is a directory.
  std::map<std::string, bool> made{{"/", true}};
  std::vector<std::string> mount_points;
  for (const NodeSpec& n : s.nodes) {
    const std::string parent = Dirname(n.path);
    auto p = made.find(parent);
    if (n.path != "/" && (p == made.end() || !p->second)) {
      if (error && error->empty())
        *error = fmt::format("node {}: its parent {} is no earlier directory node", n.path, parent);
      continue;
    }
    if (n.type == NodeType::kTmpfs || n.type == NodeType::kBind) {
      if (!made.contains(n.path)) {
        if (error && error->empty()) *error = fmt::format("node {}: its mount point is no earlier node", n.path);
        continue;
      }
      // A mount hides what was beneath; a bind shows its source's nodes.
      // The bind is not recursive: what mounts inside the source cover
      // stays covered (and unknown), their points show as directories.
      std::vector<std::pair<std::string, bool>> shown;
      auto under_inner_mount = [&](const std::string& path) {
        for (const std::string& m : mount_points)
          if (m != n.source && IsUnder(m, n.source) && path != m && IsUnder(path, m)) return true;
        return false;
      };
      if (n.type == NodeType::kBind)
        for (const auto& [path, dir] : made)
          if (path != n.source && IsUnder(path, n.source) && !under_inner_mount(path))
            shown.emplace_back((n.path == "/" ? "" : n.path) + path.substr(n.source == "/" ? 0 : n.source.size()), dir);
      mount_points.push_back(n.path);
      std::erase_if(made, [&](const auto& e) { return e.first != n.path && IsUnder(e.first, n.path); });
      made.insert(shown.begin(), shown.end());
    }
    auto [it, fresh] = made.try_emplace(n.path, false);
    if (n.type == NodeType::kDir || n.type == NodeType::kTmpfs) it->second = true;
    if (n.type == NodeType::kBind) {
      auto src = made.find(n.source);
      it->second = src != made.end() && src->second;
    }
  }
  return made;
}

}  // namespace gen_internal

std::string ValidateScenario(const Scenario& s, bool build) {
  const std::string toml = ScenarioToToml(s);
  auto back = ParseScenario(toml, s.file, /*json=*/false);
  if (!back) return fmt::format("its TOML does not parse: {}", back.error());
  if (std::string d = FirstDifference(s, *back); !d.empty())
    return fmt::format("its TOML parses to another scenario: {}", d);
  if (!build) return "";
  if (std::string e = EngineBuildError(s); !e.empty())
    return fmt::format("it does not build in the engine: {}", e);
  return "";
}

}  // namespace pathwarden::fuzz
