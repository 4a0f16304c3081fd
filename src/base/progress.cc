// A terminal status line (progress.h).

#include "src/base/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iterator>
#include <utility>

#include <fmt/format.h>

namespace pathwarden::internal {

namespace {

// Back to the start of the line, then erase to its end (ECMA-48 EL 0).
constexpr std::string_view kEraseLine = "\r\033[K";

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void WriteStderr(std::string_view bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressLine::ProgressLine(std::string label, std::string unit)
    : ProgressLine(std::move(label), std::move(unit), Options{}) {}

ProgressLine::ProgressLine(std::string label, std::string unit, Options options)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      terminal_(options.terminal.value_or(isatty(STDERR_FILENO) == 1)),
      clock_(options.clock ? std::move(options.clock) : SteadySeconds),
      sink_(options.sink ? std::move(options.sink) : WriteStderr),
      min_interval_(options.min_interval),
      start_(clock_()) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Update(uint64_t count, std::string_view extra) {
  if (!terminal_) return;
  const double now = clock_();
  if (last_draw_ && now - *last_draw_ < min_interval_) return;
  last_draw_ = now;
  std::string bytes(kEraseLine);
  bytes += Format(count, now - start_, extra);
  sink_(bytes);
  shown_ = true;
}

void ProgressLine::Clear() {
  // The next Update() draws at once: the line comes back right after
  // whatever was printed in its place.
  last_draw_.reset();
  if (!shown_) return;
  sink_(kEraseLine);
  shown_ = false;
}

std::string ProgressLine::Format(uint64_t count, double elapsed, std::string_view extra) const {
  const double rate = elapsed > 0 ? static_cast<double>(count) / elapsed : 0.0;
  std::string line =
      fmt::format("{}: {} {}, {:.0f} {}/s, {:.1f} s", label_, count, unit_, rate, unit_, elapsed);
  if (!extra.empty()) fmt::format_to(std::back_inserter(line), ", {}", extra);
  return line;
}

}  // namespace pathwarden::internal
