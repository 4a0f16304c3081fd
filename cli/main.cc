// pathwarden: the command line. Thin: parse flags, call the library, print.

#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/check_command.h"
#include "cli/explain_command.h"
#include "cli/fuzz_command.h"
#include "cli/help_command.h"
#include "cli/map_command.h"
#include "cli/memory_budget.h"
#include "cli/policy_command.h"
#include "cli/run_command.h"
#include "cli/selftest_command.h"
#include "cli/trace_command.h"

int main(int argc, char** argv) {
  CLI::App app{"pathwarden: what Linux answers when a process touches a path, and why"};
  app.require_subcommand(1);
  uint64_t memory_budget = pathwarden::cli::DefaultMemoryBudgetMib();
  app.add_option("--memory-budget", memory_budget,
                 "MiB of memory that check, fuzz, policy, explain and map may use before they "
                 "stop with a message and exit 2 (before the command; default: the machine's "
                 "memory)")
      ->check(CLI::PositiveNumber);
  app.set_version_flag("--version", pathwarden::cli::VersionText(),
                       "print the version and the git commit it was built from, and exit");

  pathwarden::cli::CheckOptions check;
  std::string layout = "by-layer";
  bool no_fast_search = false, no_memo = false;
  auto* cmd = app.add_subcommand("check", "run scenario files and report each step");
  cmd->add_option("FILE", check.files, "scenario files (.toml, or .json)")->required();
  cmd->add_flag("--json", check.json, "one JSON object per step");
  auto* kernel = cmd->add_flag("--kernel", check.kernel, "run the steps on the real kernel instead");
  cmd->add_flag("--both", check.both,
                "run engine and kernel; a step passes when both give the expectation")
      ->excludes(kernel);
  cmd->add_flag("-q,--quiet", check.quiet, "print only failures and the summary");
  cmd->add_flag("--no-fast-search", no_fast_search,
                "do not skip the search check for directories everyone may search");
  cmd->add_option("--layout", layout, "Landlock layer-mask layout")
      ->check(CLI::IsMember({"by-layer", "by-access"}));
  cmd->add_flag("--no-memo", no_memo, "walk to the root on every Landlock check");
  cmd->add_flag("--show-tree", check.show_tree, "print the final tree of each file");
  cmd->add_flag("--cross-check", check.cross_check,
                "also run every engine variant (fast search, layouts, memo, reasons, the "
                "walk's loop; each with a dry run first and cache checks) and fail on any "
                "difference in result or reason");
  cmd->add_flag("--explain-allowed", check.engine.explain_allowed,
                "explain allowed Landlock decisions too (which rule granted what)");

  pathwarden::bench::Options bench;
  std::string which = "all";
  auto* bcmd = app.add_subcommand("bench", "benchmarks: the seed experiments, engine against kernel");
  bcmd->add_option("WHICH", which, "landlock, lookup, import, host, threads, commands, trace, fileserver or all")
      ->check(CLI::IsMember(
          {"landlock", "lookup", "import", "host", "threads", "commands", "trace", "fileserver", "all"}));
  bcmd->add_flag("--kernel", bench.kernel, "measure the real kernel in the same run");
  bcmd->add_flag("--quick", bench.quick, "small sizes, short timings (under a minute)");
  bcmd->add_flag("--smoke", bench.smoke, "tiny sizes: only that it works");
  bcmd->add_flag("--json", bench.json, "one JSON object per line and measurement");
  bcmd->add_option("--plot", bench.plot_dir, "write PNG charts into this directory");
  bcmd->add_option("--usr", bench.usr, "the host tree to preload (default /usr)");
  bcmd->add_flag("--instructions", bench.instructions,
                 "also count instructions per check of the engine variants (valgrind's callgrind)");
  // Run under callgrind by --instructions: not for people.
  std::vector<std::string> probe_args;
  auto* probe = app.add_subcommand("bench-probe", "")->group("");
  probe->add_option("ARGS", probe_args)->required();


  pathwarden::cli::FuzzCommandOptions fuzz;
  uint64_t only_case = 0;
  auto* fz = app.add_subcommand("fuzz", "compare the engine with the kernel on random scenarios");
  fz->add_option("--seed", fuzz.seed, "the run's seed (case i's own seed derives from it and i)");
  fz->add_option("--cases", fuzz.cases, "how many scenarios");
  auto* case_opt = fz->add_option("--case", only_case, "run only this case of the seed (a replay)");
  fz->add_option("--out", fuzz.out_dir, "write each shrunk disagreement here as <seed>-<case>.toml");
  fz->add_option("--save-all", fuzz.save_all_dir,
                 "also write every case run, with the kernel's answers as expectations");
  fz->add_option("--jobs", fuzz.jobs, "scenarios on the kernel at once")->check(CLI::Range(1, 64));
  fz->add_option("--steps-min", fuzz.steps_min, "fewest steps per scenario")->check(CLI::Range(1, 1000));
  fz->add_option("--steps-max", fuzz.steps_max, "most steps per scenario")->check(CLI::Range(1, 1000));
  fz->add_option("--shrink-tries", fuzz.shrink_tries, "candidates tried per shrink");
  fz->add_option("--shrink-per-signature", fuzz.shrink_per_signature,
                 "shrink at most this many disagreements of one kind (operation and errnos)");
  fz->add_flag("--no-shrink", fuzz.no_shrink, "write disagreements as found");
  fz->add_flag("-q,--quiet", fuzz.quiet, "print only the final line");

  pathwarden::cli::PolicyCommand policy;
  pathwarden::cli::AddPolicyCommand(app, policy);
  pathwarden::cli::ExplainOptions explain;
  CLI::App* explain_cmd = nullptr;
  pathwarden::cli::AddExplain(app, &explain, &explain_cmd);
  pathwarden::cli::MapCommandOptions map;
  CLI::App* map_cmd = nullptr;
  pathwarden::cli::AddMap(app, &map, &map_cmd);

  pathwarden::cli::SelftestCommandOptions selftest;
  CLI::App* selftest_cmd = nullptr;
  pathwarden::cli::AddSelftest(app, &selftest, &selftest_cmd);

  pathwarden::cli::RunCommandOptions run;
  int pretend_abi = 0;
  auto* rcmd = app.add_subcommand(
      "run", "enforce policies with the kernel's Landlock, then execute a command under them");
  pathwarden::cli::AddLayerFlags(rcmd, &run.policies, &run.from_env);
  bool best_effort = false;
  auto* best = rcmd->add_flag("--best-effort", best_effort,
                              "drop rights this kernel lacks, listing them on stderr (default)");
  rcmd->add_flag("--hard", run.hard, "refuse to run (125) when this kernel lacks a right")
      ->excludes(best);
  rcmd->add_flag("--dry-run", run.dry_run, "print the rulesets as this kernel would get them");
  rcmd->add_flag("-v,--verbose", run.verbose, "say what is enforced on stderr");
  // Tests: enforce as if the kernel had this (older) ABI.
  auto* pretend = rcmd->add_option("--pretend-abi", pretend_abi)->group("")->check(CLI::Range(0, 7));
  // As env(1): options end at the command (or at "--"); what follows is its own.
  rcmd->prefix_command();
  rcmd->allow_extras();
  rcmd->footer("Exit status: the command's; 125 for run's own errors (a bad policy, a --hard "
               "refusal), 126 when the command cannot be executed, 127 when it is not found.");

  pathwarden::cli::TraceOptions trace;
  CLI::App* trace_cmd = nullptr;
  pathwarden::cli::AddTrace(app, &trace, &trace_cmd);

  std::vector<std::string> help_words;
  auto* hcmd = app.add_subcommand("help", "print a command's help (pathwarden help policy check), "
                                          "or the overview");
  hcmd->add_option("COMMAND", help_words, "the command (and its subcommand)");
  std::string shell;
  auto* ccmd = app.add_subcommand("completion", "print a shell completion script");
  ccmd->add_option("SHELL", shell, "the shell (bash)")->required()->check(CLI::IsMember({"bash"}));

  // run's command after "--" is set aside before CLI11 sees it (CLI11
  // would call it extras); without "--", prefix_command() ends the options
  // at the command. A "--" after the command starts is the command's own.
  // The command's name stands after the global options (--memory-budget
  // N); an option of `at` that takes a value (as `--policy F`, not
  // `--policy=F`) is followed by it.
  auto takes_value = [](const CLI::App& at, std::string_view a) {
    const CLI::Option* opt = at.get_option_no_throw(std::string(a));
    return opt != nullptr && opt->get_items_expected_max() > 0;
  };
  int sub = 1;
  while (sub < argc && argv[sub][0] == '-' && std::string_view(argv[sub]) != "--")
    sub += takes_value(app, argv[sub]) ? 2 : 1;
  std::vector<std::string> run_command_after_dashes;
  const bool wraps = sub < argc && (std::string_view(argv[sub]) == "run" ||
                                    std::string_view(argv[sub]) == "trace");
  if (wraps) {
    const CLI::App& cmd_app = *app.get_subcommand(argv[sub]);
    for (int i = sub + 1; i < argc; ++i) {
      std::string_view a = argv[i];
      if (a == "--") {
        run_command_after_dashes.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
      if (a.empty() || a[0] != '-') break;
      if (takes_value(cmd_app, a)) ++i;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // run's own errors are 125, as env(1)'s and timeout(1)'s; the other
    // commands' bad input is 2.
    if (rc != 0 && wraps) {
      if (std::string_view(argv[sub]) == "trace") pathwarden::cli::PrintNoCounts();
      return 125;
    }
    return rc == 0 ? 0 : 2;
  }
  // Not run and trace: the command they start would inherit the limit.
  if (policy.policy->parsed() || explain_cmd->parsed() || map_cmd->parsed() || fz->parsed() ||
      cmd->parsed() || selftest_cmd->parsed()) {
    if (std::string err = pathwarden::cli::ApplyMemoryBudget(memory_budget); !err.empty()) {
      std::cerr << "pathwarden: " << err << "\n";
      return 2;
    }
  }
  // --from-env's layer is stacked where it stood among the --policy
  // options.
  explain.from_env_at = pathwarden::cli::FromEnvPosition(*explain_cmd);
  map.from_env_at = pathwarden::cli::FromEnvPosition(*map_cmd);
  run.from_env_at = pathwarden::cli::FromEnvPosition(*rcmd);
  trace.from_env_at = pathwarden::cli::FromEnvPosition(*trace_cmd);
  if (hcmd->parsed()) return pathwarden::cli::RunHelp(app, help_words);
  if (ccmd->parsed()) {
    std::cout << pathwarden::cli::BashCompletion(app);
    return 0;
  }
  if (policy.policy->parsed()) return pathwarden::cli::RunPolicyCommand(policy);
  if (explain_cmd->parsed()) return pathwarden::cli::RunExplain(explain);
  if (map_cmd->parsed()) return pathwarden::cli::RunMapCommand(map);
  if (rcmd->parsed()) {
    if (pretend->count() > 0) run.pretend_abi = pretend_abi;
    run.argv = rcmd->remaining();
    if (!run.argv.empty() && run.argv.front().size() > 1 && run.argv.front()[0] == '-') {
      std::cerr << "pathwarden run: unknown option " << run.argv.front()
                << " (the command goes after the options, or after --)\n";
      return 125;
    }
    if (run.argv.empty()) run.argv = run_command_after_dashes;
    return pathwarden::cli::RunRunCommand(run);
  }
  if (trace_cmd->parsed()) {
    trace.argv = trace_cmd->remaining();
    if (!trace.argv.empty() && trace.argv.front().size() > 1 && trace.argv.front()[0] == '-') {
      std::cerr << "pathwarden trace: unknown option " << trace.argv.front()
                << " (the command goes after the options, or after --)\n";
      pathwarden::cli::PrintNoCounts();
      return 125;
    }
    if (trace.argv.empty()) trace.argv = run_command_after_dashes;
    return pathwarden::cli::RunTrace(trace);
  }
  if (selftest_cmd->parsed()) return pathwarden::cli::RunSelftestCommand(selftest);
  if (bcmd->parsed()) return pathwarden::cli::RunBench(which, bench);
  if (probe->parsed()) return pathwarden::bench::RunProbe(probe_args);
  if (fz->parsed()) {
    if (case_opt->count() > 0) fuzz.only_case = only_case;
    return pathwarden::cli::RunFuzzCommand(fuzz);
  }
  if (cmd->parsed()) {
    check.engine.fast_search = !no_fast_search;
    check.engine.memo = !no_memo;
    check.engine.layout = layout == "by-access" ? pathwarden::LayerLayout::kByAccess
                                                : pathwarden::LayerLayout::kByLayer;
    return pathwarden::cli::RunCheck(check);
  }
  return 0;
}
