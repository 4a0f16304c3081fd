// Benchmark 4: readers in parallel. Read-only lookups and Landlock checks
// from 1 and 2 threads, then the same while another thread renames and
// chmods (the seqlock makes readers retry a raced evaluation; readers
// never block each other).

#include <atomic>
#include <chrono>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {
namespace {

// Regular files of the snapshot, every k-th, up to `want`.
std::vector<std::string> SomeFiles(const vfs::World& w, size_t want) {
  std::unordered_map<vfs::DentryId, std::vector<vfs::DentryId>> children;
  for (vfs::DentryId d = 1; d < w.dentry_end(); ++d) {
    const vfs::Dentry& de = w.dentry(d);
    if ((de.flags & vfs::kDentryHashed) && de.parent != d) children[de.parent].push_back(d);
  }
  std::vector<std::string> files;
  std::vector<std::pair<vfs::DentryId, std::string>> stack{{w.root().dentry, ""}};
  while (!stack.empty()) {
    auto [d, p] = std::move(stack.back());
    stack.pop_back();
    if (S_ISREG(w.inode_at(d).mode)) files.push_back(p);
    auto it = children.find(d);
    if (it == children.end()) continue;
    for (vfs::DentryId c : it->second)
      stack.push_back({c, p + "/" + std::string(w.str(w.dentry(c).name))});
  }
  std::vector<std::string> out;
  const size_t step = std::max<size_t>(1, files.size() / want);
  for (size_t i = 0; i < files.size() && out.size() < want; i += step) out.push_back(files[i]);
  return out;
}

}  // namespace

void RunThreads(const Options& o, Reporter& r) {
  vfs::ImportStats stats;
  double seconds = 0;
  std::string why;
  auto e = UsrEngine(o.usr, EngineOptions{}, &stats, &seconds, &why);
  if (!e) {
    r.Note("threads: " + why);
    return;
  }
  // A corner for the writer, away from what readers resolve.
  for (const char* d : {"/scratch", "/scratch/a"}) {
    StepSpec mk;
    mk.op = Op::kMkdir;
    mk.path = d;
    mk.mode = 0755;
    e->Step(mk, nullptr);
  }
  const std::vector<std::string> files = SomeFiles(e->world(), o.smoke ? 64 : 1000);
  if (files.empty()) {
    r.Note("threads: no files in the snapshot");
    return;
  }
  std::vector<StepSpec> work;
  for (const std::string& f : files) {
    StepSpec stat;
    stat.as = "user";
    stat.op = Op::kStat;
    stat.path = f;
    work.push_back(stat);
    StepSpec open;
    open.as = "sb";
    open.op = Op::kOpen;
    open.path = f;
    work.push_back(open);
  }
  const double duration = o.smoke ? 0.02 : o.quick ? 0.3 : 1.0;
  auto run = [&](int threads, bool writer) {
    std::atomic<bool> stop{false};
    std::vector<uint64_t> counts(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        uint64_t n = 0;
        size_t i = t * 7;
        while (!stop.load(std::memory_order_relaxed)) {
          for (int k = 0; k < 64; ++k) {
            (void)e->Evaluate(work[i % work.size()], nullptr);
            ++i;
          }
          n += 64;
        }
        counts[t] = n;
      });
    }
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t writes = 0;
    if (writer) {
      StepSpec mv;
      mv.op = Op::kRename;
      StepSpec ch;
      ch.op = Op::kChmod;
      ch.path = "/scratch";
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < duration) {
        mv.path = (writes & 1) ? "/scratch/b" : "/scratch/a";
        mv.path2 = (writes & 1) ? "/scratch/a" : "/scratch/b";
        e->Step(mv, nullptr);
        ch.mode = (writes & 1) ? 0755 : 0700;
        e->Step(ch, nullptr);
        writes += 2;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(duration));
    }
    stop = true;
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    nlohmann::json m = {{"bench", "threads"}, {"threads", threads}, {"writer", writer},
                        {"ops_per_s", total / s}};
    if (writer) m["writes_per_s"] = writes / s;
    r.Add(std::move(m));
    return total / s;
  };
  const double one = run(1, false);
  const double two = run(2, false);
  r.Add({{"bench", "threads"}, {"two_over_one", two / one}});
  run(1, true);
  run(2, true);
}

}  // namespace pathwarden::bench
