// Measurements: timing and reporting.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "bench/bench.h"

namespace pathwarden::bench {

namespace {

std::string Cell(const nlohmann::json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::abs(d) >= 1000 ? fmt::format("{:.0f}", d) : fmt::format("{:.4g}", d);
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

void Reporter::Add(nlohmann::json m) {
  if (json_) {
    std::fputs((m.dump() + "\n").c_str(), stdout);
  } else {
    // A table per kind of row: a header whenever the benchmark or the set
    // of columns changes, then one aligned row per measurement as it comes
    // (so a long run shows its progress).
    // The first declared table that has every key of the row, so rows of
    // one kind share a header even when some leave a column empty; else
    // the row's own keys: what it is about first, then what was measured.
    const std::string kind = m.value("bench", "");
    std::vector<std::string> columns;
    for (const auto& [b, cols] : tables_) {
      if (b != kind) continue;
      bool fits = true;
      for (const auto& [k, v] : m.items())
        fits = fits && (k == "bench" || std::find(cols.begin(), cols.end(), k) != cols.end());
      if (fits) {
        columns = cols;
        break;
      }
    }
    if (columns.empty()) {
      static const char* const kFirst[] = {"variant", "depth", "layers", "threads", "writer"};
      for (const char* k : kFirst)
        if (m.contains(k)) columns.push_back(k);
      for (const auto& [k, v] : m.items())
        if (k != "bench" && std::find(columns.begin(), columns.end(), k) == columns.end())
          columns.push_back(k);
    }
    const std::string bench = m.value("bench", "");
    std::string out;
    if (bench != last_bench_ || columns != last_columns_) {
      out += fmt::format("\n{}\n", bench);
      for (const std::string& c : columns) out += fmt::format("  {:>14}", c);
      out += "\n";
      last_bench_ = bench;
      last_columns_ = columns;
    }
    for (const std::string& c : columns)
      out += fmt::format("  {:>14}", m.contains(c) ? Cell(m[c]) : std::string("-"));
    out += "\n";
    std::fputs(out.c_str(), stdout);
  }
  std::fflush(stdout);
  all_.push_back(std::move(m));
}

void Reporter::Table(const std::string& bench, std::vector<std::string> columns) {
  tables_.emplace_back(bench, std::move(columns));
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
