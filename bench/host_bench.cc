// Benchmark 3 and the host backend's costs: the eager fill of /usr
// (Model::Preload(), what it costs in time and memory), the lazy fill
// (a miss read from the host, against the kernel's own stat() of the same
// paths), and revalidation on use (kRevalidate against kSnapshot).

#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {
namespace {

constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `want` paths below `top`, spread evenly over their sorted listing (the
// top itself excluded): the same sample for the same tree.
std::vector<std::string> Sample(const UsrWorld& u, const std::string& top, size_t want) {
  const vfs::World& w = EngineOf(u.model).world();
  std::vector<std::string> all;
  for (auto& [path, d] : PathsBelow(w, u.usr.dentry, top))
    if (path != top) all.push_back(std::move(path));
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  if (all.empty()) return out;
  const size_t n = std::min(want, all.size());
  for (size_t i = 0; i < n; ++i) out.push_back(all[i * all.size() / n]);
  return out;
}

// The kernel's stat() of every path of `paths`, best of `rounds` passes:
// nanoseconds per path.
double KernelStatEach(const std::vector<std::string>& paths, int rounds) {
  double best = -1;
  struct stat st;
  for (int k = 0; k < rounds; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& p : paths) (void)stat(p.c_str(), &st);
    const double ns = Since(t0) * 1e9 / double(paths.size());
    if (best < 0 || ns < best) best = ns;
  }
  return best;
}

}  // namespace

void RunImport(const Options& o, Reporter& r) {
  auto u = UsrModelOrNote(o, r, "import", true);
  if (!u) return;
  const vfs::World& w = EngineOf(u->model).world();
  const vfs::HostBackend& host = *u->model.impl().host;
  // Everything the model holds, over the entries preloaded: the world's
  // arenas and hashes (the few entries Attach() made for the mount points
  // count against the preload's), the ACLs, and the backend's own tables.
  const double entries = double(u->entries);
  const double world = double(w.bytes_inodes() + w.bytes_dentries()) / entries;
  const double acls = double(w.bytes_acls()) / entries;
  const double backend = double(host.bytes()) / entries;
  const HostCounts c = u->model.host_counts();
  r.Add({{"bench", "import"},
         {"entries", u->entries},
         {"seconds", u->seconds},
         {"entries_per_s", entries / u->seconds},
         {"bytes_per_inode", world + acls + backend},
         {"world_bytes", world},
         {"acl_bytes", acls},
         {"backend_bytes", backend},
         {"inodes", w.live_inodes()},
         {"dentries", w.live_dentries()},
         {"hard_links", c.hard_links},
         {"acls_read", host.stats().acls},
         {"syscalls", c.syscalls},
         {"name_bytes", w.bytes_strings()}});
  r.Note(fmt::format("import: {} entries in {:.2f} s, {:.1f} bytes per inode and dentry (the "
                     "world {:.1f}, ACLs {:.1f}, the backend {:.1f}; names excluded), {} ACLs read",
                     u->entries, u->seconds, world + acls + backend, world, acls, backend,
                     host.stats().acls));
}

void RunHost(const Options& o, Reporter& r) {
  // The sample, from a listing of the tree.
  std::vector<std::string> sample;
  {
    auto u = UsrModelOrNote(o, r, "host");
    if (!u) return;
    sample = Sample(*u, o.usr, o.smoke ? 100 : 2000);
  }
  if (sample.empty()) {
    r.Note("host: nothing below " + o.usr);
    return;
  }
  const int rounds = o.smoke ? 1 : 5;
  const double kernel = KernelStatEach(sample, rounds);

  // (a) The lazy fill: the sample stat()ed once in a fresh model, as
  // root; the best of `rounds` fresh models.
  double best_s = -1;
  HostCounts fill;
  for (int k = 0; k < rounds; ++k) {
    auto m = Model::FromHost(BenchHostOptions());
    if (!m) {
      r.Note("host: " + m.error());
      return;
    }
    const Process root = m->Init();
    const HostCounts before = m->host_counts();
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& p : sample) (void)m->Evaluate(root, Stat{.path = p}, kQuiet);
    const double s = Since(t0);
    if (best_s < 0 || s < best_s) {
      best_s = s;
      fill = m->host_counts();
      fill.lookups -= before.lookups;
      fill.syscalls -= before.syscalls;
      fill.listings -= before.listings;
    }
  }
  const double misses = double(std::max<uint64_t>(fill.lookups, 1));
  const double per_miss = best_s * 1e9 / misses;
  const double per_path = best_s * 1e9 / double(sample.size());
  r.Add({{"bench", "host"},
         {"measure", "lazy-fill"},
         {"paths", sample.size()},
         {"misses", fill.lookups},
         {"listings", fill.listings},
         {"syscalls_per_miss", double(fill.syscalls) / misses},
         {"ns_per_miss", per_miss},
         {"ns_per_path", per_path},
         {"kernel_stat_ns", kernel},
         {"miss_over_kernel_stat", per_miss / kernel},
         {"path_over_kernel_stat", per_path / kernel}});

  // (b) Revalidation: the same sample, warm, in a kSnapshot and a
  // kRevalidate model.
  const double seconds = o.smoke ? 0.002 : o.quick ? 0.1 : 0.3;
  double ns[2] = {0, 0};
  double revalidated = 0, syscalls = 0;
  for (int mode = 0; mode < 2; ++mode) {
    HostOptions ho = BenchHostOptions();
    ho.consistency = mode ? HostOptions::Consistency::kRevalidate
                          : HostOptions::Consistency::kSnapshot;
    auto m = Model::FromHost(ho);
    if (!m) {
      r.Note("host: " + m.error());
      return;
    }
    const Process root = m->Init();
    for (const std::string& p : sample) (void)m->Evaluate(root, Stat{.path = p}, kQuiet);
    const HostCounts before = m->host_counts();
    uint64_t evaluations = 0;
    ns[mode] = NsPerOp(
                   [&] {
                     for (const std::string& p : sample)
                       (void)m->Evaluate(root, Stat{.path = p}, kQuiet);
                     evaluations += sample.size();
                   },
                   seconds, rounds) /
               double(sample.size());
    if (mode) {
      const HostCounts after = m->host_counts();
      revalidated = double(after.revalidated - before.revalidated) / double(evaluations);
      syscalls = double(after.syscalls - before.syscalls) / double(evaluations);
    }
  }
  r.Add({{"bench", "host"},
         {"measure", "revalidate"},
         {"paths", sample.size()},
         {"snapshot_ns", ns[0]},
         {"revalidate_ns", ns[1]},
         {"revalidate_over_snapshot", ns[1] / ns[0]},
         {"revalidated_per_evaluate", revalidated},
         {"syscalls_per_evaluate", syscalls},
         {"kernel_stat_ns", kernel},
         {"revalidate_over_kernel_stat", ns[1] / kernel}});
  r.Note(fmt::format(
      "host: a miss {:.0f} ns ({:.2f} syscalls; {:.1f}x the kernel's stat() of {:.0f} ns), "
      "a cold path {:.0f} ns ({:.1f}x); a warm evaluation {:.0f} ns in a snapshot, {:.0f} ns "
      "revalidated ({:.1f}x; {:.1f} entries and {:.1f} syscalls each)",
      per_miss, double(fill.syscalls) / misses, per_miss / kernel, kernel, per_path,
      per_path / kernel, ns[0], ns[1], ns[1] / ns[0], revalidated, syscalls));
}

}  // namespace pathwarden::bench
