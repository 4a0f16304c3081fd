// Measurements: timing and reporting.

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "bench/bench.h"

namespace pathwarden::bench {

void Reporter::Add(nlohmann::json m) {
  if (json_) {
    std::fputs((m.dump() + "\n").c_str(), stdout);
  } else {
    std::string line;
    for (const auto& [k, v] : m.items()) {
      if (!line.empty()) line += "  ";
      if (v.is_number_float()) {
        line += fmt::format("{}={:.6g}", k, v.get<double>());
      } else if (v.is_string()) {
        line += fmt::format("{}={}", k, v.get<std::string>());
      } else {
        line += fmt::format("{}={}", k, v.dump());
      }
    }
    std::fputs((line + "\n").c_str(), stdout);
  }
  std::fflush(stdout);
  all_.push_back(std::move(m));
}

void Reporter::Note(const std::string& text) {
  if (!json_) {
    std::fputs(("# " + text + "\n").c_str(), stdout);
    std::fflush(stdout);
  }
}

double NsPerOp(const std::function<void()>& fn, double min_seconds, int rounds) {
  using Clock = std::chrono::steady_clock;
  // Find a batch size that takes about a tenth of a round.
  uint64_t batch = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < batch; ++i) fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > min_seconds / 10 || batch > (uint64_t{1} << 40)) break;
    batch *= 2;
  }
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    uint64_t n = 0;
    const auto t0 = Clock::now();
    double s = 0;
    do {
      for (uint64_t i = 0; i < batch; ++i) fn();
      n += batch;
      s = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (s < min_seconds);
    best = std::min(best, s * 1e9 / static_cast<double>(n));
  }
  return best;
}

}  // namespace pathwarden::bench
