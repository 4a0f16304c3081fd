// Steps in a few words, as check and the fuzzer print them.

#include <fcntl.h>

#include <gtest/gtest.h>

#include "pathwarden/scenario.h"

namespace pathwarden {
namespace {

TEST(DescribeStepTest, ShowsOperationPathsAndFlagsWorthShowing) {
  StepSpec open;
  open.op = Op::kOpen;
  open.path = "/a";
  EXPECT_EQ(DescribeStep(open), "open /a O_RDONLY");  // an open's access mode always shows
  open.flags = O_WRONLY | O_RDWR;
  EXPECT_EQ(DescribeStep(open), "open /a O_WRONLY|O_RDWR");  // access mode 3 has no name
  StepSpec rename;
  rename.op = Op::kRename;
  rename.path = "/a";
  rename.path2 = "/b";
  EXPECT_EQ(DescribeStep(rename), "rename /a /b");
}

TEST(DescribeStepTest, ShortensLongPathsInTheMiddleOnlyWhenAsked) {
  StepSpec st;
  st.op = Op::kStat;
  st.path = "/" + std::string(100, 'x') + "/end";
  EXPECT_EQ(DescribeStep(st), "stat " + st.path);
  const std::string shown = DescribeStep(st, 60);
  EXPECT_LE(shown.size(), std::string("stat ").size() + 60);
  EXPECT_TRUE(shown.starts_with("stat /xxx")) << shown;
  EXPECT_TRUE(shown.ends_with("x/end")) << shown;
  EXPECT_NE(shown.find("..."), std::string::npos) << shown;
}

}  // namespace
}  // namespace pathwarden
