// `pathwarden check`: run scenario files in the engine, on the kernel, or
// both, and report every step with its result, expectation and reason.

#include "cli/check_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/scenario/variants.h"
#include "src/kernel/kernel_session.h"
#include "src/input/json_text.h"

namespace pathwarden::cli {

int RunCheck(const CheckOptions& o) {
  // Parse and build everything first: a file with an error runs nothing,
  // and then no file runs.
  std::vector<Scenario> files;
  bool any_error = false;
  for (const std::string& f : o.files) {
    auto s = LoadScenarioFile(f);
    if (!s) {
      std::cerr << s.error() << "\n";
      any_error = true;
      continue;
    }
    std::string err = EngineBuildError(*s);
    if (!err.empty()) {
      std::cerr << err << "\n";
      any_error = true;
      continue;
    }
    files.push_back(std::move(*s));
  }
  if (any_error) return 2;

  const bool color = !o.json && isatty(STDOUT_FILENO);
  auto paint = [&](std::string_view text, const char* code) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  };
  const bool use_kernel = o.kernel || o.both;
  const bool use_engine = !o.kernel || o.both;
  std::unique_ptr<kernel_internal::KernelSession> session;
  std::string kernel_unavailable;
  if (use_kernel) {
    auto opened = kernel_internal::KernelSession::Open();
    if (opened) {
      session = std::move(*opened);
    } else {
      kernel_unavailable = opened.error();
    }
  }
  uint64_t steps = 0, failed = 0, skipped_files = 0, tree_failures = 0, variant_failures = 0;
  bool kernel_error = false;
  EngineStats total;
  for (const Scenario& s : files) {
    RunResult engine;
    if (use_engine) {
      EngineStats stats;
      EngineOptions eo = o.engine;
      eo.capture_tree = o.both || o.show_tree;
      eo.verify = o.cross_check;
      // --quiet shows the reasons of failing steps only; the variants'
      // comparison needs every one.
      eo.explain_mismatches_only = o.quiet && !o.json && !o.cross_check;
      engine = RunInEngine(s, eo, &stats);
      total.components += stats.components;
      total.fast_components += stats.fast_components;
      if (engine.status == RunResult::Status::kError) {
        std::cerr << engine.message << "\n";
        return 2;
      }
    }
    RunResult kernel;
    if (use_kernel) {
      if (!session) {
        kernel.status = RunResult::Status::kSkipped;
        kernel.message = kernel_unavailable;
      } else {
        KernelOptions ko;
        ko.capture_tree = o.both || o.show_tree;
        kernel = session->Run(s, ko);
      }
      if (kernel.status == RunResult::Status::kError) {
        std::cerr << kernel.message << "\n";
        kernel_error = true;
        continue;
      }
      if (kernel.status == RunResult::Status::kSkipped) {
        ++skipped_files;
        if (!o.json) fmt::print("{} {}: {}\n", paint("SKIP", "33"), s.file, kernel.message);
        if (o.kernel) continue;
      }
    }
    const bool have_kernel = use_kernel && kernel.status == RunResult::Status::kRan;
    if (o.both && have_kernel) {
      // The final trees must agree too: modes, owners, ACLs, links, sizes.
      // At most 10 shown: a deep tree's paths are long, so only those are
      // made.
      size_t count = 0;
      const std::vector<std::string> diffs = DiffTrees(engine.tree, kernel.tree, 10, &count);
      if (count > 0) ++tree_failures;
      for (const std::string& d : diffs) {
        if (o.json) {
          std::cout << input::JsonText(nlohmann::json{{"file", s.file}, {"tree", d}, {"pass", false}})
                    << "\n";
        } else {
          fmt::print("{} {}: final trees differ: {}\n", paint("FAIL", "1;31"), s.file, d);
        }
      }
      if (count > diffs.size() && !o.json)
        fmt::print("     ... and {} more differences\n", count - diffs.size());
    }
    if (o.cross_check && use_engine) {
      // Every variant must give the same result, and with reasons the
      // same reason (CrossCheckVariants()).
      for (const VariantDifference& d : CrossCheck(s, engine, o.engine)) {
        ++variant_failures;
        nlohmann::json j;
        std::string text;
        if (!d.error.empty()) {
          text = fmt::format("{} ({}): {}", s.file, d.variant, d.error);
          j = {{"variant", d.variant}, {"error", d.error}};
        } else {
          text = fmt::format("{}:{} variants differ ({}): {} \"{}\" vs {} \"{}\"", s.file,
                             d.step + 1, d.variant, ErrnoName(d.reference.err), d.reference.reason,
                             ErrnoName(d.got.err), d.got.reason);
          j = {{"step", d.step + 1},
               {"variant", d.variant},
               {"result", ErrnoName(d.reference.err)},
               {"variant_result", ErrnoName(d.got.err)},
               {"reason", d.reference.reason},
               {"variant_reason", d.got.reason}};
        }
        if (o.json) {
          j["file"] = s.file;
          j["pass"] = false;
          std::cout << input::JsonText(j) << "\n";
        } else {
          fmt::print("{} {}\n", paint("FAIL", "1;31"), text);
        }
      }
    }
    if (!o.json && !o.quiet && !s.description.empty())
      fmt::print("{} -- {}\n", s.file, s.description);
    if (o.show_tree && !o.json) {
      const RunResult& shown = o.kernel ? kernel : engine;
      for (size_t i = 0; i < shown.tree.size(); ++i)
        fmt::print("  {} {}\n", TreePath(shown.tree, i), DescribeTreeEntry(shown.tree[i]));
    }
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const StepSpec& st = s.steps[i];
      const int got_engine = use_engine ? engine.steps[i].err : 0;
      const int got_kernel = have_kernel ? kernel.steps[i].err : 0;
      const std::string reason = use_engine ? engine.steps[i].reason : std::string();
      bool pass = true;
      if (use_engine) pass = pass && got_engine == st.expect;
      if (have_kernel) pass = pass && got_kernel == st.expect;
      const int got = o.kernel ? got_kernel : got_engine;
      ++steps;
      if (!pass) ++failed;
      if (o.json) {
        nlohmann::json j = {{"file", s.file},          {"step", i + 1},
                            {"op", OpName(st.op)},     {"as", st.as},
                            {"expect", ErrnoName(st.expect)}, {"got", ErrnoName(got)},
                            {"pass", pass},            {"reason", reason}};
        if (o.both) {
          j["got_engine"] = ErrnoName(got_engine);
          j["got_kernel"] = have_kernel ? ErrnoName(got_kernel) : "skipped";
        }
        std::cout << input::JsonText(j) << "\n";
        continue;
      }
      if (o.quiet && pass) continue;
      std::string result = ErrnoName(got);
      if (o.both && have_kernel && got_engine != got_kernel)
        result = fmt::format("engine {}, kernel {}", ErrnoName(got_engine), ErrnoName(got_kernel));
      else if (o.both && have_kernel)
        result += " (engine and kernel)";
      fmt::print("{} {}:{} [{}] {} = {} (expect {}){}{}\n",
                 pass ? paint("PASS", "32") : paint("FAIL", "1;31"), s.file, i + 1, st.as,
                 DescribeStep(st), result, ErrnoName(st.expect), use_engine ? ": " : "",
                 use_engine ? (reason.empty() ? "ok" : reason) : "");
    }
  }
  if (!o.json) {
    fmt::print("check: {} file{}, {} steps, {} passed, {} failed{}{}{}\n", files.size(),
               files.size() == 1 ? "" : "s", steps, steps - failed, failed,
               tree_failures ? fmt::format(", {} final trees differ", tree_failures) : "",
               variant_failures ? fmt::format(", {} variant differences", variant_failures) : "",
               skipped_files ? fmt::format(", {} files skipped", skipped_files) : "");
    if (!o.quiet && total.components)
      fmt::print("fast search: {} of {} components searched took the fast path ({:.1f}%){}\n",
                 total.fast_components, total.components,
                 100.0 * total.fast_components / total.components,
                 o.engine.fast_search ? "" : " -- switched off");
  }
  if (kernel_error) return 2;
  if (failed || tree_failures || variant_failures) return 1;
  if (!files.empty() && skipped_files == files.size()) return 77;
  return 0;
}

}  // namespace pathwarden::cli
