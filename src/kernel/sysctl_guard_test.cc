// The protected_* sysctls after a holder crashed mid-run: the next holder
// puts the host's values back before anything else.

#include "src/kernel/sysctl_guard.h"
#include "src/kernel/kernel_test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr const char* kSaved = "/run/pathwarden/sysctl.saved";

Sysctls Flipped(const Sysctls& v) {
  return {.protected_symlinks = v.protected_symlinks ^ 1,
          .protected_hardlinks = v.protected_hardlinks ^ 1,
          .protected_regular = v.protected_regular == 0 ? 2 : 0,
          .protected_fifos = v.protected_fifos == 0 ? 1 : 0};
}

// Forks a holder that changes every value and dies of SIGKILL (and, with
// `guardian_too`, kills its guardian first: a crash of both). It reports,
// while it still holds the lock, whether the saved file and the new values
// were in place (1) or not (0).
bool CrashAHolder(const Sysctls& values, bool guardian_too) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto guard = SysctlGuard::Acquire();
    char ok = guard && (*guard)->Set(values).empty() && access(kSaved, F_OK) == 0 &&
              ReadSysctls().has_value() && *ReadSysctls() == values && (*guard)->guardian() > 0;
    if (ok && guardian_too) {
      const pid_t g = (*guard)->guardian();
      kill(g, SIGKILL);
      waitpid(g, nullptr, 0);
    }
    (void)!write(fds[1], &ok, 1);
    raise(SIGKILL);
  }
  close(fds[1]);
  char ok = 0;
  bool got = read(fds[0], &ok, 1) == 1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got && ok == 1 && WIFSIGNALED(status);
}

class SysctlGuardTest : public kernel_testing::KernelTest {};

// Values are compared under the lock only: outside it, another pathwarden
// process (ctest -j) may be running a scenario with its own.

TEST_F(SysctlGuardTest, NextHolderRestoresAfterACrash) {
  auto host = ReadHostSysctls();
  ASSERT_TRUE(host.has_value()) << host.error();
  ASSERT_TRUE(CrashAHolder(Flipped(*host), /*guardian_too=*/true));
  // Whoever takes the lock next (this test, or a concurrent pathwarden
  // process first) repairs the machine before reading the host's values.
  auto guard = SysctlGuard::Acquire();
  ASSERT_TRUE(guard.has_value()) << guard.error();
  EXPECT_TRUE((*guard)->repaired());
  EXPECT_EQ((*guard)->host(), *host);
  auto now = ReadSysctls();
  ASSERT_TRUE(now.has_value()) << now.error();
  EXPECT_EQ(*now, *host);
  EXPECT_NE(access(kSaved, F_OK), 0);
}

TEST_F(SysctlGuardTest, RunInKernelRestoresAfterACrash) {
  auto host = ReadHostSysctls();
  ASSERT_TRUE(host.has_value()) << host.error();
  ASSERT_TRUE(CrashAHolder(Flipped(*host), /*guardian_too=*/true));
  auto s = ParseScenario("format = 1\n[sysctl]\nprotected_regular = 1\n", "t.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  RunResult r = RunInKernel(*s, KernelOptions{});
  EXPECT_EQ(r.status, RunResult::Status::kRan) << r.message;
  // Had the crash gone unrepaired, the run would have taken the flipped
  // values for the host's, restored those and deleted the file.
  auto after = ReadHostSysctls();
  ASSERT_TRUE(after.has_value()) << after.error();
  EXPECT_EQ(*after, *host);
}

TEST_F(SysctlGuardTest, GuardianRestoresWhenTheHolderIsKilled) {
  auto host = ReadHostSysctls();
  ASSERT_TRUE(host.has_value()) << host.error();
  ASSERT_TRUE(CrashAHolder(Flipped(*host), /*guardian_too=*/false));
  // The guardian holds the lock until the values are back: whoever takes
  // it next finds nothing to repair.
  auto guard = SysctlGuard::Acquire();
  ASSERT_TRUE(guard.has_value()) << guard.error();
  EXPECT_FALSE((*guard)->repaired());
  EXPECT_EQ((*guard)->host(), *host);
  EXPECT_NE(access(kSaved, F_OK), 0);
}

TEST_F(SysctlGuardTest, SetWritesOnlyWhatDiffersAndRestoreUndoes) {
  auto guard = SysctlGuard::Acquire();
  ASSERT_TRUE(guard.has_value()) << guard.error();
  Sysctls host = (*guard)->host();
  EXPECT_EQ((*guard)->Set(host), "");
  EXPECT_NE(access(kSaved, F_OK), 0) << "nothing changed, nothing saved";
  EXPECT_EQ((*guard)->guardian(), -1) << "no change, no guardian";
  EXPECT_EQ((*guard)->Set(Flipped(host)), "");
  EXPECT_EQ(access(kSaved, F_OK), 0);
  EXPECT_GT((*guard)->guardian(), 0);
  EXPECT_EQ(ReadSysctls().value_or(host), Flipped(host));
  EXPECT_EQ((*guard)->Restore(), "");
  EXPECT_EQ(ReadSysctls().value_or(Flipped(host)), host);
  EXPECT_NE(access(kSaved, F_OK), 0);
  EXPECT_EQ((*guard)->guardian(), -1) << "values back, guardian gone";
}

TEST_F(SysctlGuardTest, SecondHolderInThisProcessFailsInsteadOfWaiting) {
  auto first = SysctlGuard::Acquire();
  ASSERT_TRUE(first.has_value()) << first.error();
  auto second = SysctlGuard::Acquire();
  ASSERT_FALSE(second.has_value());
  EXPECT_NE(second.error().find("already holds"), std::string::npos) << second.error();
}

}  // namespace
}  // namespace pathwarden::kernel_internal
