// pathwarden: the command line. Thin: parse flags, call the library, print.

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/check_command.h"
#include "cli/fuzz_command.h"

int main(int argc, char** argv) {
  CLI::App app{"pathwarden: what Linux answers when a process touches a path, and why"};
  app.require_subcommand(1);

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
  bcmd->add_option("WHICH", which, "landlock, lookup, import, host, threads or all")
      ->check(CLI::IsMember({"landlock", "lookup", "import", "host", "threads", "all"}));
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

  CLI11_PARSE(app, argc, argv);
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
