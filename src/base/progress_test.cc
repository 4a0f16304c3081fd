// The status line with a clock and a terminal of the test's own: what it
// writes, when it redraws, and that it writes nothing off a terminal.

#include "src/base/progress.h"

#include <string>

#include <gtest/gtest.h>

namespace pathwarden::internal {
namespace {

class ProgressLineTest : public ::testing::Test {
 protected:
  ProgressLine::Options Terminal(bool terminal = true) {
    return {.terminal = terminal,
            .clock = [this] { return now; },
            .sink = [this](std::string_view bytes) { out += bytes; }};
  }

  double now = 100.0;
  std::string out;
};

TEST_F(ProgressLineTest, FormatsCountRateElapsedAndExtra) {
  ProgressLine line("fuzz", "steps", Terminal());
  EXPECT_EQ(line.Format(2400, 2.0, ""), "fuzz: 2400 steps, 1200 steps/s, 2.0 s");
  EXPECT_EQ(line.Format(2400, 2.0, "16/100 cases, 0 mismatches"),
            "fuzz: 2400 steps, 1200 steps/s, 2.0 s, 16/100 cases, 0 mismatches");
  // No time yet: no rate rather than a division by zero.
  EXPECT_EQ(line.Format(5, 0.0, ""), "fuzz: 5 steps, 0 steps/s, 0.0 s");
  EXPECT_EQ(line.Format(1, 3.0, ""), "fuzz: 1 steps, 0 steps/s, 3.0 s");
}

TEST_F(ProgressLineTest, RedrawsInPlaceAtMostOncePerInterval) {
  ProgressLine line("run", "files", Terminal());
  now = 101.0;
  line.Update(10);
  EXPECT_EQ(out, "\r\033[Krun: 10 files, 10 files/s, 1.0 s");
  EXPECT_TRUE(line.shown());
  out.clear();
  now = 101.05;  // within 0.1 s of the last drawing: skipped
  line.Update(20);
  EXPECT_EQ(out, "");
  now = 101.2;
  line.Update(30, "x");
  EXPECT_EQ(out, "\r\033[Krun: 30 files, 25 files/s, 1.2 s, x");
}

TEST_F(ProgressLineTest, ClearErasesOnceAndTheNextUpdateDrawsAtOnce) {
  ProgressLine line("run", "files", Terminal());
  line.Clear();  // nothing drawn: nothing to erase
  EXPECT_EQ(out, "");
  now = 102.0;
  line.Update(4);
  out.clear();
  line.Clear();
  EXPECT_EQ(out, "\r\033[K");
  EXPECT_FALSE(line.shown());
  line.Clear();
  EXPECT_EQ(out, "\r\033[K");
  out.clear();
  line.Update(6);  // same instant as the last drawing, but after a Clear()
  EXPECT_EQ(out, "\r\033[Krun: 6 files, 3 files/s, 2.0 s");
}

TEST_F(ProgressLineTest, TheDestructorErasesTheLine) {
  {
    ProgressLine line("run", "files", Terminal());
    line.Update(1);
    out.clear();
  }
  EXPECT_EQ(out, "\r\033[K");
}

TEST_F(ProgressLineTest, WritesNothingOffATerminal) {
  {
    ProgressLine line("run", "files", Terminal(false));
    line.Update(1);
    now = 200.0;
    line.Update(2, "extra");
    EXPECT_FALSE(line.shown());
    line.Clear();
  }
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace pathwarden::internal
