// Scenarios and the rules where kernel builds differ: the kernel executor
// runs a file named for this kernel's rule and skips, saying why, one
// named for another; a file that names none is run as the running kernel
// answers, by both executors. Both roads are taken whatever this machine's
// kernel is, by pretending the probe found the other value.

#include <cerrno>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pathwarden/kernel_rules.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/kernel_test_util.h"
#include "src/scenario/run_engine.h"

namespace pathwarden {
namespace {

using ::testing::HasSubstr;
using kernel_testing::Parse;

constexpr std::string_view kSteps = R"(
[[node]]
path = "/f"
uid = 1000
gid = 1000
[[process]]
name = "carol"
uid = 3000
gid = 3000
[[step]]
as = "carol"
op = "setxattr"
path = "/f"
name = "security.capability"
value = ""
expect = "ok"
)";

Scenario Named(std::string_view value) {
  return Parse(std::string("format = 1\n") +
               (value.empty() ? "" : fmt::format("[kernel]\nempty_file_caps = \"{}\"\n", value)) +
               std::string(kSteps));
}

TEST(KernelRules, AFileNamedForAnotherKernelIsSkippedSayingWhy) {
  using kernel_internal::KernelRulesSkipReason;
  const KernelRules stored{.empty_file_caps = EmptyFileCaps::kStored};
  const KernelRules refused{.empty_file_caps = EmptyFileCaps::kRefused};
  const KernelRules unknown{.empty_file_caps = EmptyFileCaps::kUnknown};
  EXPECT_EQ(KernelRulesSkipReason(Named(""), stored), "");
  EXPECT_EQ(KernelRulesSkipReason(Named(""), unknown), "");
  EXPECT_EQ(KernelRulesSkipReason(Named("stored"), stored), "");
  EXPECT_EQ(KernelRulesSkipReason(Named("refused"), refused), "");
  EXPECT_EQ(KernelRulesSkipReason(Named("stored"), refused),
            "written for [kernel] empty_file_caps = \"stored\" (setxattr() of an empty "
            "security.capability); this kernel's is \"refused\" (probed: pathwarden selftest)");
  EXPECT_THAT(KernelRulesSkipReason(Named("refused"), stored),
              HasSubstr("this kernel's is \"stored\""));
  EXPECT_THAT(KernelRulesSkipReason(Named("refused"), unknown),
              HasSubstr("whether this kernel does the same could not be probed"));
}

// The engine, for a file that names no rule, answers as the running
// kernel does; for one that names a rule, as named.
TEST(KernelRules, TheEngineFollowsTheRunningKernelOrTheFile) {
  for (EmptyFileCaps running : {EmptyFileCaps::kStored, EmptyFileCaps::kRefused}) {
    ScopedKernelRulesForTesting pretend({.empty_file_caps = running});
    const int unnamed = RunInEngine(Named(""), EngineOptions{}).steps.at(0).err;
    EXPECT_EQ(unnamed, running == EmptyFileCaps::kStored ? 0 : EINVAL);
    EXPECT_EQ(RunInEngine(Named("stored"), EngineOptions{}).steps.at(0).err, 0);
    EXPECT_EQ(RunInEngine(Named("refused"), EngineOptions{}).steps.at(0).err, EINVAL);
  }
  ScopedKernelRulesForTesting pretend({.empty_file_caps = EmptyFileCaps::kUnknown});
  const StepResult r = RunInEngine(Named(""), EngineOptions{}).steps.at(0);
  EXPECT_THAT(r.reason, HasSubstr("could not be probed"));
}

class KernelRulesOnTheKernel : public kernel_testing::KernelTest {};

// On the kernel: the file named for what this kernel does runs and agrees;
// the other is skipped. Then, pretending the probe had found the other
// value, the roles swap: what would run on such a kernel is skipped here
// and the reverse, so neither road goes untried.
TEST_F(KernelRulesOnTheKernel, TheFileForThisKernelRunsTheOtherIsSkipped) {
  const EmptyFileCaps here = RunningKernelRules().empty_file_caps;
  if (here == EmptyFileCaps::kUnknown) GTEST_SKIP() << "the probe could not tell";
  const std::string_view mine = here == EmptyFileCaps::kStored ? "stored" : "refused";
  const std::string_view other = here == EmptyFileCaps::kStored ? "refused" : "stored";
  const RunResult ran = RunInKernel(Named(mine), KernelOptions{});
  ASSERT_EQ(ran.status, RunResult::Status::kRan) << ran.message;
  EXPECT_EQ(ran.steps.at(0).err, here == EmptyFileCaps::kStored ? 0 : EINVAL);
  const RunResult skipped = RunInKernel(Named(other), KernelOptions{});
  EXPECT_EQ(skipped.status, RunResult::Status::kSkipped);
  EXPECT_THAT(skipped.message, HasSubstr(fmt::format("this kernel's is \"{}\"", mine)));
  // The unnamed file runs, and the kernel answers what the probe said.
  const RunResult unnamed = RunInKernel(Named(""), KernelOptions{});
  ASSERT_EQ(unnamed.status, RunResult::Status::kRan) << unnamed.message;
  EXPECT_EQ(unnamed.steps.at(0).err, ran.steps.at(0).err);
  {
    ScopedKernelRulesForTesting pretend(
        {.empty_file_caps = here == EmptyFileCaps::kStored ? EmptyFileCaps::kRefused
                                                           : EmptyFileCaps::kStored});
    EXPECT_EQ(RunInKernel(Named(mine), KernelOptions{}).status, RunResult::Status::kSkipped);
    EXPECT_EQ(RunInKernel(Named(other), KernelOptions{}).status, RunResult::Status::kRan);
  }
}

}  // namespace
}  // namespace pathwarden
