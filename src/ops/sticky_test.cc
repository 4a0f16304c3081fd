// The sticky-directory rules one by one, through the engine: who may
// remove or rename an entry of a sticky directory (may_delete() and
// __check_sticky()), and the O_CREAT hardening of protected_regular and
// protected_fifos (may_create_in_sticky()).

#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "pathwarden/scenario.h"

namespace pathwarden {
namespace {

// Runs `steps` (TOML [[step]] tables) on a sticky /tmp (1777, root) with
// files of alice (1000) and bob (2000), and /alicetmp (1777, alice).
std::vector<int> RunSticky(std::string_view steps, std::string_view sysctl = "") {
  std::string text = std::string("format = 1\n") + std::string(sysctl) + R"(
[[node]]
path = "/tmp"
type = "dir"
mode = 0o1777
[[node]]
path = "/tmp/alice"
mode = 0o666
uid = 1000
gid = 1000
[[node]]
path = "/tmp/bob"
mode = 0o666
uid = 2000
gid = 2000
[[node]]
path = "/tmp/alice-fifo"
type = "fifo"
mode = 0o666
uid = 1000
gid = 1000
[[node]]
path = "/alicetmp"
type = "dir"
mode = 0o1777
uid = 1000
gid = 1000
[[node]]
path = "/alicetmp/bob"
mode = 0o666
uid = 2000
gid = 2000
[[node]]
path = "/group"
type = "dir"
mode = 0o1770
gid = 50
[[node]]
path = "/group/alice"
mode = 0o666
uid = 1000
gid = 50
[[node]]
path = "/searchable"
type = "dir"
mode = 0o1771
gid = 50
[[node]]
path = "/searchable/bob"
mode = 0o666
uid = 2000
gid = 50
[[process]]
name = "alice"
uid = 1000
gid = 1000
[[process]]
name = "bob"
uid = 2000
gid = 2000
groups = [50]
[[process]]
name = "fowner"
uid = 3000
gid = 3000
caps = ["CAP_FOWNER"]
[[process]]
name = "override"
uid = 4000
gid = 4000
caps = ["CAP_DAC_OVERRIDE"]
)" + std::string(steps);
  auto s = ParseScenario(text, "sticky.toml", false);
  EXPECT_TRUE(s.has_value()) << s.error();
  if (!s) return {};
  RunResult r = RunInEngine(*s, EngineOptions{});
  EXPECT_EQ(r.status, RunResult::Status::kRan) << r.message;
  std::vector<int> errs;
  for (const StepResult& sr : r.steps) errs.push_back(sr.err);
  return errs;
}

std::string Step(std::string_view as, std::string_view op, std::string_view path,
                 std::string_view extra = "") {
  return "[[step]]\nas = \"" + std::string(as) + "\"\nop = \"" + std::string(op) +
         "\"\npath = \"" + std::string(path) + "\"\n" + std::string(extra) +
         "expect = \"ok\"\n";
}

TEST(Sticky, OthersCannotRemoveAnEntryTheyDoNotOwn) {
  EXPECT_EQ(RunSticky(Step("bob", "unlink", "/tmp/alice")), std::vector<int>{EPERM});
}

TEST(Sticky, TheEntrysOwnerMayRemoveIt) {
  EXPECT_EQ(RunSticky(Step("bob", "unlink", "/tmp/bob")), std::vector<int>{0});
}

TEST(Sticky, TheDirectorysOwnerMayRemoveAnyEntry) {
  EXPECT_EQ(RunSticky(Step("alice", "unlink", "/alicetmp/bob")), std::vector<int>{0});
}

TEST(Sticky, CapFownerOverridesTheRule) {
  EXPECT_EQ(RunSticky(Step("fowner", "unlink", "/tmp/alice")), std::vector<int>{0});
}

TEST(Sticky, CapDacOverrideDoesNotOverrideTheRule) {
  EXPECT_EQ(RunSticky(Step("override", "unlink", "/tmp/alice")), std::vector<int>{EPERM});
}

TEST(Sticky, RenamingSomeoneElsesEntryAwayIsRefused) {
  EXPECT_EQ(RunSticky(Step("bob", "rename", "/tmp/alice", "path2 = \"/tmp/mine\"\n")),
            std::vector<int>{EPERM});
}

TEST(Sticky, ReplacingSomeoneElsesEntryIsRefused) {
  EXPECT_EQ(RunSticky(Step("bob", "rename", "/tmp/bob", "path2 = \"/tmp/alice\"\n")),
            std::vector<int>{EPERM});
}

TEST(Sticky, WritePermissionOnTheDirectoryComesFirst) {
  // /searchable is 1771 root:50: alice, "other", may search it but not
  // write it, so may_delete() refuses with EACCES before the sticky rule
  // would refuse bob's file with EPERM (checked on the kernel).
  EXPECT_EQ(RunSticky(Step("alice", "unlink", "/searchable/bob")), std::vector<int>{EACCES});
  // /group is 1770: the walk itself refuses her.
  EXPECT_EQ(RunSticky(Step("alice", "unlink", "/group/alice")), std::vector<int>{EACCES});
}

TEST(Sticky, ProtectedRegularBindsEvenDacOverride) {
  const std::string step = Step("override", "open", "/tmp/alice", "flags = \"O_WRONLY|O_CREAT\"\n");
  EXPECT_EQ(RunSticky(step, "[sysctl]\nprotected_regular = 1\n"), std::vector<int>{EACCES});
  EXPECT_EQ(RunSticky(step), std::vector<int>{0});
}

TEST(Sticky, ProtectedRegularTwoAlsoCoversGroupWritableDirectories) {
  const std::string step = Step("bob", "open", "/group/alice", "flags = \"O_WRONLY|O_CREAT\"\n");
  EXPECT_EQ(RunSticky(step, "[sysctl]\nprotected_regular = 1\n"), std::vector<int>{0});
  EXPECT_EQ(RunSticky(step, "[sysctl]\nprotected_regular = 2\n"), std::vector<int>{EACCES});
}

TEST(Sticky, ProtectedFifosIsSeparateFromProtectedRegular) {
  const std::string step = Step("bob", "open", "/tmp/alice-fifo", "flags = \"O_RDWR|O_CREAT\"\n");
  EXPECT_EQ(RunSticky(step, "[sysctl]\nprotected_regular = 2\n"), std::vector<int>{0});
  EXPECT_EQ(RunSticky(step, "[sysctl]\nprotected_fifos = 1\n"), std::vector<int>{EACCES});
}

}  // namespace
}  // namespace pathwarden
