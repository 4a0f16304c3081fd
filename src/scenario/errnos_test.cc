#include "src/scenario/errnos.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"

namespace pathwarden {
namespace {

// Every expectation the suites hold was confirmed on the kernel: each must
// be one the table says the call can give, or the table is wrong (too
// narrow), and the fuzz targets would report answers Linux gives.
TEST(LinuxErrnos, CoverEveryKernelConfirmedExpectation) {
  const std::filesystem::path root = PATHWARDEN_SOURCE_DIR;
  size_t files = 0, steps = 0;
  for (const auto& dir : {root / "tests" / "scenarios", root / "examples"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".toml" && ext != ".json")) continue;
      auto s = LoadScenarioFile(e.path().string());
      if (!s.has_value()) continue;  // not a scenario (policies, queries)
      ++files;
      for (const StepSpec& st : s->steps) {
        ++steps;
        EXPECT_TRUE(LinuxReturns(st.op, st.expect))
            << s->Where(st.loc) << ": " << OpName(st.op) << " expects "
            << ErrnoName(st.expect) << ", not in " << LinuxErrnoList(st.op);
      }
    }
  }
  EXPECT_GT(files, 40u);
  EXPECT_GT(steps, 1000u);
}

TEST(LinuxErrnos, RefuseWhatTheCallNeverGives) {
  EXPECT_TRUE(LinuxReturns(Op::kStat, 0));
  EXPECT_TRUE(LinuxReturns(Op::kStat, ENOENT));
  EXPECT_FALSE(LinuxReturns(Op::kStat, EEXIST));
  EXPECT_FALSE(LinuxReturns(Op::kStat, EXDEV));
  EXPECT_TRUE(LinuxReturns(Op::kRename, EXDEV));
  EXPECT_FALSE(LinuxReturns(Op::kOpen, ENOTEMPTY));
  EXPECT_TRUE(LinuxReturns(Op::kRmdir, ENOTEMPTY));
  EXPECT_FALSE(LinuxReturns(Op::kSignal, EACCES));  // kill(2) says EPERM
  EXPECT_FALSE(LinuxReturns(Op::kChdir, -1));
  EXPECT_FALSE(LinuxReturns(Op::kChdir, 100000));
  EXPECT_EQ(LinuxErrnoList(Op::kSignal), "EPERM ESRCH EINVAL");  // in errno order
}

}  // namespace
}  // namespace pathwarden
