// pathwarden bench: the two seed experiments, in the engine and on the
// kernel in the same run, and the engine's own costs (import, the host
// backend's fills and revalidation, threads).

#ifndef PATHWARDEN_BENCH_BENCH_H_
#define PATHWARDEN_BENCH_BENCH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathwarden::bench {

struct Options {
  bool kernel = false;  // also measure the real kernel
  bool quick = false;   // small sizes, short timings (a full run under a minute)
  bool smoke = false;   // tiny sizes: only that it works (ctest)
  bool json = false;
  std::string plot_dir;   // PNG charts when not empty
  std::string usr = "/usr";  // the host tree the lookup, import and host benchmarks preload
  bool instructions = false;  // also count instructions per check (callgrind)
};

// Reporter
//
// Collects measurements: one JSON object each (printed as a line with
// --json), and a table on stdout otherwise.
class Reporter {
 public:
  explicit Reporter(bool json) : json_(json) {}
  void Add(nlohmann::json m);
  void Note(const std::string& text);  // a line of context (not in JSON)
  // Table()
  //
  // Declares the columns of one kind of `bench` row for the text table.
  void Table(const std::string& bench, std::vector<std::string> columns);
  const std::vector<nlohmann::json>& all() const { return all_; }

 private:
  bool json_;
  std::vector<nlohmann::json> all_;
  std::vector<std::pair<std::string, std::vector<std::string>>> tables_;
  std::string last_bench_;
  std::vector<std::string> last_columns_;
};

// NsPerOp()
//
// The best of `rounds` timings of `fn` run in batches until each round
// takes at least `min_seconds`: nanoseconds per call. The best, not the
// mean, because these machines are shared and noisy.
double NsPerOp(const std::function<void()>& fn, double min_seconds, int rounds = 3);

// RunSelected()
//
// Runs the benchmarks `which` names ("landlock", "lookup", "import",
// "host", "threads", "commands", "trace", "fileserver" or "all") into `r`, and draws the charts when o.plot_dir is
// set. With o.smoke, returns what the run was asked for and did not
// measure ("landlock by-layer", "the Landlock chart"), so that a benchmark
// that stops working fails the test that runs it; else nothing.
std::vector<std::string> RunSelected(const std::string& which, const Options& o, Reporter& r);

// The benchmarks.
void RunLandlock(const Options& o, Reporter& r);
void RunLookup(const Options& o, Reporter& r);
void RunImport(const Options& o, Reporter& r);
void RunHost(const Options& o, Reporter& r);
void RunThreads(const Options& o, Reporter& r);
// Issue 11: explain, explain --batch and map as commands (bench/commands_bench.cc).
void RunCommands(const Options& o, Reporter& r);
// Issue 12: trace against strace and the untraced run (bench/trace_bench.cc).
void RunTraceBench(const Options& o, Reporter& r);
// Issue 13: pathwarden-fs against -o default_permissions (bench/fileserver_bench.cc).
void RunFileserverBench(const Options& o, Reporter& r);

// Instruction counts (bench/instructions.cc): InstructionsPerCheck()
// runs `pathwarden bench-probe <probe...>` under callgrind and returns the
// instructions per check of its n checks, or a negative value with the
// reason in *why. RunProbe() is that hidden subcommand.
double InstructionsPerCheck(const std::vector<std::string>& probe, int n, std::string* why);
int RunProbe(const std::vector<std::string>& args);

// Plot()
//
// PNG charts of what `r` holds into `dir`, with gnuplot.
std::string Plot(const Reporter& r, const std::string& dir);

// The kernel's side (bench/kernel_side.cc). Each forks a child so that no
// Landlock domain or namespace leaks into this process. Negative on
// failure (with the reason in *why).
double KernelLandlockNs(int depth, int iterations, std::string* why);
double KernelStatNs(const std::string& path, int iterations, bool faccessat, std::string* why);

}  // namespace pathwarden::bench

#endif  // PATHWARDEN_BENCH_BENCH_H_
