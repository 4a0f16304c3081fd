// Readers evaluate while one writer renames and chmods, or creates and
// removes files and directories: every answer is one a consistent state
// gives, and the memoized Landlock evaluation never serves a stale walk.
// (./test runs these in the tsan preset, which reports any data race.)

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/scenario.h"
#include "src/scenario/run_engine.h"
#include "src/landlock/memo.h"

namespace pathwarden {
namespace {

constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;

constexpr const char* kScenario = R"(format = 1
[[node]]
path = "/a/f"
mode = 0o644
[[node]]
path = "/x"
type = "dir"
mode = 0o755
[[node]]
path = "/x/f"
[[node]]
path = "/granted/f"
[[process]]
name = "u"
uid = 1000
gid = 1000
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/granted", access = ["read_file"] }]
)";

StepSpec MakeStep(std::string_view as, Op op, std::string path, uint64_t flags = 0) {
  StepSpec st;
  st.as = std::string(as);
  st.op = op;
  st.path = std::move(path);
  st.flags = flags;
  return st;
}

TEST(Concurrency, ReadersSeeOnlyConsistentStates) {
  auto s = ParseScenario(kScenario, "c.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  ScenarioModel e(EngineOptions{});
  ASSERT_TRUE(e.Build(*s).has_value());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&] {
    const StepSpec stat_a = MakeStep("u", Op::kStat, "/a/f");
    const StepSpec stat_x = MakeStep("u", Op::kStat, "/x/f");
    const StepSpec open_granted = MakeStep("u", Op::kOpen, "/granted/f");
    const StepSpec open_a = MakeStep("u", Op::kOpen, "/a/f");
    while (!stop.load(std::memory_order_relaxed)) {
      const int a = e.Evaluate(stat_a, kQuiet).err();
      const int x = e.Evaluate(stat_x, kQuiet).err();
      const int g = e.Evaluate(open_granted, kQuiet).err();
      const int o = e.Evaluate(open_a, kQuiet).err();
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
  StepSpec to_b = MakeStep("root", Op::kRename, "/a");
  to_b.path2 = "/b";
  StepSpec to_a = MakeStep("root", Op::kRename, "/b");
  to_a.path2 = "/a";
  StepSpec close_x = MakeStep("root", Op::kChmod, "/x");
  close_x.mode = 0700;
  StepSpec open_x = MakeStep("root", Op::kChmod, "/x");
  open_x.mode = 0755;
  int write_failures = 0;
  for (int i = 0; i < 20000 && write_failures == 0; ++i) {
    write_failures += e.Step((i & 1) ? to_a : to_b, kQuiet).err() != 0;
    write_failures += e.Step((i & 1) ? open_x : close_x, kQuiet).err() != 0;
  }
  // The readers are joined before anything is reported.
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

// The writer allocates and frees dentries and inodes (the arenas grow
// while readers walk, and freed slots are reused) while readers open files
// under a Landlock domain, inside and outside its rule, through the memo.
TEST(Concurrency, CreationsAndRemovalsUnderLandlock) {
  auto s = ParseScenario(kScenario, "c.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  ScenarioModel e(EngineOptions{});
  ASSERT_TRUE(e.Build(*s).has_value());

  // A rename between two directories that never change bounds its walk
  // up (lock_rename()'s trap) by the dentry arena's size on every try.
  StepSpec move_out = MakeStep("u", Op::kRename, "/granted/f");
  move_out.path2 = "/x/moved";
  const int move_out_err = e.Evaluate(move_out, kQuiet).err();
  EXPECT_NE(move_out_err, 0);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&] {
    const StepSpec open_granted = MakeStep("u", Op::kOpen, "/granted/f");
    const StepSpec open_new = MakeStep("u", Op::kOpen, "/granted/new");
    const StepSpec open_deep = MakeStep("u", Op::kOpen, "/granted/d/e/g");
    const StepSpec open_outside = MakeStep("u", Op::kOpen, "/x/d/g");
    while (!stop.load(std::memory_order_relaxed)) {
      const int g = e.Evaluate(open_granted, kQuiet).err();
      const int n = e.Evaluate(open_new, kQuiet).err();
      const int d = e.Evaluate(open_deep, kQuiet).err();
      const int o = e.Evaluate(open_outside, kQuiet).err();
      const int m = e.Evaluate(move_out, kQuiet).err();
      // /granted/f is never touched; what comes and goes under /granted
      // opens or is missing; under /x it is refused, or missing.
      if (g != 0 || (n != 0 && n != ENOENT) || (d != 0 && d != ENOENT) ||
          (o != EACCES && o != ENOENT) || m != move_out_err)
        bad.fetch_add(1);
      reads.fetch_add(5, std::memory_order_relaxed);
    }
  };
  std::thread r1(reader), r2(reader);
  auto mknod = [](std::string path) {
    StepSpec st = MakeStep("root", Op::kMknod, std::move(path));
    st.mode = 0644;
    return st;
  };
  auto mkdir = [](std::string path) {
    StepSpec st = MakeStep("root", Op::kMkdir, std::move(path));
    st.mode = 0755;
    return st;
  };
  const StepSpec writes[] = {
      mknod("/granted/new"),
      mkdir("/granted/d"),
      mkdir("/granted/d/e"),
      mknod("/granted/d/e/g"),
      mkdir("/x/d"),
      mknod("/x/d/g"),
      MakeStep("root", Op::kUnlink, "/granted/new"),
      MakeStep("root", Op::kUnlink, "/granted/d/e/g"),
      MakeStep("root", Op::kRmdir, "/granted/d/e"),
      MakeStep("root", Op::kRmdir, "/granted/d"),
      MakeStep("root", Op::kUnlink, "/x/d/g"),
      MakeStep("root", Op::kRmdir, "/x/d"),
  };
  // Freed slots are reused (last freed, first reused), so each round also
  // keeps names, in fresh slots: the arenas grow while the readers walk.
  // A rename before each makes the readers' memo miss, so they load the
  // arenas' sizes (the bound of the walk up) while the writer grows them.
  StepSpec there = MakeStep("root", Op::kRename, "/x/r");
  there.path2 = "/x/s";
  StepSpec back = MakeStep("root", Op::kRename, "/x/s");
  back.path2 = "/x/r";
  int write_failures = e.Step(mkdir("/x/r"), kQuiet).err() != 0;
  for (int i = 0; i < 2000 && write_failures == 0; ++i) {
    for (size_t k = 0; k < 6; ++k) write_failures += e.Step(writes[k], kQuiet).err() != 0;
    for (int j = 0; j < 4; ++j) {
      write_failures += e.Step(j % 2 ? back : there, kQuiet).err() != 0;
      write_failures += e.Step(mknod(fmt::format("/x/keep{}-{}", i, j)), kQuiet).err() != 0;
    }
    for (size_t k = 6; k < std::size(writes); ++k) write_failures += e.Step(writes[k], kQuiet).err() != 0;
  }
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(write_failures, 0);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

TEST(Memo, FollowsRenamesAcrossRuleBoundaries) {
  auto s = ParseScenario(R"(format = 1
[[node]]
path = "/granted/sub/f"
[[node]]
path = "/other"
type = "dir"
[[process]]
name = "u"
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/granted", access = ["read_file"] }]
)", "m.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  EngineOptions opt;
  opt.memo = true;
  ScenarioModel e(opt);
  ASSERT_TRUE(e.Build(*s).has_value());
  const StepSpec open_inside = MakeStep("u", Op::kOpen, "/granted/sub/f");
  landlock::MemoClearThread();  // the memo is this thread's: not other tests'
  EXPECT_EQ(e.Step(open_inside, kQuiet).err(), 0);
  EXPECT_GT(landlock::MemoEntries(), 0u);
  // Move the subtree out from under the rule: the memo must not answer
  // from the old walk.
  StepSpec mv = MakeStep("root", Op::kRename, "/granted/sub");
  mv.path2 = "/other/sub";
  ASSERT_EQ(e.Step(mv, kQuiet).err(), 0);
  EXPECT_EQ(e.Step(MakeStep("u", Op::kOpen, "/other/sub/f"), kQuiet).err(), EACCES);
  mv.path = "/other/sub";
  mv.path2 = "/granted/sub";
  ASSERT_EQ(e.Step(mv, kQuiet).err(), 0);
  EXPECT_EQ(e.Step(open_inside, kQuiet).err(), 0);
}

}  // namespace
}  // namespace pathwarden
