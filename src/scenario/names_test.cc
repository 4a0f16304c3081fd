// The format's vocabularies: every name reads back to what it names, and
// the tables cover the model's values.

#include "src/scenario/names.h"

#include <sys/mount.h>

#include <gtest/gtest.h>

#include "pathwarden/uapi.h"

namespace pathwarden::scenario_internal {
namespace {

TEST(Names, EveryOperationAndNodeTypeReadsBack) {
  for (int i = 0; i <= static_cast<int>(Op::kFchdir); ++i) {
    const Op op = static_cast<Op>(i);
    ASSERT_NE(OpName(op), "?") << i;
    EXPECT_EQ(OpFromName(OpName(op)), op) << OpName(op);
    EXPECT_FALSE(StepKeysFor(op).required.empty()) << OpName(op);
  }
  for (int i = 0; i <= static_cast<int>(NodeType::kBind); ++i) {
    const NodeType t = static_cast<NodeType>(i);
    ASSERT_NE(NodeTypeName(t), "?") << i;
    EXPECT_EQ(NodeTypeFromName(NodeTypeName(t)), t) << NodeTypeName(t);
  }
  for (TimeSpec t : {TimeSpec::kNow, TimeSpec::kOmit, TimeSpec::kSet})
    EXPECT_EQ(TimeSpecFromName(TimeSpecName(t)), t);
  EXPECT_EQ(TimeSpecNames(), (std::vector<std::string_view>{"now", "omit", "set"}));
}

TEST(Names, StepKeys) {
  EXPECT_TRUE(StepTakes(Op::kRename, "path2"));
  EXPECT_TRUE(StepTakes(Op::kOpen, "mode"));
  EXPECT_FALSE(StepTakes(Op::kClose, "path"));
  EXPECT_TRUE(IsStepKey("times"));
  EXPECT_FALSE(IsStepKey("as"));  // every step's, not an operation's
  EXPECT_FALSE(IsStepKey("modee"));
}

TEST(Names, FlagBitsCoverTheModelWithTheirLinuxValues) {
  uint32_t all = 0;
  for (const FlagBit& f : MountFlagBits()) all |= f.bit;
  EXPECT_EQ(all, kMountRdonly | kMountNoexec | kMountNosuid | kMountNodev | kMountNosymfollow);
  EXPECT_EQ(LinuxFlags(MountFlagBits(), kMountRdonly | kMountNosymfollow),
            uint64_t{MS_RDONLY} | kMsNosymfollow);
  EXPECT_EQ(BitFromName(MountFlagBits(), "nodev"), kMountNodev);
  EXPECT_EQ(BitFromName(MountFlagBits(), "rw"), std::nullopt);
  EXPECT_EQ(BitNames(AttrBits(), kAttrAppend | kAttrImmutable),
            (std::vector<std::string_view>{"immutable", "append"}));
}

TEST(Names, OpenFlagsBeginWithTheAccessModes) {
  const auto open = FlagsOf(FlagFamily::kOpen);
  ASSERT_GE(open.size(), 3u);
  EXPECT_EQ(open[0].name, "O_RDONLY");
  EXPECT_EQ(open[1].name, "O_WRONLY");
  EXPECT_EQ(open[2].name, "O_RDWR");
}

TEST(Names, Alternatives) {
  const std::vector<std::string_view> names = {"now", "omit", "set"};
  EXPECT_EQ(Alternatives(names), "now, omit or set");
  EXPECT_EQ(Alternatives(std::span(names).first(1)), "now");
}

}  // namespace
}  // namespace pathwarden::scenario_internal
