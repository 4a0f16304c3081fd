// Issue 12: `pathwarden trace` on file-heavy workloads against
// `strace -f --seccomp-bpf -e trace=%file,%network -o /dev/null` (which
// stops for the same kind of calls and decodes them; trace also decides
// each under two layers, revalidating the host on use), and against the
// untraced run. Whole processes, best of several wall times each, the
// commands taking turns. Target: trace within 1.0x strace.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/process.h"

namespace pathwarden::bench {
namespace {

// The two layers of the issue: read-only /usr and /etc with a read-write
// work directory, then read and execute everywhere.
void WritePolicies(const std::string& dir) {
  std::ofstream(dir + "/layer1.toml") << fmt::format(R"(abi = 7
[[ruleset]]
handled_access_fs = ["abi.all"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = ["/usr", "/etc"]
[[path_beneath]]
allowed_access = ["abi.read_write"]
parent = ["{}"]
)",
                                                     dir);
  std::ofstream(dir + "/layer2.toml") << R"(abi = 7
[[ruleset]]
handled_access_fs = ["abi.all"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = ["/"]
)";
}

bool Have(const char* program) {
  for (const char* dir : {"/usr/bin/", "/bin/"})
    if (access((std::string(dir) + program).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

void RunTraceBench(const Options& o, Reporter& r) {
  const std::string self = SelfExe();
  char tmpl[] = "/tmp/pathwarden-bench-trace-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    r.Note("trace: cannot make a work directory");
    return;
  }
  const std::string dir = tmpl;
  WritePolicies(dir);
  // With --smoke, one small directory.
  std::string top = o.usr + "/include";
  struct stat st;
  if (stat(top.c_str(), &st) != 0) top = o.usr;
  if (o.smoke && stat((top + "/linux").c_str(), &st) == 0) top += "/linux";
  const std::vector<std::pair<std::string, std::vector<std::string>>> workloads = {
      {"tar", {"tar", "cf", "/dev/null", top}},
      {"find", {"find", o.smoke ? top : o.usr, "-name", "*.h"}},
  };
  const int runs = o.smoke ? 1 : 5;
  const bool strace = Have("strace");
  if (!strace) r.Note("trace: no strace on this machine (scripts/setup installs it)");
  for (const auto& [name, argv] : workloads) {
    std::vector<std::vector<std::string>> cmds = {argv};
    std::vector<std::string> traced = {self, "trace", "--policy", dir + "/layer1.toml",
                                       "--policy", dir + "/layer2.toml", "-o", "/dev/null", "--"};
    traced.insert(traced.end(), argv.begin(), argv.end());
    cmds.push_back(traced);
    if (strace) {
      std::vector<std::string> s = {"strace", "-f", "--seccomp-bpf", "-e", "trace=%file,%network",
                                    "-o", "/dev/null"};
      s.insert(s.end(), argv.begin(), argv.end());
      cmds.push_back(s);
    }
    const auto best = BestOfEach(cmds, runs);
    if (!best[0] || !best[1] || (strace && !best[2])) {
      r.Note(fmt::format("trace {}: a run failed", name));
      continue;
    }
    nlohmann::json m = {{"bench", "trace"},
                        {"workload", name},
                        {"runs", runs},
                        {"plain_s", best[0]->seconds},
                        {"trace_s", best[1]->seconds},
                        {"overhead", best[1]->seconds / best[0]->seconds},
                        {"trace_rss_kib", best[1]->max_rss_kib},
                        {"path", argv[1 + (name == "tar" ? 2 : 0)]}};
    if (strace) {
      m["strace_s"] = best[2]->seconds;
      m["ratio"] = best[1]->seconds / best[2]->seconds;
      m["target"] = 1.0;
      m["met"] = best[1]->seconds <= best[2]->seconds;
    }
    r.Add(std::move(m));
  }
  std::remove((dir + "/layer1.toml").c_str());
  std::remove((dir + "/layer2.toml").c_str());
  rmdir(dir.c_str());
}

}  // namespace pathwarden::bench
