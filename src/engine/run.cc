// The engine as an executor of scenario files.

#include "src/engine/run.h"

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/engine/engine.h"

namespace pathwarden {

std::string EngineBuildError(const Scenario& s) {
  Engine e(EngineOptions{});
  auto built = e.Build(s);
  return built ? std::string() : built.error();
}

RunResult RunInEngine(const Scenario& s, const EngineOptions& options, EngineStats* stats) {
  RunResult r;
  Engine e(options);
  if (auto built = e.Build(s); !built) {
    r.status = RunResult::Status::kError;
    r.message = built.error();
    return r;
  }
  r.steps.reserve(s.steps.size());
  for (const StepSpec& st : s.steps) {
    Explainer ex;
    StepResult sr;
    if (options.verify) {
      // A dry run (what readers get) must answer as the step will.
      Explainer dry_ex;
      const int dry = e.Evaluate(st, options.explain ? &dry_ex : nullptr);
      sr.err = e.Step(st, options.explain ? &ex : nullptr);
      if (dry != sr.err) {
        r.status = RunResult::Status::kError;
        r.message = fmt::format("{}: internal inconsistency: a dry run answers {} (\"{}\"), "
                                "the step {} (\"{}\")",
                                s.Where(st.loc), ErrnoName(dry), dry_ex.Line(), ErrnoName(sr.err),
                                ex.Line());
        return r;
      }
    } else {
      sr.err = e.Step(st, options.explain ? &ex : nullptr);
    }
    sr.reason = ex.Line();
    r.steps.push_back(std::move(sr));
    if (options.verify) {
      if (std::string bad = e.world().Verify(); !bad.empty()) {
        r.status = RunResult::Status::kError;
        r.message = fmt::format("{}: internal inconsistency after this step: {}", s.Where(st.loc),
                                bad);
        return r;
      }
    }
  }
  if (options.capture_tree) r.tree = e.Snapshot();
  if (stats) *stats = e.stats();
  return r;
}

}  // namespace pathwarden
