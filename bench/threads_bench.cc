// Benchmark 4: readers in parallel. Read-only lookups and Landlock checks
// from 1 and 2 threads, then the same while another thread renames and
// chmods (the seqlock makes readers retry a raced evaluation; readers
// never block each other).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {
namespace {

// Regular files of the snapshot, every k-th, up to `want`.
std::vector<std::string> SomeFiles(const vfs::World& w, size_t want) {
  std::vector<std::string> files;
  for (auto& [path, d] : PathsBelow(w, w.root().dentry, ""))
    if (S_ISREG(w.inode_at(d).mode)) files.push_back(std::move(path));
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
    std::atomic<bool> stop{false}, go{false};
    std::atomic<int> ready{0};
    std::vector<uint64_t> counts(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        // Warm this thread's memo and caches on the whole list first: the
        // clock starts when every reader is warm.
        for (const StepSpec& st : work) (void)e->Evaluate(st, nullptr);
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
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
    while (ready.load() != threads) std::this_thread::yield();
    const auto t0 = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
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
    return std::pair{total / s, writes / s};
  };
  // One and two readers alternate, and each reports its median round:
  // the machine's noise (other guests, frequency) hits both alike.
  const int rounds = o.smoke ? 1 : o.quick ? 3 : 5;
  double one = 0;
  for (bool writer : {false, true}) {
    std::vector<std::pair<double, double>> got[2];
    for (int k = 0; k < rounds; ++k)
      for (int threads : {2, 1}) got[threads - 1].push_back(run(threads, writer));
    for (int threads : {1, 2}) {
      auto& v = got[threads - 1];
      std::sort(v.begin(), v.end());
      const auto [ops, writes] = v[v.size() / 2];
      nlohmann::json m = {{"bench", "threads"}, {"threads", threads}, {"writer", writer},
                          {"ops_per_s", ops}, {"rounds", rounds}};
      if (writer) m["writes_per_s"] = writes;
      r.Add(std::move(m));
      if (!writer && threads == 1) one = ops;
      if (!writer && threads == 2) r.Add({{"bench", "threads"}, {"two_over_one", ops / one}});
    }
  }
}

}  // namespace pathwarden::bench
