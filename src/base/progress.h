// A terminal status line: one line on stderr, redrawn in place ('\r')
// while work goes on and erased at the end, naming what runs, how much is
// done, how fast, and for how long. Drawn only on a terminal, so that logs
// and pipes get none of it.

#ifndef PATHWARDEN_SRC_BASE_PROGRESS_H_
#define PATHWARDEN_SRC_BASE_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pathwarden::internal {

// ProgressLine
//
// "label: 2400 steps, 1234 steps/s, 1.9 s, <extra>": the count and its
// unit, the rate since the line was made, the elapsed seconds, then any
// text the caller adds. Update() redraws at most once per
// Options::min_interval (the first Update() and the first after a Clear()
// draw at once); Clear() erases the line, before other output to the
// terminal and at the end (the destructor does it too).
//
// Thread-compatible: one caller at a time, as for any object without
// internal locking.
//
// Example:
//   ProgressLine line("fuzz", "steps");
//   for (...) line.Update(steps, fmt::format("{} mismatches", n));
//   line.Clear();
class ProgressLine {
 public:
  struct Options {
    // Whether to draw at all; by default, whether stderr is a terminal.
    std::optional<bool> terminal = std::nullopt;
    // Seconds on a monotonic clock; by default std::chrono::steady_clock.
    std::function<double()> clock = nullptr;
    // Where the bytes go; by default stderr, flushed on each write.
    std::function<void(std::string_view)> sink = nullptr;
    double min_interval = 0.1;
  };

  ProgressLine(std::string label, std::string unit);
  ProgressLine(std::string label, std::string unit, Options options);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Update()
  //
  // The count now (and `extra`, appended after a comma), drawn unless the
  // last drawing is more recent than Options::min_interval.
  void Update(uint64_t count, std::string_view extra = {});

  // Clear()
  //
  // Erases the line if one is drawn.
  void Clear();

  // Format()
  //
  // The line's text (without the escapes that redraw it) for `count` after
  // `elapsed` seconds.
  std::string Format(uint64_t count, double elapsed, std::string_view extra) const;

  // shown()
  //
  // Whether a line is drawn now.
  bool shown() const { return shown_; }

 private:
  std::string label_, unit_;
  bool terminal_;
  std::function<double()> clock_;
  std::function<void(std::string_view)> sink_;
  double min_interval_;
  double start_;
  std::optional<double> last_draw_;
  bool shown_ = false;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_PROGRESS_H_
