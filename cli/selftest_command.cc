// `pathwarden selftest`: flags to the selftest (src/fuzz/selftest.h),
// progress and the report to the terminal, or JSON.

#include "cli/selftest_command.h"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/embedded_suites.h"
#include "cli/explain_command.h"
#include "src/base/progress.h"
#include "src/input/json_text.h"

namespace pathwarden::cli {

void AddSelftest(CLI::App& app, SelftestCommandOptions* o, CLI::App** cmd) {
  *cmd = app.add_subcommand(
      "selftest",
      "check that this kernel answers as the engine models it: the rules where kernel builds "
      "differ (probed), every scenario suite on the engine and on the kernel, a short fuzz run "
      "(root, for the last two)");
  (*cmd)->add_option("--fuzz-cases", o->fuzz_cases, "random scenarios compared (0: none)");
  (*cmd)->add_option("--seed", o->seed, "the fuzz run's seed");
  (*cmd)->add_flag("--json", o->json, "the report as one JSON object");
  (*cmd)->add_option("--colour,--color", o->colour, "auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

int RunSelftestCommand(const SelftestCommandOptions& c) {
  fuzz::SelftestOptions o;
  o.suites = EmbeddedSuites();
  o.fuzz_cases = c.fuzz_cases;
  o.fuzz_seed = c.seed;
  internal::ProgressLine line("selftest", "");
  o.on_progress = [&](std::string_view part, uint64_t done, uint64_t total) {
    if (!c.json) line.Update(done, fmt::format("{} of {} ({})", done, total, part));
  };
  const fuzz::SelftestReport r = fuzz::RunSelftest(o);
  line.Clear();
  const int status = r.ExitStatus();
  if (c.json) {
    nlohmann::json j;
    j["kernel"] = r.kernel;
    j["landlock_abi"] = r.abi;
    j["rules"] = nlohmann::json::array();
    for (const fuzz::SelftestRule& rule : r.rules)
      j["rules"].push_back({{"key", rule.key}, {"about", rule.about}, {"value", rule.value},
                            {"mainline", rule.mainline}, {"observed", rule.observed}});
    j["kernel_unavailable"] = r.kernel_unavailable;
    j["suites"] = {{"files", r.files},          {"files_run", r.files_run},
                   {"steps", r.steps},          {"steps_agreeing", r.steps_agreeing},
                   {"skipped", r.skipped},      {"differences", r.differences}};
    j["fuzz"] = {{"seed", c.seed},
                 {"cases", r.fuzz_cases},
                 {"steps", r.fuzz_steps},
                 {"differences", r.fuzz_differences}};
    j["problems"] = r.problems;
    j["seconds"] = r.seconds;
    j["exit"] = status;
    std::cout << input::JsonText(j) << "\n";
    return status;
  }
  const bool colour = WantColour(c.colour);
  auto paint = [&](std::string_view text, const char* code) {
    return colour ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  };
  fmt::print("pathwarden selftest: does this kernel answer as the engine models it?\n");
  fmt::print("kernel: {}, Landlock ABI {}\n\n", r.kernel,
             r.abi > 0 ? std::to_string(r.abi) : "unavailable");
  fmt::print("Rules where kernel builds differ (probed; the engine follows this kernel):\n");
  for (const fuzz::SelftestRule& rule : r.rules) {
    const bool unknown = rule.value == "unknown";
    fmt::print("  {:<16} {}  {}\n", rule.key,
               paint(rule.value, unknown ? "1;33" : rule.value == rule.mainline ? "32" : "36"),
               rule.about);
    fmt::print("  {:<16} {}{}\n", "", rule.observed,
               rule.value == rule.mainline ? " (as mainline 6.18)"
                                           : fmt::format(" (mainline 6.18: {})", rule.mainline));
  }
  fmt::print("\n");
  if (!r.kernel_unavailable.empty()) {
    fmt::print("Suites and fuzz: {}: {}\n", paint("not run", "1;33"), r.kernel_unavailable);
  } else {
    fmt::print("Suites (every step on the engine and on the kernel, and the final trees): {} "
               "files, {} run, {} steps, {} agreeing\n",
               r.files, r.files_run, r.steps, r.steps_agreeing);
    for (const std::string& s : r.skipped) fmt::print("  {} {}\n", paint("SKIP", "33"), s);
    for (const std::string& d : r.differences) fmt::print("  {} {}\n", paint("DIFFERS", "1;31"), d);
    if (c.fuzz_cases > 0) {
      fmt::print("Fuzz (seed {}): {} random scenarios, {} steps, {} differences\n", c.seed,
                 r.fuzz_cases, r.fuzz_steps, r.fuzz_differences.size());
      for (const std::string& d : r.fuzz_differences)
        fmt::print("  {} {}\n", paint("DIFFERS", "1;31"), d);
    }
  }
  for (const std::string& p : r.problems) fmt::print("  {} {}\n", paint("PROBLEM", "1;31"), p);
  fmt::print("\n");
  size_t followed = 0;
  for (const fuzz::SelftestRule& rule : r.rules)
    if (rule.value != rule.mainline && rule.value != "unknown") ++followed;
  const std::string rules_note =
      followed == 0 ? "every rule as mainline 6.18"
                    : fmt::format("{} rule{} unlike mainline 6.18, followed", followed,
                                  followed == 1 ? "" : "s");
  switch (status) {
    case 0:
      fmt::print("selftest: {} ({}; {:.1f} s)\n",
                 paint("this kernel answers as the engine models it", "1;32"), rules_note,
                 r.seconds);
      break;
    case 1:
      fmt::print("selftest: {} ({} differences, {} problems; {:.1f} s)\n",
                 paint("this kernel differs from the engine's model", "1;31"),
                 r.differences.size() + r.fuzz_differences.size(), r.problems.size(), r.seconds);
      break;
    default:
      fmt::print("selftest: {} ({}; {:.1f} s)\n",
                 paint("not everything could be checked", "1;33"),
                 !r.rules_known ? "a rule could not be probed" : r.kernel_unavailable, r.seconds);
      break;
  }
  return status;
}

}  // namespace pathwarden::cli
