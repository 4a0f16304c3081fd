// Charts of a benchmark run, drawn by gnuplot (Debian's gnuplot-nox).

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "bench/bench.h"

namespace pathwarden::bench {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

int RunGnuplot(const std::string& script_path) {
  return std::system(fmt::format("gnuplot {} 2>&1", script_path).c_str());
}

// A log-log chart of `key` against depth, one series per variant (one
// layer), from the Landlock rows; the PNG's path, or "" when there is no
// data or gnuplot fails.
std::string DepthChart(const Reporter& r, const std::string& dir, const std::string& name,
                       const std::string& key, const std::string& title,
                       const std::string& ylabel) {
  std::map<std::string, std::map<int, double>> series;
  for (const auto& m : r.all()) {
    if (m.value("bench", "") != "landlock" || !m.contains(key) || !m.contains("variant")) continue;
    if (m.value("layers", 1) != 1) continue;
    series[m["variant"].get<std::string>()][m["depth"].get<int>()] = m[key].get<double>();
  }
  if (series.empty()) return "";
  const std::string data = dir + "/" + name + ".dat";
  std::ofstream out(data);
  for (const auto& [variant, points] : series) {
    out << "# " << variant << "\n";
    for (const auto& [depth, v] : points) out << depth << " " << v << "\n";
    out << "\n\n";
  }
  out.close();
  const std::string png = dir + "/" + name + ".png";
  std::ofstream gp(dir + "/" + name + ".gp");
  gp << "set terminal pngcairo size 900,600 font 'sans,11'\n"
     << "set output " << Quote(png) << "\n"
     << "set title " << Quote(title) << "\n"
     << "set xlabel 'depth D (directories)'\nset ylabel " << Quote(ylabel) << "\n"
     << "set logscale xy\nset grid\nset key top left\n"
     << "set format y '10^{%L}'\n";
  int lo = 1 << 30, hi = 0;
  for (const auto& [variant, points] : series)
    for (const auto& [depth, v] : points) lo = std::min(lo, depth), hi = std::max(hi, depth);
  if (lo == hi) gp << "set xrange [" << lo / 2.0 << ":" << hi * 2.0 << "]\n";  // one depth
  gp << "plot ";
  int idx = 0;
  for (const auto& [variant, points] : series) {
    if (idx) gp << ", ";
    gp << Quote(data) << " index " << idx << " using 1:2 with linespoints lw 2 title "
       << Quote(variant);
    ++idx;
  }
  gp << "\n";
  gp.close();
  return RunGnuplot(dir + "/" + name + ".gp") == 0 ? png : "";
}

}  // namespace

std::string Plot(const Reporter& r, const std::string& dir) {
  mkdir(dir.c_str(), 0755);
  std::string made;
  // 1. Landlock: cost per check against depth, one series per variant;
  // and instructions per check, when counted.
  for (const std::string& png :
       {DepthChart(r, dir, "landlock", "ns_per_check",
                   "Landlock worst case: open denied after walking D directories with one rule each",
                   "time per check (ns)"),
        DepthChart(r, dir, "landlock-instructions", "instructions_per_check",
                   "Landlock worst case: instructions per check (callgrind)",
                   "instructions per check")})
    if (!png.empty()) made += png + " ";
  // 2. Lookup: operations per second of each variant.
  std::vector<std::pair<std::string, double>> rates;
  std::string path = "the engine's path";
  for (const auto& m : r.all()) {
    if (m.value("bench", "") != "lookup" || !m.contains("variant") || !m.contains("ops_per_s"))
      continue;
    rates.push_back({m["variant"].get<std::string>(), m["ops_per_s"].get<double>()});
    if (m.contains("path") && m["variant"] == "engine-fast") path = m["path"].get<std::string>();
  }
  if (!rates.empty()) {
    const std::string data = dir + "/lookup.dat";
    std::ofstream out(data);
    for (size_t i = 0; i < rates.size(); ++i)
      out << i << " \"" << rates[i].first << "\" " << rates[i].second / 1e6 << "\n";
    out.close();
    const std::string png = dir + "/lookup.png";
    std::ofstream gp(dir + "/lookup.gp");
    gp << "set terminal pngcairo size 900,600 font 'sans,11'\n"
       << "set output " << Quote(png) << "\n"
       << "set title " << Quote("stat() of " + path + ": millions per second (log)") << "\n"
       << "set style fill solid 0.7\nset boxwidth 0.6\nset logscale y\nset grid y\n"
       << "set yrange [0.1:*]\nunset key\n"
       << "plot " << Quote(data) << " using 1:3:xtic(2) with boxes, '' using 1:3:(sprintf('%.2f', $3)) with labels offset 0,1\n";
    gp.close();
    if (RunGnuplot(dir + "/lookup.gp") == 0) made += png + " ";
  }
  // 3. Issue 11's commands: each measured ratio beside its target.
  std::vector<std::array<std::string, 3>> ratios;  // label, measured, target
  for (const auto& m : r.all()) {
    if (m.value("bench", "") != "commands" || !m.contains("ratio") || !m.contains("target"))
      continue;
    const std::string measure = m.value("measure", "");
    const std::string label = measure == "explain-one" ? "explain / namei (<= 3)"
                              : measure == "batch"     ? "batch / kernel rate (>= 10)"
                                                       : "map / find (<= 3)";
    // The batch's target is decided by the median over its runs.
    const char* key = m.contains("ratio_median") ? "ratio_median" : "ratio";
    ratios.push_back({label, fmt::format("{}", m[key].get<double>()),
                      fmt::format("{}", m["target"].get<double>())});
  }
  if (!ratios.empty()) {
    const std::string data = dir + "/commands.dat";
    std::ofstream out(data);
    out << "# what measured target\n";
    for (const auto& [label, measured, target] : ratios)
      out << "\"" << label << "\" " << measured << " " << target << "\n";
    out.close();
    const std::string png = dir + "/commands.png";
    std::ofstream gp(dir + "/commands.gp");
    gp << "set terminal pngcairo size 900,600 font 'sans,11'\n"
       << "set output " << Quote(png) << "\n"
       << "set title " << Quote("Issue 11: the commands against what they compete with (ratios)")
       << "\n"
       << "set style data histogram\nset style histogram cluster gap 1\n"
       << "set style fill solid 0.7\nset boxwidth 0.9\nset grid y\nset logscale y\n"
       << "set yrange [0.5:40]\nset key top left\n"
       << "plot " << Quote(data) << " using 2:xtic(1) title 'measured', '' using 3 title 'target', "
       << "'' using ($0-0.15):2:(sprintf('%.2f', $2)) with labels offset 0,1 notitle\n";
    gp.close();
    if (RunGnuplot(dir + "/commands.gp") == 0) made += png + " ";
  }
  return made;
}

}  // namespace pathwarden::bench
