// File: src/fuzz/selftest.h
//
// `pathwarden selftest`: whether the running kernel answers as the engine
// models it. Three parts, in under a minute: the rules where kernel
// builds are known to differ, probed (pathwarden/kernel_rules.h; the
// engine follows what it finds); the scenario suites, every step run in
// the engine and on the kernel and compared with each other and with the
// suite's expectation, and the final trees; and a short differential fuzz
// run on a fixed seed. Each difference is named.
//
// Example:
//   SelftestOptions o;
//   o.suites = EmbeddedSuites();   // what the binary carries
//   SelftestReport r = RunSelftest(o);
//   return r.ExitStatus();

#ifndef PATHWARDEN_SRC_FUZZ_SELFTEST_H_
#define PATHWARDEN_SRC_FUZZ_SELFTEST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/kernel_rules.h"

namespace pathwarden::fuzz {

// One scenario file the selftest runs: its name (the path in the source
// tree) and its text.
struct SuiteFile {
  std::string_view name;
  std::string_view text;
};

struct SelftestOptions {
  std::vector<SuiteFile> suites;
  uint64_t fuzz_seed = 20261204;
  uint64_t fuzz_cases = 1000;  // 0: no fuzz run
  // Progress: what is being done, and how far ("suites", 12, 49).
  std::function<void(std::string_view part, uint64_t done, uint64_t total)> on_progress;
};

struct SelftestRule {
  std::string key, about;
  std::string value;     // the probed value's name
  std::string mainline;  // mainline 6.18's
  std::string observed;  // the probe's own call and answer
};

struct SelftestReport {
  std::string kernel;  // uname: release and version
  int abi = 0;         // Landlock ABI, or a negative errno
  std::vector<SelftestRule> rules;
  bool rules_known = true;  // every rule probed to a value
  // The suites, and the fuzz run, need the kernel executor.
  std::string kernel_unavailable;  // why not ("" when it ran)
  uint64_t files = 0, files_run = 0, steps = 0, steps_agreeing = 0;
  std::vector<std::string> skipped;      // "file: why"
  std::vector<std::string> differences;  // "file:line [process] step: engine X, kernel Y"
  uint64_t fuzz_cases = 0, fuzz_steps = 0;
  std::vector<std::string> fuzz_differences;
  std::vector<std::string> problems;  // files that did not parse, runs that failed
  double seconds = 0;

  // ExitStatus(): 1 when anything differs or failed, else 3 when
  // something could not be checked (a rule not probed, no kernel
  // executor), else 0.
  int ExitStatus() const;
};

// RunSelftest()
//
// Runs the three parts; never fails: what could not run is in the report.
SelftestReport RunSelftest(const SelftestOptions& options);

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_SELFTEST_H_
