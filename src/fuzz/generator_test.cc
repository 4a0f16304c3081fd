// The generator: deterministic, valid (round-trips and builds), and
// reaching every operation, node type and corner it promises.

#include "src/fuzz/generator.h"

#include <set>

#include <gtest/gtest.h>

#include "pathwarden/cred.h"
#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "src/fuzz/random.h"

namespace pathwarden::fuzz {
namespace {

constexpr int kCases = 300;

TEST(Generator, SameSeedSameScenario) {
  GenOptions o;
  for (uint64_t i = 0; i < 20; ++i) {
    const Scenario a = GenerateScenario(CaseSeed(7, i), o);
    const Scenario b = GenerateScenario(CaseSeed(7, i), o);
    EXPECT_EQ(ScenarioToToml(a), ScenarioToToml(b)) << "case " << i;
  }
}

TEST(Generator, CaseSeedsDiffer) {
  std::set<uint64_t> seeds;
  for (uint64_t s = 0; s < 4; ++s)
    for (uint64_t i = 0; i < 100; ++i) seeds.insert(CaseSeed(s, i));
  EXPECT_EQ(seeds.size(), 400u);
  EXPECT_NE(ScenarioToToml(GenerateScenario(CaseSeed(1, 0), {})),
            ScenarioToToml(GenerateScenario(CaseSeed(1, 1), {})));
}

TEST(Generator, EveryScenarioRoundTripsAndBuilds) {
  GenOptions o;
  for (uint64_t i = 0; i < kCases; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(11, i), o);
    EXPECT_EQ(ValidateScenario(s), "") << "case " << i << "\n" << ScenarioToToml(s);
  }
}

TEST(Generator, StepCountsStayInRange) {
  GenOptions o;
  o.steps_min = 3;
  o.steps_max = 5;
  for (uint64_t i = 0; i < 50; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(5, i), o);
    EXPECT_GE(s.steps.size(), 3u);
    EXPECT_LE(s.steps.size(), 5u);
  }
}

TEST(Generator, CoversEveryOperationAndNodeType) {
  std::set<Op> ops;
  std::set<NodeType> types;
  std::set<uint32_t> mount_flags;
  bool sysctl = false, acl = false, default_acl = false, attrs = false, parent = false;
  bool layer = false, port_rule = false, dirfd = false, long_name = false, dotdot = false;
  int layered_processes = 0;
  for (uint64_t i = 0; i < kCases; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(3, i), {});
    sysctl = sysctl || s.sysctl != Sysctls{};
    for (const NodeSpec& n : s.nodes) {
      types.insert(n.type);
      acl = acl || n.acl.has_value();
      default_acl = default_acl || n.default_acl.has_value();
      attrs = attrs || n.attrs != 0;
      for (uint32_t bit = 1; bit <= kMountNosymfollow; bit <<= 1)
        if (n.mount_flags & bit) mount_flags.insert(bit);
    }
    for (const ProcessSpec& p : s.processes) {
      parent = parent || !p.parent.empty();
      if (!p.layers.empty()) ++layered_processes;
      for (const LayerSpec& l : p.layers)
        for (const RuleSpec& r : l.rules) port_rule = port_rule || r.is_port;
    }
    for (const StepSpec& st : s.steps) {
      ops.insert(st.op);
      layer = layer || st.layer.has_value();
      dirfd = dirfd || !st.dirfd.empty();
      long_name = long_name || st.path.find(std::string(256, 'L')) != std::string::npos;
      dotdot = dotdot || st.path.find("..") != std::string::npos;
    }
  }
  for (int op = 0; op <= static_cast<int>(Op::kFchdir); ++op)
    EXPECT_TRUE(ops.contains(static_cast<Op>(op))) << OpName(static_cast<Op>(op));
  for (NodeType t : {NodeType::kFile, NodeType::kDir, NodeType::kSymlink, NodeType::kFifo,
                     NodeType::kSocket, NodeType::kChar, NodeType::kBlock, NodeType::kTmpfs,
                     NodeType::kBind})
    EXPECT_TRUE(types.contains(t)) << NodeTypeName(t);
  EXPECT_EQ(mount_flags.size(), 5u);
  EXPECT_TRUE(sysctl);
  EXPECT_TRUE(acl);
  EXPECT_TRUE(default_acl);
  EXPECT_TRUE(attrs);
  EXPECT_TRUE(parent);
  EXPECT_TRUE(layer);
  EXPECT_TRUE(port_rule);
  EXPECT_TRUE(dirfd);
  EXPECT_TRUE(long_name);
  EXPECT_TRUE(dotdot);
  EXPECT_GT(layered_processes, kCases / 2);
}

TEST(Generator, StepsMostlyReachExistingObjects) {
  // The engine's verdicts: most steps should not die on ENOENT.
  int steps = 0, enoent = 0;
  for (uint64_t i = 0; i < 100; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(9, i), {});
    RunResult r = RunInEngine(s, EngineOptions{});
    ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
    for (const StepResult& sr : r.steps) {
      ++steps;
      if (sr.err == ENOENT) ++enoent;
    }
  }
  EXPECT_LT(enoent * 4, steps) << enoent << " of " << steps << " steps got ENOENT";
}

TEST(Generator, RespectsAvailableCapabilities) {
  GenOptions o;
  o.caps_available = CapBit(kCapChown);
  for (uint64_t i = 0; i < 100; ++i) {
    const Scenario s = GenerateScenario(CaseSeed(4, i), o);
    for (const ProcessSpec& p : s.processes)
      if (p.caps) {
        EXPECT_EQ(*p.caps & ~CapBit(kCapChown), 0u) << p.name;
      }
  }
}

}  // namespace
}  // namespace pathwarden::fuzz
