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

// Reader threads count themselves in `running` before their first read;
// the writer waits for all of them, so that its writes overlap their
// reads however a busy machine schedules the threads (a writer done in
// 10 ms could otherwise finish before a reader ever ran).
void WaitForReaders(const std::atomic<int>& running, int n) {
  while (running.load() < n) std::this_thread::yield();
}

// Whether the writer does round `i`: its `rounds`, and more (up to a
// thousand times as many) until `reads` has grown past `before`, a read
// overlapping the writes.
bool MoreRounds(int i, int rounds, const std::atomic<uint64_t>& reads, uint64_t before) {
  return i < rounds || (reads.load() == before && i < 1000 * rounds);
}

TEST(Concurrency, ReadersSeeOnlyConsistentStates) {
  World w;
  ASSERT_EQ(w.restricted, 0);
  Model& e = w.m;
  const Process u = w.u;
  const Process root = e.Init();

  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&] {
    running.fetch_add(1);
    const Request stat_a = Stat{.path = "/a/f"};
    const Request stat_x = Stat{.path = "/x/f"};
    const Request open_granted = Open{.path = "/granted/f"};
    const Request open_a = Open{.path = "/a/f"};
    while (!stop.load(std::memory_order_relaxed)) {
      const int a = e.Evaluate(u, stat_a, kQuiet).err();
      const int x = e.Evaluate(u, stat_x, kQuiet).err();
      const int g = e.Evaluate(u, open_granted, kQuiet).err();
      const int o = e.Evaluate(u, open_a, kQuiet).err();
      // /a moves between /a and /b: ok or ENOENT. /x flips 0755/0700:
      // ok or EACCES. /granted is never touched. /a/f is outside the
      // rule: EACCES, or ENOENT while /a is away.
      if ((a != 0 && a != ENOENT) || (x != 0 && x != EACCES) || g != 0 ||
          (o != EACCES && o != ENOENT))
        bad.fetch_add(1);
      reads.fetch_add(4, std::memory_order_relaxed);
    }
  };
  std::thread r1(reader), r2(reader);
  const Request to_b = Rename{.oldpath = "/a", .newpath = "/b"};
  const Request to_a = Rename{.oldpath = "/b", .newpath = "/a"};
  const Request close_x = Chmod{.path = "/x", .mode = 0700};
  const Request open_x = Chmod{.path = "/x", .mode = 0755};
  int write_failures = 0;
  WaitForReaders(running, 2);
  const uint64_t before = reads.load();
  for (int i = 0; MoreRounds(i, 20000, reads, before) && write_failures == 0; ++i) {
    write_failures += e.Apply(root, (i & 1) ? to_a : to_b, kQuiet).err() != 0;
    write_failures += e.Apply(root, (i & 1) ? open_x : close_x, kQuiet).err() != 0;
  }
  const uint64_t during = reads.load() - before;
  // The readers are joined before anything is reported.
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(bad.load(), 0u);
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

  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&] {
    running.fetch_add(1);
    const Request open_granted = Open{.path = "/granted/f"};
    const Request open_new = Open{.path = "/granted/new"};
    const Request open_deep = Open{.path = "/granted/d/e/g"};
    const Request open_outside = Open{.path = "/x/d/g"};
    while (!stop.load(std::memory_order_relaxed)) {
      const int g = e.Evaluate(u, open_granted, kQuiet).err();
      const int n = e.Evaluate(u, open_new, kQuiet).err();
      const int d = e.Evaluate(u, open_deep, kQuiet).err();
      const int o = e.Evaluate(u, open_outside, kQuiet).err();
      const int m = e.Evaluate(u, move_out, kQuiet).err();
      // /granted/f is never touched; what comes and goes under /granted
      // opens or is missing; under /x it is refused, or missing.
      if (g != 0 || (n != 0 && n != ENOENT) || (d != 0 && d != ENOENT) ||
          (o != EACCES && o != ENOENT) || m != move_out_err)
        bad.fetch_add(1);
      reads.fetch_add(5, std::memory_order_relaxed);
    }
  };
  std::thread r1(reader), r2(reader);
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
  WaitForReaders(running, 2);
  const uint64_t before = reads.load();
  for (int i = 0; MoreRounds(i, 2000, reads, before) && write_failures == 0; ++i) {
    for (size_t k = 0; k < 6; ++k) write_failures += e.Apply(root, writes[k], kQuiet).err() != 0;
    for (int j = 0; j < 4; ++j) {
      write_failures += e.Apply(root, j % 2 ? back : there, kQuiet).err() != 0;
      write_failures += e.Apply(root, mknod(fmt::format("/x/keep{}-{}", i, j)), kQuiet).err() != 0;
    }
    for (size_t k = 6; k < std::size(writes); ++k)
      write_failures += e.Apply(root, writes[k], kQuiet).err() != 0;
  }
  const uint64_t during = reads.load() - before;
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(bad.load(), 0u);
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
