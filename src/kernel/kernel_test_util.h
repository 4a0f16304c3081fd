// The fixture of the kernel executor's tests: scenario text in, the
// kernel's errnos out; skipped with the reason where the kernel cannot run.

#ifndef PATHWARDEN_SRC_KERNEL_KERNEL_TEST_UTIL_H_
#define PATHWARDEN_SRC_KERNEL_KERNEL_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"

namespace pathwarden::kernel_testing {

// KernelTest
//
// Every expectation in the kernel tests is what Linux 6.18 answers; root
// and Landlock are needed, else the test is skipped with the reason.
class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = KernelUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Parse()
//
// A scenario from test text (an empty one, with a test failure, when it
// does not parse).
inline Scenario Parse(std::string_view toml) {
  auto s = ParseScenario(toml, "t.toml", false);
  EXPECT_TRUE(s.has_value()) << s.error();
  return s.value_or(Scenario{});
}

// ErrsOf()
//
// The errno of every step of a run.
inline std::vector<int> ErrsOf(const RunResult& r) {
  std::vector<int> errs;
  for (const StepResult& s : r.steps) errs.push_back(s.err);
  return errs;
}

// KernelExecutor: scenario text in, the kernel's answers out.
class KernelExecutor : public KernelTest {
 protected:
  static RunResult Run(std::string_view toml, bool capture_tree = false) {
    auto s = ParseScenario(toml, "t.toml", false);
    EXPECT_TRUE(s.has_value()) << s.error();
    if (!s) return RunResult{RunResult::Status::kError, s.error(), {}, {}};
    KernelOptions o;
    o.capture_tree = capture_tree;
    return RunInKernel(*s, o);
  }

  // The errno of every step, after checking that the scenario ran.
  static std::vector<int> Errs(std::string_view toml) {
    RunResult r = Run(toml);
    EXPECT_EQ(r.status, RunResult::Status::kRan) << r.message;
    return ErrsOf(r);
  }
};

}  // namespace pathwarden::kernel_testing

#endif  // PATHWARDEN_SRC_KERNEL_KERNEL_TEST_UTIL_H_
