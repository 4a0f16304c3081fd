// The shrinker on synthetic predicates: it finds the few elements a
// property needs, keeps the property at every accepted step, and stays
// within its budget.

#include "src/fuzz/shrinker.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "src/fuzz/generator.h"
#include "src/fuzz/random.h"

namespace pathwarden::fuzz {
namespace {

bool HasRenameOf(const Scenario& s, const std::string& path) {
  for (const StepSpec& st : s.steps)
    if (st.op == Op::kRename && st.path == path) return true;
  return false;
}

bool HasNode(const Scenario& s, const std::string& path) {
  for (const NodeSpec& n : s.nodes)
    if (n.path == path) return true;
  return false;
}

Scenario Big() {
  Scenario s;
  for (int i = 0; i < 30; ++i) {
    NodeSpec n;
    n.path = "/n" + std::to_string(i);
    n.mode = 0640;
    n.has_owner = true;
    n.uid = 1000;
    s.nodes.push_back(n);
  }
  for (int i = 0; i < 4; ++i) {
    ProcessSpec p;
    p.name = "p" + std::to_string(i);
    p.uid = 1000;
    p.groups = {50, 1000};
    LayerSpec l;
    l.handled_fs = landlock::kFsAll;
    RuleSpec r;
    r.path = "/n1";
    r.access = landlock::kFsReadFile | landlock::kFsWriteFile;
    l.rules = {r, r};
    p.layers = {l, l};
    s.processes.push_back(p);
  }
  for (int i = 0; i < 40; ++i) {
    StepSpec st;
    st.as = "p" + std::to_string(i % 4);
    st.op = i == 27 ? Op::kRename : Op::kOpen;
    st.path = i == 27 ? "/n7" : "//n" + std::to_string(i % 30) + "/./";
    st.path2 = "/x";
    st.flags = O_RDWR | O_CREAT | O_TRUNC;
    s.steps.push_back(st);
  }
  return s;
}

TEST(Shrinker, FindsTheStepAndNodeAPropertyNeeds) {
  auto keep = [](const Scenario& s) { return HasRenameOf(s, "/n7") && HasNode(s, "/n7"); };
  const Scenario s = Big();
  ASSERT_TRUE(keep(s));
  ShrinkStats stats;
  const Scenario small = Shrink(s, keep, {}, &stats);
  EXPECT_TRUE(keep(small));
  EXPECT_EQ(small.steps.size(), 1u);
  EXPECT_EQ(small.nodes.size(), 1u);
  // Removing the step's process would remove the step: that one stays.
  EXPECT_EQ(small.processes.size(), 1u);
  EXPECT_TRUE(small.processes[0].layers.empty());
  EXPECT_TRUE(small.processes[0].groups.empty());
  EXPECT_FALSE(small.nodes[0].mode.has_value());
  EXPECT_FALSE(small.nodes[0].has_owner);
  EXPECT_EQ(small.steps[0].flags, 0u);
  EXPECT_LT(ScenarioSize(small), ScenarioSize(s));
  EXPECT_GT(stats.accepted, 0);
  EXPECT_LE(stats.tries, ShrinkOptions{}.max_tries);
}

TEST(Shrinker, SimplifiesPathsAndKeepsNeededBits) {
  // Needs an O_CREAT open of /n3 (spelled any way) by anyone.
  auto keep = [](const Scenario& s) {
    for (const StepSpec& st : s.steps)
      if (st.op == Op::kOpen && (st.flags & O_CREAT) && st.path.find("n3") != std::string::npos)
        return true;
    return false;
  };
  const Scenario small = Shrink(Big(), keep, {});
  ASSERT_EQ(small.steps.size(), 1u);
  EXPECT_EQ(small.steps[0].flags, static_cast<uint64_t>(O_CREAT));
  EXPECT_EQ(small.steps[0].path, "/n3");
  EXPECT_TRUE(small.nodes.empty());
}

TEST(Shrinker, KeepsLayerRightsTheRulesNeed) {
  // Needs a process with a layer handling write_file and a rule granting it.
  auto keep = [](const Scenario& s) {
    for (const ProcessSpec& p : s.processes)
      for (const LayerSpec& l : p.layers)
        for (const RuleSpec& r : l.rules)
          if ((l.handled_fs & landlock::kFsWriteFile) && (r.access & landlock::kFsWriteFile)) return true;
    return false;
  };
  const Scenario small = Shrink(Big(), keep, {});
  ASSERT_EQ(small.processes.size(), 1u);
  ASSERT_EQ(small.processes[0].layers.size(), 1u);
  const LayerSpec& l = small.processes[0].layers[0];
  EXPECT_EQ(l.handled_fs, landlock::kFsWriteFile);
  ASSERT_EQ(l.rules.size(), 1u);
  EXPECT_EQ(l.rules[0].access, landlock::kFsWriteFile);
}

TEST(Shrinker, RespectsTheBudget) {
  int calls = 0;
  auto keep = [&](const Scenario&) {
    ++calls;
    return false;
  };
  ShrinkOptions o;
  o.max_tries = 25;
  const Scenario s = Big();
  const Scenario same = Shrink(s, keep, o);
  EXPECT_EQ(calls, 25);
  EXPECT_EQ(same.steps.size(), s.steps.size());
}

TEST(Shrinker, GeneratedScenariosShrinkToValidOnes) {
  // A property of the engine's answers, on generated scenarios: some step
  // fails with EACCES. Every accepted candidate must stay valid.
  int checked = 0;
  for (uint64_t i = 0; i < 5; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(21, i), {});
    auto keep = [](const Scenario& c) {
      if (!ValidateScenario(c).empty()) return false;
      RunResult r = RunInEngine(c, EngineOptions{});
      for (const StepResult& sr : r.steps)
        if (sr.err == EACCES) return true;
      return false;
    };
    if (!keep(s)) continue;
    ++checked;
    const Scenario small = Shrink(s, keep, {});
    EXPECT_EQ(ValidateScenario(small), "");
    EXPECT_TRUE(keep(small));
    EXPECT_LE(small.steps.size(), 2u) << ScenarioToToml(small);
  }
  EXPECT_GT(checked, 0) << "no generated case had an EACCES step to shrink to";
}

}  // namespace
}  // namespace pathwarden::fuzz
