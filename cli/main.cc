// pathwarden: the command line. Thin: parse flags, call the library, print.

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/check_command.h"

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
                "also run every engine variant (fast search on/off, both layouts) and "
                "fail on any difference in result or reason");
  cmd->add_flag("--explain-allowed", check.engine.explain_allowed,
                "explain allowed Landlock decisions too (which rule granted what)");

  pathwarden::bench::Options bench;
  std::string which = "all";
  auto* bcmd = app.add_subcommand("bench", "benchmarks: the seed experiments, engine against kernel");
  bcmd->add_option("WHICH", which, "landlock, lookup, import, threads or all")
      ->check(CLI::IsMember({"landlock", "lookup", "import", "threads", "all"}));
  bcmd->add_flag("--kernel", bench.kernel, "measure the real kernel in the same run");
  bcmd->add_flag("--quick", bench.quick, "small sizes, short timings (under a minute)");
  bcmd->add_flag("--smoke", bench.smoke, "tiny sizes: only that it works");
  bcmd->add_flag("--json", bench.json, "one JSON object per line and measurement");
  bcmd->add_option("--plot", bench.plot_dir, "write PNG charts into this directory");
  bcmd->add_option("--usr", bench.usr, "the host tree to snapshot (default /usr)");

  CLI11_PARSE(app, argc, argv);
  if (bcmd->parsed()) return pathwarden::cli::RunBench(which, bench);
  if (cmd->parsed()) {
    check.engine.fast_search = !no_fast_search;
    check.engine.memo = !no_memo;
    check.engine.layout = layout == "by-access" ? pathwarden::LayerLayout::kByAccess
                                                : pathwarden::LayerLayout::kByLayer;
    return pathwarden::cli::RunCheck(check);
  }
  return 0;
}
