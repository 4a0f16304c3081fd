// Fuzz target: parse, then run with verification (run).
//
// A TOML scenario the reader accepts and the engine builds is run in the
// engine with `verify` (before every step a dry run, what readers get,
// must give the step's result; after it the caches must match their
// definitions: World::Verify()), then in every variant that must agree
// (CrossCheck(): both layer-mask layouts, fast search and the memo on and
// off, the hot path without reasons). Properties: no variant answers
// otherwise than the reference (so none allows where another denies),
// every answer is one Linux gives for that call (src/scenario/errnos.h),
// and nothing fails closed (a checking build aborts on that).
//
// Inputs are bounded so that one takes well under a second: at most 64
// steps and 6 bind mounts (recursive binds double the mounts each).

#include <string>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/base/engine_options.h"
#include "src/scenario/errnos.h"
#include "src/scenario/run_engine.h"
#include "src/scenario/variants.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pathwarden;
  using fuzz_target::FuzzFail;
  auto s = ParseScenario(fuzz_target::Text(data, size), "in.toml", false);
  if (!s.has_value() || s->steps.size() > 64) return 0;
  int binds = 0;
  for (const StepSpec& st : s->steps) binds += st.op == Op::kBindMount;
  if (binds > 6) return 0;
  if (!EngineBuildError(*s).empty()) return 0;
  EngineOptions base;
  base.verify = true;
  const RunResult r = RunInEngine(*s, base);
  // It built above: an error now is `verify` finding an inconsistency.
  if (r.status != RunResult::Status::kRan) FuzzFail("the run stopped: " + r.message);
  if (r.steps.size() != s->steps.size()) FuzzFail("a result missing");
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepSpec& st = s->steps[i];
    if (!LinuxReturns(st.op, r.steps[i].err))
      FuzzFail(fmt::format("{}: {} answered {}, which Linux never gives it ({})", s->Where(st.loc),
                           OpName(st.op), ErrnoName(r.steps[i].err), LinuxErrnoList(st.op)));
  }
  for (const VariantDifference& d : CrossCheck(*s, r, base)) {
    if (!d.error.empty()) FuzzFail(d.variant + " did not run: " + d.error);
    FuzzFail(fmt::format("{}: step {} ({}): reference {} \"{}\", variant {} \"{}\"", d.variant,
                         d.step + 1, s->Where(s->steps[d.step].loc),
                         ErrnoName(d.reference.err), d.reference.reason, ErrnoName(d.got.err),
                         d.got.reason));
  }
  return 0;
}
