// Many scenarios under one session: sysctls switched between runs, fresh
// namespaces each time, and the throughput the differential fuzzer needs.

#include "src/kernel/kernel_session.h"
#include "src/kernel/kernel_test_util.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace pathwarden::kernel_internal {
namespace {

class KernelSessionTest : public kernel_testing::KernelTest {};

using kernel_testing::ErrsOf;
using kernel_testing::Parse;

// A hard link to another user's file is refused under protected_hardlinks.
std::string HardlinkScenario(int protected_hardlinks) {
  return fmt::format(R"(format = 1
[sysctl]
protected_hardlinks = {}
[[node]]
path = "/tmp"
type = "dir"
mode = 0o1777
[[node]]
path = "/f"
mode = 0o600
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
as = "u"
op = "link"
path = "/f"
path2 = "/tmp/l"
expect = "{}"
[[step]]
as = "u"
op = "mkdir"
path = "/tmp/mine"
expect = "ok"
)",
                     protected_hardlinks, protected_hardlinks ? "EPERM" : "ok");
}

TEST_F(KernelSessionTest, EachRunGetsItsSysctlsAndAFreshTree) {
  auto session = KernelSession::Open();
  ASSERT_TRUE(session.has_value()) << session.error();
  for (int round = 0; round < 3; ++round) {
    for (int hardlinks : {1, 0}) {
      RunResult r = (*session)->Run(Parse(HardlinkScenario(hardlinks)), KernelOptions{});
      ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
      ASSERT_EQ(r.steps.size(), 2u);
      EXPECT_EQ(r.steps[0].err, hardlinks ? EPERM : 0) << "round " << round;
      // mkdir succeeds every time: nothing of the last run is left.
      EXPECT_EQ(r.steps[1].err, 0) << "round " << round;
    }
  }
}

// A typical fuzzer scenario: 20 nodes, 3 processes (one sandboxed, one
// forked from it), 25 steps.
std::string TypicalScenario() {
  std::string t = R"(format = 1
[sysctl]
protected_symlinks = 1
)";
  for (int i = 0; i < 5; ++i) {
    t += fmt::format(R"(
[[node]]
path = "/d{0}"
type = "dir"
mode = 0o775
uid = 1000
[[node]]
path = "/d{0}/f"
mode = 0o664
uid = 1000
content = "x"
[[node]]
path = "/d{0}/l"
type = "symlink"
target = "f"
[[node]]
path = "/d{0}/sub/g"
mode = 0o600
)",
                     i);
  }
  t += R"(
[[process]]
name = "u"
uid = 1000
gid = 1000
[[process.layer]]
handled_fs = ["read_file", "write_file", "make_reg", "remove_file"]
rule = [{ path = "/d0", access = ["read_file", "write_file", "make_reg", "remove_file"] }]
[[process]]
name = "v"
parent = "u"
[[process]]
name = "w"
uid = 1001
gid = 1001
)";
  const char* ops[] = {
      R"(as = "u"
op = "open"
path = "/d0/f"
flags = "O_RDWR")",
      R"(as = "u"
op = "open"
path = "/d1/f")",
      R"(as = "v"
op = "open"
path = "/d0/new"
flags = "O_WRONLY|O_CREAT")",
      R"(as = "w"
op = "stat"
path = "/d2/l")",
      R"(as = "w"
op = "unlink"
path = "/d3/f")",
  };
  for (int i = 0; i < 25; ++i)
    t += fmt::format("\n[[step]]\n{}\nexpect = \"ok\"\n", ops[i % 5]);
  return t;
}

TEST_F(KernelSessionTest, ThroughputOfATypicalScenario) {
  Scenario s = Parse(TypicalScenario());
  constexpr int kRuns = 200;
  auto session = KernelSession::Open();
  ASSERT_TRUE(session.has_value()) << session.error();
  RunResult first = (*session)->Run(s, KernelOptions{});
  ASSERT_EQ(first.status, RunResult::Status::kRan) << first.message;
  const std::vector<int> want = ErrsOf(first);
  EXPECT_EQ(want[0], 0);
  EXPECT_EQ(want[1], EACCES);  // Landlock: /d1 is outside the rule
  EXPECT_EQ(want[2], 0);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) {
    RunResult r = (*session)->Run(s, KernelOptions{});
    ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
    ASSERT_EQ(ErrsOf(r), want) << "run " << i << " differs from the first";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double steps_per_s = kRuns * static_cast<double>(s.steps.size()) / secs;
  std::printf("kernel executor: %d runs of %zu steps, %zu nodes, %zu processes: %.2f ms/run, "
              "%.0f steps/s\n",
              kRuns, s.steps.size(), s.nodes.size(), s.processes.size() + 1,
              secs * 1000 / kRuns, steps_per_s);
  RecordProperty("steps_per_second", static_cast<int>(steps_per_s));
}

}  // namespace
}  // namespace pathwarden::kernel_internal
