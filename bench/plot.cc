// Charts of a benchmark run, drawn by gnuplot (Debian's gnuplot-nox).

#include <sys/stat.h>

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

}  // namespace

std::string Plot(const Reporter& r, const std::string& dir) {
  mkdir(dir.c_str(), 0755);
  std::string made;
  // 1. Landlock: cost per check against depth, one series per variant.
  std::map<std::string, std::map<int, double>> series;
  for (const auto& m : r.all()) {
    if (m.value("bench", "") != "landlock" || !m.contains("ns_per_check")) continue;
    if (m.value("layers", 1) != 1) continue;
    series[m["variant"].get<std::string>()][m["depth"].get<int>()] = m["ns_per_check"].get<double>();
  }
  if (!series.empty()) {
    const std::string data = dir + "/landlock.dat";
    std::ofstream out(data);
    for (const auto& [variant, points] : series) {
      out << "# " << variant << "\n";
      for (const auto& [depth, ns] : points) out << depth << " " << ns << "\n";
      out << "\n\n";
    }
    out.close();
    const std::string png = dir + "/landlock.png";
    std::ofstream gp(dir + "/landlock.gp");
    gp << "set terminal pngcairo size 900,600 font 'sans,11'\n"
       << "set output " << Quote(png) << "\n"
       << "set title 'Landlock worst case: open denied after walking D directories with one rule each'\n"
       << "set xlabel 'depth D (directories)'\nset ylabel 'time per check (ns)'\n"
       << "set logscale xy\nset grid\nset key top left\n"
       << "set format y '10^{%L}'\n";
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
    if (RunGnuplot(dir + "/landlock.gp") == 0) made += png + " ";
  }
  // 2. Lookup: operations per second of each variant.
  std::vector<std::pair<std::string, double>> rates;
  for (const auto& m : r.all())
    if (m.value("bench", "") == "lookup" && m.contains("variant") && m.contains("ops_per_s"))
      rates.push_back({m["variant"].get<std::string>(), m["ops_per_s"].get<double>()});
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
       << "set title 'stat() of /usr/include/linux/fs.h: millions per second (log)'\n"
       << "set style fill solid 0.7\nset boxwidth 0.6\nset logscale y\nset grid y\n"
       << "set yrange [0.1:*]\nunset key\n"
       << "plot " << Quote(data) << " using 1:3:xtic(2) with boxes, '' using 1:3:(sprintf('%.2f', $3)) with labels offset 0,1\n";
    gp.close();
    if (RunGnuplot(dir + "/lookup.gp") == 0) made += png + " ";
  }
  return made;
}

}  // namespace pathwarden::bench
