// Benchmark 4: readers in parallel. Read-only lookups and Landlock checks
// from 1 and 2 threads, then the same while another thread renames and
// chmods in the model (the seqlock makes readers retry a raced evaluation; readers
// never block each other).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>


#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {
namespace {

// Regular files below `top`, every k-th, up to `want`.
std::vector<std::string> SomeFiles(const vfs::World& w, const Node& top, const std::string& prefix,
                                   size_t want) {
  std::vector<std::string> files;
  for (auto& [path, d] : PathsBelow(w, top.dentry, prefix))
    if (S_ISREG(w.inode_at(d).mode)) files.push_back(std::move(path));
  std::vector<std::string> out;
  const size_t step = std::max<size_t>(1, files.size() / want);
  for (size_t i = 0; i < files.size() && out.size() < want; i += step) out.push_back(files[i]);
  return out;
}

}  // namespace

void RunThreads(const Options& o, Reporter& r) {
  auto u = UsrModelOrNote(o, r, "threads");
  if (!u) return;
  Model& m = u->model;
  const Process root = m.Init();
  constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;
  // A corner for the writer, away from what readers resolve.
  for (const char* d : {"/scratch", "/scratch/a"}) {
    (void)m.Apply(root, Mkdir{.path = d, .mode = 0755}, kQuiet);
  }
  const std::vector<std::string> files = SomeFiles(EngineOf(m).world(), u->usr, o.usr, o.smoke ? 64 : 1000);
  if (files.empty()) {
    r.Note("threads: no files below " + o.usr);
    return;
  }
  // Who asks what: stats as the user, opens in the sandbox.
  std::vector<std::pair<Process, Request>> work;
  for (const std::string& f : files) {
    work.emplace_back(u->user, Stat{.path = f});
    work.emplace_back(u->sb, Open{.path = f});
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
        for (const auto& [p, req] : work) (void)m.Evaluate(p, req, kQuiet);
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        uint64_t n = 0;
        size_t i = t * 7;
        while (!stop.load(std::memory_order_relaxed)) {
          for (int k = 0; k < 64; ++k) {
            const auto& [p, req] = work[i % work.size()];
            (void)m.Evaluate(p, req, kQuiet);
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

      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < duration) {
        const bool odd = writes & 1;
        (void)m.Apply(root,
                      Rename{.oldpath = odd ? "/scratch/b" : "/scratch/a",
                             .newpath = odd ? "/scratch/a" : "/scratch/b"},
                      kQuiet);
        (void)m.Apply(root, Chmod{.path = "/scratch", .mode = odd ? 0755u : 0700u}, kQuiet);
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
      nlohmann::json row = {{"bench", "threads"}, {"threads", threads}, {"writer", writer},
                            {"ops_per_s", ops}, {"rounds", rounds}};
      if (writer) row["writes_per_s"] = writes;
      r.Add(std::move(row));
      if (!writer && threads == 1) one = ops;
      if (!writer && threads == 2) r.Add({{"bench", "threads"}, {"two_over_one", ops / one}});
    }
  }
}

}  // namespace pathwarden::bench
