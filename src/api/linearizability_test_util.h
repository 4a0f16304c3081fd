// Test support: checking that readers' answers were linearizable, shared
// by src/api/linearizable_test.cc (the engine's writes) and
// tests/host/host_backend_test.cc (the live host backend's writes).
//
// A writer counts its operations: `started` = k before operation k,
// `done` = k after it. A reader that read done = a before its call and
// started = b after it saw one of the states a..b (state k: after k
// operations). Replay() moves a single-threaded replay through the states
// and asks each recorded question at each state of its interval; one must
// give the same errno and verdict.

#ifndef PATHWARDEN_SRC_API_LINEARIZABILITY_TEST_UTIL_H_
#define PATHWARDEN_SRC_API_LINEARIZABILITY_TEST_UTIL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pathwarden/decision.h"

namespace pathwarden::linearizability {

// Whether this is a TSan build (which runs fewer operations).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif
#else
inline constexpr bool kUnderTsan = false;
#endif

// One question a reader asked, and what it got.
struct Asked {
  uint32_t question, proc;
  uint32_t from, to;  // the states the call may have seen
  int err;
  Verdict verdict;
};

struct Outcome {
  size_t asked = 0;
  size_t checked = 0;     // matched by a state of their interval, or excused
  size_t excused = 0;     // of which by `excuse`
  size_t mismatches = 0;  // no state agreed
  size_t unmatched = 0;   // still open after the last state (must be 0)
  size_t during = 0;      // asked while the writer was writing
  uint64_t answered = 0;  // replayed questions
  std::vector<std::string> failures;  // the first ten mismatches
};

// The readers of a live run.
inline constexpr int kReaders = 3;

// LiveRun()
//
// The live run: `kReaders` threads each ask random questions (`ask(proc,
// question)` of `procs` processes and `questions` questions; reader r's
// generator seeded `seed + r`), recording each answer with the states it
// may have seen, while this thread applies `write(i)` for i = 0..ops-1
// once every reader has asked once, yielding between writes (two cores,
// three readers). With `pace`, a reader waits while it has asked more
// than `pace` questions per write done, so that its questions spread over
// the writer's run. Each reader asks at most `max_asked`. Returns the
// answers, a vector a reader.
template <class Ask, class Write>
std::vector<std::vector<Asked>> LiveRun(uint32_t seed, size_t max_asked, size_t pace,
                                        uint32_t procs, uint32_t questions, size_t ops, Ask ask,
                                        Write write) {
  std::atomic<uint32_t> started{0}, done{0};
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};  // readers that asked once
  std::vector<std::vector<Asked>> asked(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(seed + static_cast<uint32_t>(r));
      std::vector<Asked>& out = asked[static_cast<size_t>(r)];
      out.reserve(max_asked);
      while (!stop.load() && out.size() < max_asked) {
        if (pace != 0 && out.size() > pace * (size_t{done.load()} + 1)) {
          std::this_thread::yield();
          continue;
        }
        const uint32_t qi = static_cast<uint32_t>(rng() % questions);
        const uint32_t pi = static_cast<uint32_t>(rng() % procs);
        const uint32_t from = done.load();
        const Decision d = ask(pi, qi);
        const uint32_t to = started.load();
        out.push_back({qi, pi, from, to, d.err(), d.verdict()});
        if (out.size() == 1) ready.fetch_add(1);
      }
    });
  }
  while (ready.load() < kReaders) std::this_thread::yield();
  for (size_t i = 0; i < ops; ++i) {
    started.store(static_cast<uint32_t>(i + 1));
    write(i);
    done.store(static_cast<uint32_t>(i + 1));
    std::this_thread::yield();
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  return asked;
}

// Replay()
//
// `advance(k)` moves the replay from state k-1 to state k (k = 1..ops)
// and returns false to stop (it reports why); `ask(a)` answers `a` in the
// replay's current state; `excuse(a)` says whether an answer no state
// gives is acceptable all the same (counted in `excused`); `describe(a)`
// names the question in a failure.
template <class Advance, class Ask, class Excuse, class Describe>
Outcome Replay(const std::vector<std::vector<Asked>>& asked, uint32_t ops, Advance advance,
               Ask ask, Excuse excuse, Describe describe) {
  Outcome out;
  std::vector<const Asked*> pending;
  for (const auto& v : asked)
    for (const Asked& a : v) pending.push_back(&a);
  std::sort(pending.begin(), pending.end(),
            [](const Asked* x, const Asked* y) { return x->from < y->from; });
  out.asked = pending.size();
  for (const Asked* a : pending) out.during += a->from > 0 && a->from < ops;
  std::vector<const Asked*> open;  // from <= state, not yet matched
  size_t next = 0;
  for (uint32_t state = 0; state <= ops; ++state) {
    if (state > 0 && !advance(state)) return out;
    while (next < pending.size() && pending[next]->from <= state) open.push_back(pending[next++]);
    std::vector<const Asked*> still;
    for (const Asked* a : open) {
      const Decision d = ask(*a);
      ++out.answered;
      if (d.err() == a->err && d.verdict() == a->verdict) {
        ++out.checked;
        continue;
      }
      if (a->to > state) {
        still.push_back(a);
        continue;
      }
      if (excuse(*a)) {
        ++out.checked;
        ++out.excused;
        continue;
      }
      ++out.mismatches;
      if (out.failures.size() < 10)
        out.failures.push_back(describe(*a) + ": no state of its interval agrees");
    }
    open.swap(still);
  }
  out.unmatched = open.size();
  return out;
}

}  // namespace pathwarden::linearizability

#endif  // PATHWARDEN_SRC_API_LINEARIZABILITY_TEST_UTIL_H_
