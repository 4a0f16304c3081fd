// Scenarios run on the real kernel: every expectation is what Linux 6.18
// answers (root and Landlock needed; skipped with the reason otherwise).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"

namespace pathwarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class KernelExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = KernelUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }

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
    std::vector<int> errs;
    for (const StepResult& s : r.steps) errs.push_back(s.err);
    return errs;
  }
};

TEST_F(KernelExecutor, DacDeniesOtherUserWithoutReadBit) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/secret"
mode = 0o600
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
as = "u"
op = "open"
path = "/secret"
expect = "EACCES"
[[step]]
op = "open"
path = "/secret"
expect = "ok"
)"),
              ElementsAre(EACCES, 0));
}

}  // namespace
}  // namespace pathwarden
