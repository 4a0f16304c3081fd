// The cross-check matrix: which variants, and what counts as a difference.

#include "src/scenario/variants.h"

#include <set>

#include <gtest/gtest.h>

namespace pathwarden {
namespace {

constexpr std::string_view kScenario = R"(format = 1
[[node]]
path = "/d"
type = "dir"
mode = 0o700
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
as = "u"
op = "stat"
path = "/d/f"
expect = "EACCES"
[[step]]
op = "stat"
path = "/d"
expect = "ok"
)";

TEST(Variants, EveryCombinationOnceEachVerified) {
  EngineOptions base;
  base.explain_allowed = true;
  const std::vector<EngineVariant> v = CrossCheckVariants(base);
  ASSERT_EQ(v.size(), 16u);
  std::set<std::string> names;
  for (const EngineVariant& x : v) {
    names.insert(x.name);
    EXPECT_TRUE(x.options.verify) << x.name;
    EXPECT_TRUE(x.options.explain_allowed) << x.name << ": the base's other options stay";
  }
  EXPECT_EQ(names.size(), v.size());
  EXPECT_EQ(v.front().name, "fast search, by-layer, memo");
  EXPECT_TRUE(names.count("no fast search, by-access, no memo"));
  EXPECT_TRUE(names.count("fast search, by-access, no memo, no reasons"));
  EXPECT_EQ(v.back().name, "no fast search, by-layer, memo, no register loop");
  EXPECT_FALSE(v.back().options.plain_components);
  // The prefix memo, with and without reasons, and nowhere else.
  size_t prefix = 0;
  for (const EngineVariant& x : v) prefix += x.options.prefix_memo;
  EXPECT_EQ(prefix, 2u);
  EXPECT_TRUE(names.count("fast search, by-layer, memo, prefix memo"));
  EXPECT_TRUE(names.count("fast search, by-layer, memo, no reasons, prefix memo"));
}

TEST(Variants, CrossCheckFindsWhatDiffers) {
  auto s = ParseScenario(kScenario, "t.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  const RunResult reference = RunInEngine(*s, EngineOptions{});
  ASSERT_EQ(reference.status, RunResult::Status::kRan) << reference.message;
  EXPECT_TRUE(CrossCheck(*s, reference, EngineOptions{}).empty());

  // Another reason: a difference for each variant that explains.
  RunResult other_reason = reference;
  other_reason.steps[0].reason = "something else";
  const auto by_reason = CrossCheck(*s, other_reason, EngineOptions{});
  EXPECT_EQ(by_reason.size(), 11u);
  for (const VariantDifference& d : by_reason) {
    EXPECT_EQ(d.step, 0u);
    EXPECT_EQ(d.reference.reason, "something else");
    EXPECT_EQ(d.got.reason, reference.steps[0].reason);
    EXPECT_TRUE(d.error.empty());
  }

  // Another errno: a difference for every variant.
  RunResult other_errno = reference;
  other_errno.steps[1].err = ENOENT;
  const auto by_errno = CrossCheck(*s, other_errno, EngineOptions{});
  ASSERT_EQ(by_errno.size(), 16u);
  EXPECT_EQ(by_errno[0].step, 1u);
  EXPECT_EQ(by_errno[0].got.err, 0);
}

}  // namespace
}  // namespace pathwarden
