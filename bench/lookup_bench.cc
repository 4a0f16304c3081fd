// Benchmark 2: "permission check avoidance during lookup" -- resolving and
// stat()ing /usr/include/linux/fs.h in the host model with /usr preloaded,
// the fast search check on and off, against the kernel's stat() and
// faccessat() of the same path; and the fraction of all components below
// /usr that take the fast path. Benchmark 3 (import) is that preload.

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {
namespace {

// Every path the model holds below `top` (directories included).
std::vector<std::string> AllPaths(const vfs::World& w, vfs::PathPos top, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& [path, d] : PathsBelow(w, top.dentry, prefix)) out.push_back(std::move(path));
  return out;
}

}  // namespace

void RunLookup(const Options& o, Reporter& r) {
  auto u = UsrModelOrNote(o, r, "lookup");
  if (!u) return;
  Engine& e = EngineOf(u->model);
  constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;
  std::string target = "/usr/include/linux/fs.h";
  struct stat st;
  if (o.usr != "/usr" || stat(target.c_str(), &st) != 0) {
    // Another tree: the first path of it, longer than half of fs.h's, that
    // the user may stat.
    for (const std::string& p : AllPaths(e.world(), {u->usr.mount, u->usr.dentry}, o.usr)) {
      if (p.size() > target.size() / 2 &&
          u->model.Evaluate(u->user, Stat{.path = p}, kQuiet).err() == 0) {
        target = p;
        break;
      }
    }
  }
  const Request step = Stat{.path = target};
  const double seconds = o.smoke ? 0.002 : o.quick ? 0.1 : 0.5;
  double kernel_stat = -1;
  if (o.kernel) {
    // The model's paths are the host's.
    const std::string& host = target;
    const int iterations = o.smoke ? 1000 : o.quick ? 100000 : 1000000;
    std::string why;
    kernel_stat = KernelStatNs(host, iterations, false, &why);
    if (kernel_stat > 0) {
      r.Add({{"bench", "lookup"}, {"variant", "kernel-stat"}, {"path", host},
             {"ops_per_s", 1e9 / kernel_stat}});
      const double facc = KernelStatNs(host, iterations, true, &why);
      if (facc > 0)
        r.Add({{"bench", "lookup"}, {"variant", "kernel-faccessat"}, {"path", host},
               {"ops_per_s", 1e9 / facc}});
    } else {
      r.Note("kernel: " + why);
    }
  }
  double fast_ns = 0, slow_ns = 0;
  for (bool fast : {true, false}) {
    e.mutable_options().fast_search = fast;
    if (u->model.Evaluate(u->user, step, kQuiet).err() != 0)
      r.Note(fmt::format("stat {} fails in the engine", target));
    const double ns = NsPerOp([&] { (void)u->model.Evaluate(u->user, step, kQuiet); }, seconds, 5);
    (fast ? fast_ns : slow_ns) = ns;
    nlohmann::json m = {{"bench", "lookup"}, {"variant", fast ? "engine-fast" : "engine-slow"},
                        {"path", target}, {"ops_per_s", 1e9 / ns}};
    if (kernel_stat > 0) m["over_kernel_stat"] = kernel_stat / ns;
    r.Add(std::move(m));
  }
  r.Add({{"bench", "lookup"}, {"fast_over_slow", slow_ns / fast_ns}});
  if (o.instructions) {
    double ins[2] = {-1, -1};
    for (bool fast : {true, false}) {
      std::string no_count;
      const int n = 1000;
      ins[fast] = InstructionsPerCheck({"lookup", fast ? "fast" : "slow", o.usr, target,
                                        std::to_string(n)},
                                       n, &no_count);
      if (ins[fast] < 0) {
        r.Note("instructions: " + no_count);
        break;
      }
      r.Add({{"bench", "lookup"}, {"variant", fast ? "engine-fast" : "engine-slow"},
             {"path", target}, {"instructions_per_op", ins[fast]}});
    }
    if (ins[0] > 0 && ins[1] > 0)
      r.Add({{"bench", "lookup"}, {"instructions_slow_over_fast", ins[0] / ins[1]}});
  }
  // The fast path over every path below the preloaded tree, as a user
  // walks it.
  e.mutable_options().fast_search = true;
  std::vector<std::string> paths = AllPaths(e.world(), {u->usr.mount, u->usr.dentry}, o.usr);
  if (o.smoke && paths.size() > 2000) paths.resize(2000);
  EngineStats total;
  uint64_t ok = 0;
  for (const std::string& p : paths) {
    const Request one = Stat{.path = p};
    if (e.Evaluate(u->user.index, ArgsOf(one), nullptr, &total) == 0) ++ok;
  }
  r.Add({{"bench", "lookup"},
         {"fast_path_fraction", total.components ? double(total.fast_components) / total.components : 0},
         {"paths", paths.size()},
         {"resolved", ok},
         {"components", total.components}});
}

}  // namespace pathwarden::bench
