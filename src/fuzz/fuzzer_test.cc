// What makes a fuzz run count, mismatches aside.

#include "src/fuzz/fuzzer.h"

#include <gtest/gtest.h>

namespace pathwarden::fuzz {
namespace {

TEST(CleanRun, NeedsSomethingComparedAndNoFailures) {
  FuzzOptions o;
  o.cases = 10;
  FuzzResult r;
  r.scenarios = 10;
  r.mismatches = 3;
  EXPECT_TRUE(CleanRun(r, o)) << "mismatches are not what makes a run unclean";
  r.invalid = 1;
  EXPECT_FALSE(CleanRun(r, o));
  r.invalid = 0;
  r.kernel_errors = 1;
  EXPECT_FALSE(CleanRun(r, o));
  r.kernel_errors = 0;
  r.scenarios = 0;
  r.skipped = 10;
  EXPECT_FALSE(CleanRun(r, o)) << "nothing compared";
  o.cases = 0;
  EXPECT_TRUE(CleanRun(r, o)) << "nothing asked";
}

}  // namespace
}  // namespace pathwarden::fuzz
