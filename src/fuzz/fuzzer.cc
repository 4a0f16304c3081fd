// The differential fuzzer's loop: batches of generated scenarios, the
// engine on this thread while the kernel runs them on its servers, the
// comparison, and the shrinking and writing of every disagreement.

#include "src/fuzz/fuzzer.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <map>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "src/fuzz/compare.h"
#include "src/fuzz/random.h"
#include "src/kernel/kernel_session.h"

namespace pathwarden::fuzz {
namespace {

using kernel_internal::KernelSession;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

RunResult Engine(const Scenario& s) {
  EngineOptions o;
  o.capture_tree = true;
  o.verify = true;
  // Every dry run also asked warm from the walk's prefix memo and without
  // it, which must agree word for word (RunInEngine()).
  o.prefix_memo = true;
  return RunInEngine(s, o);
}

bool InternalFailure(const RunResult& r) {
  return r.status == RunResult::Status::kError && r.message.find("internal:") != std::string::npos;
}

class Fuzzer {
 public:
  Fuzzer(const FuzzOptions& o, KernelSession& session) : o_(o), session_(session) {}

  FuzzResult Run() {
    const auto start = Clock::now();
    const uint64_t first = o_.only_case.value_or(0);
    const uint64_t end = o_.only_case ? first + 1 : o_.cases;
    const uint64_t batch = 16 * static_cast<uint64_t>(std::max(1, o_.jobs));
    FuzzProgress progress;
    progress.cases_total = end - first;
    double shrink_seconds = 0;
    // A pipeline: while the kernel runs one batch (driven from this
    // thread: servers die with the thread that started them), another
    // thread generates the next one and runs it in the engine.
    auto prepare = [this, end, batch](uint64_t at) {
      return std::async(std::launch::async, [this, at, n = std::min(batch, end - at)] { return Prepare(at, n); });
    };
    std::future<Batch> next;
    if (first < end) next = prepare(first);
    for (uint64_t at = first; at < end; at += batch) {
      auto t_wait = Clock::now();
      Batch b = next.get();
      r_.wait_seconds += Since(t_wait);
      if (at + batch < end) next = prepare(at + batch);
      for (const std::string& p : b.problems) Problem(p);
      r_.invalid += b.problems.size();
      std::vector<const Scenario*> ptrs;
      for (const Scenario& s : b.scenarios) ptrs.push_back(&s);
      KernelOptions ko;
      ko.capture_tree = true;
      auto t_kernel = Clock::now();
      std::vector<RunResult> kernel = session_.RunBatch(ptrs, ko, o_.jobs);
      r_.kernel_seconds += Since(t_kernel);
      for (size_t k = 0; k < b.scenarios.size(); ++k) {
        const Scenario& s = b.scenarios[k];
        if (kernel[k].status == RunResult::Status::kSkipped) {
          ++r_.skipped;
          continue;
        }
        if (InternalFailure(kernel[k])) {
          ++r_.kernel_errors;
          Problem(fmt::format("kernel failure: seed {} case {}: {}", o_.seed, b.index[k], kernel[k].message));
          continue;
        }
        ++r_.scenarios;
        r_.steps += s.steps.size();
        if (!o_.save_all_dir.empty()) Save(s, kernel[k], b.index[k]);
        const Disagreement d = Compare(s, b.engine[k], kernel[k]);
        if (!d) continue;
        ++r_.mismatches;
        const auto t = Clock::now();
        Report(s, b.index[k], d);
        shrink_seconds += Since(t);
      }
      progress.cases_done = std::min(end, at + batch) - first;
      progress.steps = r_.steps;
      progress.mismatches = r_.mismatches;
      progress.seconds = Since(start);
      if (o_.on_progress) o_.on_progress(progress);
    }
    r_.seconds = Since(start);
    r_.check_seconds = r_.seconds - shrink_seconds;
    return std::move(r_);
  }

 private:
  // Cases [at, at + n): generated, checked and run in the engine.
  struct Batch {
    std::vector<Scenario> scenarios;
    std::vector<uint64_t> index;
    std::vector<RunResult> engine;
    std::vector<std::string> problems;  // generator bugs
  };

  Batch Prepare(uint64_t at, uint64_t n) const {
    Batch b;
    for (uint64_t i = at; i < at + n; ++i) {
      Scenario s = GenerateScenario(CaseSeed(o_.seed, i), o_.gen);
      s.file = fmt::format("{}-{}", o_.seed, i);
      std::string why = ValidateScenario(s, /*build=*/false);
      RunResult e;
      if (why.empty()) {
        e = Engine(s);
        if (e.status == RunResult::Status::kError) why = "it does not build in the engine: " + e.message;
      }
      if (!why.empty()) {
        b.problems.push_back(fmt::format("generator bug: seed {} case {}: {}", o_.seed, i, why));
        continue;
      }
      b.scenarios.push_back(std::move(s));
      b.index.push_back(i);
      b.engine.push_back(std::move(e));
    }
    return b;
  }

  void Problem(const std::string& what) {
    if (o_.on_problem) o_.on_problem(what);
  }

  // Shrinks the disagreement `d` of case `case_index`, writes the result
  // and tells the caller.
  void Report(const Scenario& original, uint64_t case_index, const Disagreement& d) {
    FoundMismatch m;
    m.case_index = case_index;
    m.signature = d.Signature();
    m.steps_before = original.steps.size();
    Scenario best = original;
    const bool shrink = o_.shrink && shrunk_[m.signature]++ < o_.shrink_per_signature;
    if (shrink) {
      auto keep = [&](const Scenario& c) {
        if (!ValidateScenario(c, /*build=*/false).empty()) return false;
        RunResult e = Engine(c);
        if (e.status == RunResult::Status::kError && d.kind != Disagreement::Kind::kBuild) return false;
        if (d.kind == Disagreement::Kind::kStep) {
          // Without a step of that operation the engine answers as before
          // with, the kernel need not be asked.
          bool candidate = false;
          for (size_t i = 0; i < c.steps.size() && i < e.steps.size(); ++i)
            candidate = candidate || (c.steps[i].op == d.op && e.steps[i].err == d.engine_err);
          if (!candidate) return false;
        }
        ++r_.shrink_runs;
        KernelOptions ko;
        ko.capture_tree = true;
        RunResult k = session_.Run(c, ko);
        return HasDisagreement(c, e, k, m.signature);
      };
      ShrinkStats stats;
      best = Shrink(original, keep, o_.shrink_options, &stats);
      m.shrink_tries = stats.tries;
    }
    // The final runs: the summary and the kernel's answers as expectations.
    KernelOptions ko;
    ko.capture_tree = true;
    RunResult k = session_.Run(best, ko);
    RunResult e = Engine(best);
    Disagreement final = Compare(best, e, k);
    if (!final) final = d;  // a flaky kernel answer: keep what was seen first
    m.summary = final.Summary(best);
    m.engine_reason = final.engine_reason;
    m.steps_after = best.steps.size();
    if (o_.shrink && !shrink) m.summary += " (not shrunk: seen before)";
    best.description = m.summary;
    NameRunningRules(best);
    if (k.status == RunResult::Status::kRan)
      for (size_t i = 0; i < best.steps.size() && i < k.steps.size(); ++i) best.steps[i].expect = k.steps[i].err;
    if (!o_.out_dir.empty()) {
      mkdir(o_.out_dir.c_str(), 0755);
      m.file = fmt::format("{}/{}-{}.toml", o_.out_dir, o_.seed, case_index);
      std::ofstream out(m.file);
      out << MismatchFileText(best, o_.seed, case_index, m.engine_reason);
      if (!out) Problem(fmt::format("cannot write {}", m.file));
    }
    if (o_.on_mismatch) o_.on_mismatch(m);
    r_.found.push_back(std::move(m));
  }

  // A file whose expectations are this kernel's answers names the rules
  // of this kernel where builds differ (pathwarden/kernel_rules.h), so
  // that another machine runs it as written, or skips it saying why.
  static void NameRunningRules(Scenario& s) {
    const KernelRules& running = RunningKernelRules();
    for (size_t i = 0; i < std::size(kKernelRuleFields); ++i) {
      const KernelRuleField& f = kKernelRuleFields[i];
      if (running.*f.value == EmptyFileCaps{}) continue;
      s.kernel.rules.*f.value = running.*f.value;
      s.kernel.named[i] = true;
    }
  }

  void Save(Scenario s, const RunResult& kernel, uint64_t case_index) {
    NameRunningRules(s);
    for (size_t i = 0; i < s.steps.size() && i < kernel.steps.size(); ++i)
      s.steps[i].expect = kernel.steps[i].err;
    mkdir(o_.save_all_dir.c_str(), 0755);
    std::ofstream out(fmt::format("{}/{}-{}.toml", o_.save_all_dir, o_.seed, case_index));
    out << ScenarioToToml(s);
  }

  const FuzzOptions& o_;
  KernelSession& session_;
  std::map<std::string, int> shrunk_;  // by signature
  FuzzResult r_;
};

}  // namespace

std::string MismatchFileText(const Scenario& s, uint64_t seed, uint64_t case_index,
                             const std::string& engine_reason) {
  std::string text = fmt::format(
      "# Found by `pathwarden fuzz --seed {} --case {}`, then shrunk.\n"
      "# Expectations are the kernel's answers: the engine disagrees until fixed.\n",
      seed, case_index);
  if (!engine_reason.empty()) text += fmt::format("# The engine's reason: {}\n", engine_reason);
  return text + ScenarioToToml(s);
}

Result<FuzzResult, std::string> RunFuzz(const FuzzOptions& options) {
  auto session = KernelSession::Open();
  if (!session) return Unexpected(session.error());
  FuzzOptions o = options;
  o.gen.caps_available = kernel_internal::AvailableCaps();
  return Fuzzer(o, **session).Run();
}

bool CleanRun(const FuzzResult& r, const FuzzOptions& options) {
  return r.invalid == 0 && r.kernel_errors == 0 && (r.scenarios > 0 || options.cases == 0);
}

}  // namespace pathwarden::fuzz
