// `pathwarden selftest` (src/fuzz/selftest.h): the probed kernel rules, the
// suites on both executors, a short fuzz run.

#include "src/fuzz/selftest.h"

#include <sys/utsname.h>

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/fuzz/compare.h"
#include "src/fuzz/fuzzer.h"
#include "src/kernel/kernel_session.h"
#include "src/scenario/run_engine.h"

namespace pathwarden::fuzz {

namespace {

std::string ErrText(int err) { return err == 0 ? "ok" : ErrnoName(err); }

void ProbeRules(SelftestReport& r) {
  std::array<KernelRuleProbe, std::size(kKernelRuleFields)> probes;
  const KernelRules k = ProbeKernelRules(&probes);
  const KernelRules mainline;
  for (size_t i = 0; i < std::size(kKernelRuleFields); ++i) {
    const KernelRuleField& f = kKernelRuleFields[i];
    r.rules.push_back({std::string(f.key), std::string(f.about), std::string(f.ValueName(k)),
                       std::string(f.ValueName(mainline)), probes[i].observed});
    if (k.*f.value == EmptyFileCaps{}) r.rules_known = false;
  }
}

// Every step of every file, engine against kernel against expectation.
void RunSuites(const SelftestOptions& o, SelftestReport& r) {
  std::vector<Scenario> files;
  for (const SuiteFile& f : o.suites) {
    const bool json = f.name.size() > 5 && f.name.substr(f.name.size() - 5) == ".json";
    auto s = ParseScenario(f.text, std::string(f.name), json);
    if (!s) {
      r.problems.push_back(s.error());
      continue;
    }
    files.push_back(std::move(*s));
  }
  r.files = files.size();
  auto session = kernel_internal::KernelSession::Open();
  if (!session) {
    r.kernel_unavailable = session.error();
    return;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const Scenario& s = files[i];
    if (o.on_progress) o.on_progress("suites", i, files.size());
    EngineOptions eo;
    eo.capture_tree = true;
    const RunResult engine = RunInEngine(s, eo);
    KernelOptions ko;
    ko.capture_tree = true;
    const RunResult kernel = (*session)->Run(s, ko);
    if (kernel.status == RunResult::Status::kSkipped) {
      r.skipped.push_back(fmt::format("{}: {}", s.file, kernel.message));
      continue;
    }
    if (engine.status != RunResult::Status::kRan || kernel.status != RunResult::Status::kRan) {
      r.problems.push_back(fmt::format("{}: {}", s.file,
                                       engine.status != RunResult::Status::kRan ? engine.message
                                                                                : kernel.message));
      continue;
    }
    ++r.files_run;
    bool steps_agree = true;
    for (size_t k = 0; k < s.steps.size() && k < engine.steps.size() && k < kernel.steps.size();
         ++k) {
      const StepSpec& st = s.steps[k];
      const int e = engine.steps[k].err, kr = kernel.steps[k].err;
      ++r.steps;
      if (e == kr && kr == st.expect) {
        ++r.steps_agreeing;
        continue;
      }
      steps_agree = false;
      const std::string where =
          fmt::format("{} [{}] {}", s.Where(st.loc), st.as.empty() ? "root" : st.as, DescribeStep(st, 80));
      if (e != kr) {
        r.differences.push_back(fmt::format("{}: engine {}, kernel {} (expect {})", where,
                                            ErrText(e), ErrText(kr), ErrText(st.expect)));
      } else {
        r.differences.push_back(fmt::format("{}: engine and kernel {}, the suite expects {}",
                                            where, ErrText(kr), ErrText(st.expect)));
      }
    }
    if (steps_agree) {
      const Disagreement d = Compare(s, engine, kernel);
      if (d) r.differences.push_back(fmt::format("{}: {}", s.file, d.Summary(s)));
    }
  }
  if (o.on_progress) o.on_progress("suites", files.size(), files.size());
}

void RunFuzzPart(const SelftestOptions& o, SelftestReport& r) {
  if (o.fuzz_cases == 0 || !r.kernel_unavailable.empty()) return;
  FuzzOptions fo;
  fo.seed = o.fuzz_seed;
  fo.cases = o.fuzz_cases;
  fo.shrink = false;
  fo.on_progress = [&](const FuzzProgress& p) {
    if (o.on_progress) o.on_progress("fuzz", p.cases_done, p.cases_total);
  };
  fo.on_problem = [&](const std::string& what) { r.problems.push_back("fuzz: " + what); };
  auto fr = RunFuzz(fo);
  if (!fr) {
    r.problems.push_back("fuzz: " + fr.error());
    return;
  }
  r.fuzz_cases = fr->scenarios;
  r.fuzz_steps = fr->steps;
  for (const FoundMismatch& m : fr->found)
    r.fuzz_differences.push_back(fmt::format(
        "case {} of seed {}: {} (replay: pathwarden fuzz --seed {} --case {})", m.case_index,
        fo.seed, m.summary, fo.seed, m.case_index));
  if (!CleanRun(*fr, fo))
    r.problems.push_back(fmt::format("fuzz: not a clean run ({} invalid, {} kernel failures)",
                                     fr->invalid, fr->kernel_errors));
}

}  // namespace

int SelftestReport::ExitStatus() const {
  if (!differences.empty() || !fuzz_differences.empty() || !problems.empty()) return 1;
  if (!rules_known || !kernel_unavailable.empty()) return 3;
  return 0;
}

SelftestReport RunSelftest(const SelftestOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  SelftestReport r;
  struct utsname u {};
  if (uname(&u) == 0) r.kernel = fmt::format("{} {} ({})", u.sysname, u.release, u.version);
  r.abi = KernelAbi();
  ProbeRules(r);
  RunSuites(o, r);
  RunFuzzPart(o, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace pathwarden::fuzz
