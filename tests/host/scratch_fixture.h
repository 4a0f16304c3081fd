// The fixture of the host tests that read a scratch tree: as root, in a
// private mount namespace of the test's own process, the host's
// protected_* sysctls held for the test, and a scratch tree built
// (src/kernel/scratch_host.h) and removed after. Skipped when not root
// or without a private mount namespace.

#ifndef PATHWARDEN_TESTS_HOST_SCRATCH_FIXTURE_H_
#define PATHWARDEN_TESTS_HOST_SCRATCH_FIXTURE_H_

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/security_modules.h"
#include "src/kernel/scratch_host.h"
#include "src/kernel/sysctl_guard.h"

namespace pathwarden {

// RootIdleModules()
//
// The security modules this process, as root, reads as refusing nothing
// the model answers (the BPF LSM with no program attached): a test that
// reads the host as a user who cannot read that (no CAP_SYS_ADMIN in the
// initial user namespace) passes them as SecurityModuleSources::trusted,
// as `--trust-lsm` after checking, so that its answers stay about what
// it tests. What such a user is answered without it is tested in
// tests/host/security_modules_test.cc and tests/query/cli_test.sh. Read
// once, the first time (call it before dropping privileges or forking).
inline const std::vector<std::string>& RootIdleModules() {
  static const std::vector<std::string> idle = [] {
    std::vector<std::string> out;
    for (const SecurityModule& m : ReadSecurityModules({}).active)
      if (m.refuses == SecurityModule::Refuses::kNever) out.push_back(m.name);
    return out;
  }();
  return idle;
}

// ScratchHostTest
//
// A test whose SetUp() builds on this one's checks IsSkipped() and
// HasFatalFailure() after calling it.
class ScratchHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (a private mount namespace, owners)";
    if (std::string err = kernel_internal::EnterPrivateMountNamespace(); !err.empty())
      GTEST_SKIP() << "no private mount namespace: " << err;
    // The host's protected_* sysctls decide links, opens and follows, and
    // the kernel executor sets a scenario's values machine-wide while it
    // runs one: its lock, held for the test, keeps the host's values (in
    // ctest the RESOURCE_LOCK does; this holds against any other
    // pathwarden process too).
    auto guard = kernel_internal::SysctlGuard::Acquire();
    ASSERT_TRUE(guard) << guard.error();
    sysctls_ = std::move(*guard);
    auto s = kernel_internal::ScratchHost::Build();
    ASSERT_TRUE(s) << s.error();
    scratch_ = std::move(*s);
  }
  void TearDown() override {
    if (scratch_) {
      EXPECT_EQ(scratch_->Cleanup(), "");
    }
  }

  std::unique_ptr<kernel_internal::SysctlGuard> sysctls_;
  std::unique_ptr<kernel_internal::ScratchHost> scratch_;
};

}  // namespace pathwarden

#endif  // PATHWARDEN_TESTS_HOST_SCRATCH_FIXTURE_H_
