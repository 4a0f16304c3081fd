// `pathwarden bench`'s selection: which benchmarks run, their tables and
// charts, and with --smoke whether every measurement asked for is there.

#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.h"
#include "pathwarden/executor.h"
#include "src/sandbox/run.h"

namespace pathwarden::bench {
namespace {

// Whether some row of `r` is about `bench`, has every key of `keys` with a
// positive number, and the given variant (when not empty).
bool Has(const Reporter& r, const std::string& bench, const std::string& variant,
         std::initializer_list<const char*> keys) {
  for (const nlohmann::json& m : r.all()) {
    if (m.value("bench", "") != bench) continue;
    if (!variant.empty() && m.value("variant", "") != variant) continue;
    bool ok = true;
    for (const char* k : keys) ok = ok && m.contains(k) && m[k].is_number() && m[k].get<double>() > 0;
    if (ok) return true;
  }
  return false;
}

// With --smoke: every measurement the run was asked for is there, so a
// benchmark that stops working fails the test that runs it.
std::vector<std::string> Missing(const std::string& which, const Options& o,
                                 const Reporter& r) {
  const bool all = which == "all";
  const bool kernel = o.kernel && KernelUnavailableReason().empty();
  std::vector<std::string> missing;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) missing.push_back(what);
  };
  if (all || which == "landlock") {
    for (const char* v : {"by-access", "by-layer", "memoized"}) {
      need(Has(r, "landlock", v, {"ns_per_check", "depth"}), fmt::format("landlock {}", v));
      if (o.instructions)
        need(Has(r, "landlock", v, {"instructions_per_check"}),
             fmt::format("landlock {} instructions", v));
    }
    if (kernel) need(Has(r, "landlock", "kernel", {"ns_per_check"}), "landlock kernel");
  }
  if (all || which == "lookup") {
    for (const char* v : {"engine-fast", "engine-slow"}) {
      need(Has(r, "lookup", v, {"ops_per_s"}), fmt::format("lookup {}", v));
      if (o.instructions)
        need(Has(r, "lookup", v, {"instructions_per_op"}), fmt::format("lookup {} instructions", v));
    }
    need(Has(r, "lookup", "", {"fast_path_fraction"}), "lookup fast_path_fraction");
    if (kernel)
      for (const char* v : {"kernel-stat", "kernel-faccessat"})
        need(Has(r, "lookup", v, {"ops_per_s"}), fmt::format("lookup {}", v));
  }
  if (all || which == "import")
    need(Has(r, "import", "", {"entries", "seconds", "bytes_per_inode"}), "import");
  if (all || which == "host") {
    need(Has(r, "host", "", {"ns_per_miss", "syscalls_per_miss", "miss_over_kernel_stat"}),
         "host lazy-fill");
    need(Has(r, "host", "", {"snapshot_ns", "revalidate_ns", "revalidate_over_snapshot"}),
         "host revalidate");
  }
  if (all || which == "threads")
    need(Has(r, "threads", "", {"threads", "ops_per_s"}), "threads");
  if (all || which == "commands") {
    need(Has(r, "commands", "", {"explain_s", "namei_s", "ratio"}), "commands explain-one");
    need(Has(r, "commands", "", {"result_rate", "json_rate", "cli_result_rate", "cli_json_rate"}),
         "commands batch");
    if (kernel && sandbox::ProbeAbi() > 0)
      need(Has(r, "commands", "",
               {"kernel_rate", "ratio", "probehost_rate", "kernel_null_syscall_ns"}),
           "commands batch kernel");
    need(Has(r, "commands", "", {"map_s", "find_s", "map_rss_bytes_per_entry"}), "commands map");
  }
  if (all || which == "trace") {
    need(Has(r, "trace", "", {"plain_s", "trace_s", "overhead"}), "trace");
    if (o.kernel) need(Has(r, "trace", "", {"strace_s", "ratio"}), "trace against strace");
  }
  if ((all || which == "fileserver") && o.kernel && KernelUnavailableReason().empty())
    need(Has(r, "fileserver", "", {"pathwarden_s", "default_permissions_s", "ratio"}),
         "fileserver");
  return missing;
}

}  // namespace

std::vector<std::string> RunSelected(const std::string& which, const Options& o, Reporter& r) {
  r.Table("landlock", {"variant", "depth", "layers", "ns_per_check", "ns_per_level",
                       "kernel_over_engine"});
  r.Table("landlock", {"variant", "depth", "layers", "instructions_per_check",
                       "instructions_per_level"});
  r.Table("lookup", {"variant", "ops_per_s", "over_kernel_stat", "path"});
  r.Table("commands", {"measure", "runs", "explain_s", "namei_s", "ratio", "target", "met",
                       "true_s", "help_s", "explain_rss_kib", "path"});
  r.Table("commands", {"measure", "queries", "allowed", "result_rate", "result_best_rate",
                       "kernel_rate", "ratio", "ratio_median", "target", "met",
                       "kernel_null_syscall_ns", "json_rate", "json_best_rate",
                       "json_ratio", "probehost_rate", "kernel_agree", "cli_result_s",
                       "cli_result_rate", "cli_json_s", "cli_json_rate", "first_pass_s",
                       "result_second_pass_s", "result_pass_s", "later_pass_syscalls",
                       "json_second_pass_s", "json_bytes_per_query", "kernel_second_pass_s"});
  r.Table("commands", {"measure", "entries", "runs", "map_s", "find_s", "ratio", "target", "met",
                       "map_rss_bytes_per_entry", "map_rss_kib", "find_rss_kib", "path"});
  r.Table("trace", {"workload", "runs", "plain_s", "strace_s", "trace_s", "ratio", "target", "met",
                    "overhead", "trace_rss_kib", "path"});
  r.Table("fileserver", {"workload", "as", "entries", "runs", "pathwarden_s",
                         "default_permissions_s", "ratio", "target", "met",
                         "pathwarden_server_cpu_s", "default_permissions_server_cpu_s",
                         "loadavg", "path"});
  r.Table("threads", {"threads", "writer", "ops_per_s", "writes_per_s", "rounds"});
  const bool all = which == "all";
  if (all || which == "landlock") RunLandlock(o, r);
  if (all || which == "lookup") RunLookup(o, r);
  if (all || which == "import") RunImport(o, r);
  if (all || which == "host") RunHost(o, r);
  if (all || which == "threads") RunThreads(o, r);
  if (all || which == "commands") RunCommands(o, r);
  if (all || which == "trace") RunTraceBench(o, r);
  if (all || which == "fileserver") RunFileserverBench(o, r);
  std::string made;
  if (!o.plot_dir.empty()) {
    made = Plot(r, o.plot_dir);
    r.Note(made.empty() ? "no chart made" : "charts: " + made);
  }
  if (!o.smoke) return {};
  std::vector<std::string> missing = Missing(which, o, r);
  if (!o.plot_dir.empty() && (all || which == "landlock") && made.find("landlock.png") == std::string::npos)
    missing.push_back("the Landlock chart");
  if (!o.plot_dir.empty() && (all || which == "commands") &&
      made.find("commands.png") == std::string::npos)
    missing.push_back("the commands chart");
  return missing;
}

}  // namespace pathwarden::bench
