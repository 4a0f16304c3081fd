// Readers evaluate while one writer renames and chmods, or creates and
// removes files and directories: every answer is one a consistent state
// gives, and the memoized Landlock evaluation never serves a stale walk.
// (./test runs these in the tsan preset, which reports any data race.)

#include <atomic>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/landlock/memo.h"

namespace pathwarden {
namespace {

constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;

// The world of both concurrency tests: /a/f (0644), /x (0755) with a
// file, /granted with a file, and u (1000:1000) confined to reading
// files beneath /granted.
struct World {
  World() : m(NewModel(EngineOptions{})) {
    const Node root = m.Root();
    (void)*m.Create(*m.Mkdir(root, "a"), "f", {}, {.mode = 0644});
    (void)*m.Create(*m.Mkdir(root, "x", {.mode = 0755}), "f", {});
    (void)*m.Create(*m.Mkdir(root, "granted"), "f", {});
    u = m.Spawn("u", Cred::ForUser(1000, 1000));
    LandlockRuleset rs{.handled_access_fs = landlock::kFsReadFile};
    rs.AllowPath("/granted", landlock::kFsReadFile);
    restricted = m.Apply(u, Restrict{.ruleset = rs}).err();
  }

  Model m;
  Process u;
  int restricted = -1;
};

// Two reader threads, each calling `read()` (it asks `per_read`
// questions, and returns false for an answer no consistent state gives)
// until Stop(). They count themselves before their first read, and
// Start() waits for both, so that the writes overlap their reads however
// a busy machine schedules the threads (a writer done in 10 ms could
// otherwise finish before a reader ever ran).
class Readers {
 public:
  template <class Read>
  Readers(uint64_t per_read, Read read) {
    for (std::thread& t : threads_)
      t = std::thread([this, per_read, read] {
        running_.fetch_add(1);
        while (!stop_.load(std::memory_order_relaxed)) {
          if (!read()) bad_.fetch_add(1);
          reads_.fetch_add(per_read, std::memory_order_relaxed);
        }
      });
    while (running_.load() < 2) std::this_thread::yield();
    before_ = reads_.load();
  }
  ~Readers() { Stop(); }

  // Whether the writer does round `i`: its `rounds`, and more (up to a
  // thousand times as many) until a read has overlapped the writes.
  bool MoreRounds(int i, int rounds) const {
    return i < rounds || (reads_.load() == before_ && i < 1000 * rounds);
  }
  // The reads made since the readers started (while the writer wrote,
  // when it calls this as soon as it is done); then joins them, before
  // anything is reported.
  uint64_t Stop() {
    if (!stop_.load()) {
      during_ = reads_.load() - before_;
      stop_.store(true);
      for (std::thread& t : threads_) t.join();
    }
    return during_;
  }
  uint64_t bad() const { return bad_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> running_{0};
  std::atomic<uint64_t> bad_{0}, reads_{0};
  uint64_t before_ = 0, during_ = 0;
  std::thread threads_[2];
};

TEST(Concurrency, ReadersSeeOnlyConsistentStates) {
  World w;
  ASSERT_EQ(w.restricted, 0);
  Model& e = w.m;
  const Process u = w.u;
  const Process root = e.Init();

  const Request stat_a = Stat{.path = "/a/f"};
  const Request stat_x = Stat{.path = "/x/f"};
  const Request open_granted = Open{.path = "/granted/f"};
  const Request open_a = Open{.path = "/a/f"};
  Readers readers(4, [&] {
    const int a = e.Evaluate(u, stat_a, kQuiet).err();
    const int x = e.Evaluate(u, stat_x, kQuiet).err();
    const int g = e.Evaluate(u, open_granted, kQuiet).err();
    const int o = e.Evaluate(u, open_a, kQuiet).err();
    // /a moves between /a and /b: ok or ENOENT. /x flips 0755/0700:
    // ok or EACCES. /granted is never touched. /a/f is outside the
    // rule: EACCES, or ENOENT while /a is away.
    return !((a != 0 && a != ENOENT) || (x != 0 && x != EACCES) || g != 0 ||
             (o != EACCES && o != ENOENT));
  });
  const Request to_b = Rename{.oldpath = "/a", .newpath = "/b"};
  const Request to_a = Rename{.oldpath = "/b", .newpath = "/a"};
  const Request close_x = Chmod{.path = "/x", .mode = 0700};
  const Request open_x = Chmod{.path = "/x", .mode = 0755};
  int write_failures = 0;
  for (int i = 0; readers.MoreRounds(i, 20000) && write_failures == 0; ++i) {
    write_failures += e.Apply(root, (i & 1) ? to_a : to_b, kQuiet).err() != 0;
    write_failures += e.Apply(root, (i & 1) ? open_x : close_x, kQuiet).err() != 0;
  }
  const uint64_t during = readers.Stop();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(readers.bad(), 0u);
  EXPECT_GT(during, 0u) << "no read overlapped the writes";
}

// The writer allocates and frees dentries and inodes (the arenas grow
// while readers walk, and freed slots are reused) while readers open files
// under a Landlock domain, inside and outside its rule, through the memo.
TEST(Concurrency, CreationsAndRemovalsUnderLandlock) {
  World w;
  ASSERT_EQ(w.restricted, 0);
  Model& e = w.m;
  const Process u = w.u;
  const Process root = e.Init();

  // A rename between two directories that never change bounds its walk
  // up (lock_rename()'s trap) by the dentry arena's size on every try.
  const Request move_out = Rename{.oldpath = "/granted/f", .newpath = "/x/moved"};
  const int move_out_err = e.Evaluate(u, move_out, kQuiet).err();
  EXPECT_NE(move_out_err, 0);

  const Request open_granted = Open{.path = "/granted/f"};
  const Request open_new = Open{.path = "/granted/new"};
  const Request open_deep = Open{.path = "/granted/d/e/g"};
  const Request open_outside = Open{.path = "/x/d/g"};
  auto read = [&] {
    const int g = e.Evaluate(u, open_granted, kQuiet).err();
    const int n = e.Evaluate(u, open_new, kQuiet).err();
    const int d = e.Evaluate(u, open_deep, kQuiet).err();
    const int o = e.Evaluate(u, open_outside, kQuiet).err();
    const int m = e.Evaluate(u, move_out, kQuiet).err();
    // /granted/f is never touched; what comes and goes under /granted
    // opens or is missing; under /x it is refused, or missing.
    return !(g != 0 || (n != 0 && n != ENOENT) || (d != 0 && d != ENOENT) ||
             (o != EACCES && o != ENOENT) || m != move_out_err);
  };
  auto mknod = [](std::string path) -> Request {
    return Mknod{.path = std::move(path), .mode = 0644};
  };
  auto mkdir = [](std::string path) -> Request {
    return Mkdir{.path = std::move(path), .mode = 0755};
  };
  const Request writes[] = {
      mknod("/granted/new"),
      mkdir("/granted/d"),
      mkdir("/granted/d/e"),
      mknod("/granted/d/e/g"),
      mkdir("/x/d"),
      mknod("/x/d/g"),
      Unlink{.path = "/granted/new"},
      Unlink{.path = "/granted/d/e/g"},
      Rmdir{.path = "/granted/d/e"},
      Rmdir{.path = "/granted/d"},
      Unlink{.path = "/x/d/g"},
      Rmdir{.path = "/x/d"},
  };
  // Freed slots are reused (last freed, first reused), so each round also
  // keeps names, in fresh slots: the arenas grow while the readers walk.
  // A rename before each makes the readers' memo miss, so they load the
  // arenas' sizes (the bound of the walk up) while the writer grows them.
  const Request there = Rename{.oldpath = "/x/r", .newpath = "/x/s"};
  const Request back = Rename{.oldpath = "/x/s", .newpath = "/x/r"};
  int write_failures = e.Apply(root, mkdir("/x/r"), kQuiet).err() != 0;
  Readers readers(5, read);
  for (int i = 0; readers.MoreRounds(i, 2000) && write_failures == 0; ++i) {
    for (size_t k = 0; k < 6; ++k) write_failures += e.Apply(root, writes[k], kQuiet).err() != 0;
    for (int j = 0; j < 4; ++j) {
      write_failures += e.Apply(root, j % 2 ? back : there, kQuiet).err() != 0;
      write_failures += e.Apply(root, mknod(fmt::format("/x/keep{}-{}", i, j)), kQuiet).err() != 0;
    }
    for (size_t k = 6; k < std::size(writes); ++k)
      write_failures += e.Apply(root, writes[k], kQuiet).err() != 0;
  }
  const uint64_t during = readers.Stop();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(readers.bad(), 0u);
  EXPECT_GT(during, 0u) << "no read overlapped the writes";
}

// open(path) as p, and close() of the fd it gives.
int OpenAndClose(Model& m, Process p, std::string path) {
  const Decision d = m.Apply(p, Open{.path = std::move(path)}, kQuiet);
  if (d.fd().num >= 0) (void)m.Apply(p, Close{d.fd()}, kQuiet);
  return d.err();
}

TEST(Memo, FollowsRenamesAcrossRuleBoundaries) {
  // /granted/sub/f and /other; u, as root but confined to reading files
  // beneath /granted.
  EngineOptions opt;
  opt.memo = true;
  Model e = NewModel(opt);
  (void)*e.Create(*e.Mkdir(*e.Mkdir(e.Root(), "granted"), "sub"), "f", {});
  (void)*e.Mkdir(e.Root(), "other");
  const Process u = e.Spawn("u", Cred::ForUser(0, 0));
  LandlockRuleset rs{.handled_access_fs = landlock::kFsReadFile};
  rs.AllowPath("/granted", landlock::kFsReadFile);
  ASSERT_EQ(e.Apply(u, Restrict{.ruleset = rs}).err(), 0);
  const Process root = e.Init();

  landlock::MemoClearThread();  // the memo is this thread's: not other tests'
  EXPECT_EQ(OpenAndClose(e, u, "/granted/sub/f"), 0);
  EXPECT_GT(landlock::MemoEntries(), 0u);
  // Move the subtree out from under the rule: the memo must not answer
  // from the old walk.
  ASSERT_EQ(e.Apply(root, Rename{.oldpath = "/granted/sub", .newpath = "/other/sub"}, kQuiet).err(),
            0);
  EXPECT_EQ(OpenAndClose(e, u, "/other/sub/f"), EACCES);
  ASSERT_EQ(e.Apply(root, Rename{.oldpath = "/other/sub", .newpath = "/granted/sub"}, kQuiet).err(),
            0);
  EXPECT_EQ(OpenAndClose(e, u, "/granted/sub/f"), 0);
}

}  // namespace
}  // namespace pathwarden
