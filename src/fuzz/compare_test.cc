// The comparator: first disagreement, its summary and signature, and the
// round-trip check of scenario equality it relies on.

#include "src/fuzz/compare.h"

#include <gtest/gtest.h>

#include "src/fuzz/scenario_equal.h"

namespace pathwarden::fuzz {
namespace {

Scenario TwoSteps() {
  Scenario s;
  StepSpec a;
  a.op = Op::kStat;
  a.path = "/a";
  StepSpec b;
  b.op = Op::kRename;
  b.path = "/a";
  b.path2 = "/b";
  s.steps = {a, b};
  return s;
}

RunResult Ran(std::vector<int> errs, std::vector<TreeEntry> tree = {}) {
  RunResult r;
  for (int e : errs) r.steps.push_back({e, ""});
  r.tree = std::move(tree);
  return r;
}

TEST(Compare, FirstDifferingStep) {
  const Scenario s = TwoSteps();
  const Disagreement d = Compare(s, Ran({0, EACCES}), Ran({0, 0}));
  ASSERT_EQ(d.kind, Disagreement::Kind::kStep);
  EXPECT_EQ(d.step, 1u);
  EXPECT_EQ(d.Signature(), "step rename EACCES/ok");
  EXPECT_EQ(d.Summary(s), "engine EACCES, kernel ok at step 2 (rename /a /b)");
  EXPECT_TRUE(HasDisagreement(s, Ran({0, EACCES}), Ran({0, 0}), "step rename EACCES/ok"));
  EXPECT_FALSE(HasDisagreement(s, Ran({0, EPERM}), Ran({0, 0}), "step rename EACCES/ok"));
  // An earlier, other disagreement is not the same one.
  EXPECT_FALSE(HasDisagreement(s, Ran({ENOENT, EACCES}), Ran({0, 0}), "step rename EACCES/ok"));
}

TEST(Compare, TreesOnlyWhenStepsAgree) {
  const Scenario s = TwoSteps();
  TreeEntry root;
  root.type = "dir";
  TreeEntry file;
  file.name = "a";
  file.type = "file";
  file.mode = 0644;
  TreeEntry other = file;
  other.mode = 0600;
  const std::vector<TreeEntry> f = {root, file}, g = {root, other};
  Disagreement d = Compare(s, Ran({0, 0}, f), Ran({0, 0}, g));
  ASSERT_EQ(d.kind, Disagreement::Kind::kTree);
  EXPECT_EQ(d.Signature(), "tree mode");
  EXPECT_EQ(d.details.size(), 1u);
  d = Compare(s, Ran({0, 0}, f), Ran({0, 0}, {root}));
  EXPECT_EQ(d.Signature(), "tree presence");
  EXPECT_EQ(d.Summary(s), "final trees differ: /a: engine file 0644 0:0 nlink 0 size 0, kernel: none");
  d = Compare(s, Ran({0, 0}, f), Ran({0, 0}, {}));
  EXPECT_EQ(d.Signature(), "tree presence");
  EXPECT_EQ(d.tree_differences, 2u);
  EXPECT_EQ(Compare(s, Ran({0, EACCES}, f), Ran({0, 0}, g)).kind, Disagreement::Kind::kStep);
  EXPECT_FALSE(Compare(s, Ran({0, 0}, f), Ran({0, 0}, f)));
}

TEST(Compare, SkippedIsNoDisagreementButABuildErrorIs) {
  const Scenario s = TwoSteps();
  RunResult skipped;
  skipped.status = RunResult::Status::kSkipped;
  EXPECT_FALSE(Compare(s, Ran({0, 0}), skipped));
  RunResult error;
  error.status = RunResult::Status::kError;
  error.message = "x:1:1: the kernel refuses this layer";
  const Disagreement d = Compare(s, Ran({0, 0}), error);
  EXPECT_EQ(d.Signature(), "build");
  EXPECT_FALSE(Compare(s, error, error));
}

TEST(ScenarioEqual, SeesEveryKindOfField) {
  Scenario a = TwoSteps();
  EXPECT_EQ(FirstDifference(a, a), "");
  Scenario b = a;
  b.steps[1].flags = 1;
  EXPECT_EQ(FirstDifference(a, b), "step 2: flags differs");
  b = a;
  b.sysctl.protected_regular = 1;
  EXPECT_EQ(FirstDifference(a, b), "scenario: sysctl differs");
  b = a;
  b.steps[0].loc.line = 9;
  b.description = "other";
  EXPECT_EQ(FirstDifference(a, b), "");
}

}  // namespace
}  // namespace pathwarden::fuzz
