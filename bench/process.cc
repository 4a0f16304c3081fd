// Commands measured as processes (bench/process.h).

#include "bench/process.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace pathwarden::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

Run RunProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  Run r;
  if (pid < 0) {
    r.status = 127 << 8;
    return r;
  }
  struct rusage ru;
  std::memset(&ru, 0, sizeof(ru));
  while (wait4(pid, &r.status, 0, &ru) < 0 && errno == EINTR) {
  }
  r.seconds = Since(t0);
  r.max_rss_kib = ru.ru_maxrss;
  return r;
}

std::vector<std::optional<Run>> BestOfEach(const std::vector<std::vector<std::string>>& argvs,
                                           int n) {
  std::vector<std::optional<Run>> best(argvs.size());
  std::vector<bool> failed(argvs.size(), false);
  std::vector<long> rss(argvs.size(), 0);
  for (int i = 0; i < n; ++i)
    for (size_t c = 0; c < argvs.size(); ++c) {
      if (failed[c]) continue;
      Run r = RunProcess(argvs[c]);
      if (!r.ok()) {
        failed[c] = true;
        best[c].reset();
        continue;
      }
      rss[c] = std::max(rss[c], r.max_rss_kib);
      if (!best[c] || r.seconds < best[c]->seconds) best[c] = r;
    }
  for (size_t c = 0; c < argvs.size(); ++c)
    if (best[c]) best[c]->max_rss_kib = rss[c];
  return best;
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "pathwarden";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace pathwarden::bench
