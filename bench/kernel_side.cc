// The kernel's side of the benchmarks: the Landlock worst case of the seed
// patch (tools/testing/selftests/landlock/fs_bench.c, re-implemented from
// its description) and stat()/faccessat() loops.

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "bench/bench.h"
#include "pathwarden/landlock.h"
#include "src/kernel/landlock_uapi.h"

namespace pathwarden::bench {
namespace {

using kernel_internal::LandlockAddRule;
using kernel_internal::LandlockCreateRuleset;
using kernel_internal::LandlockPathBeneathAttr;
using kernel_internal::LandlockRestrictSelf;
using kernel_internal::LandlockRulesetAttr;

// In the child: a private tmpfs, a chain of `depth` directories "d" with a
// rule granting ioctl_dev on each, a ruleset handling ioctl_dev,
// write_file and make_reg, then the timed openat(innermost, "file.txt",
// O_CREAT|O_TRUNC|O_WRONLY) that Landlock denies after walking to the root.
// Writes the ns per call (or -errno) to `out`.
[[noreturn]] void LandlockChild(const std::string& dir, int depth, int iterations, int out) {
  auto fail = [&](int err) {
    double v = -static_cast<double>(err);
    (void)!write(out, &v, sizeof v);
    _exit(1);
  };
  if (unshare(CLONE_NEWNS) != 0) fail(errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail(errno);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "mode=0755") != 0) fail(errno);
  LandlockRulesetAttr attr;
  attr.handled_access_fs = landlock::kFsIoctlDev | landlock::kFsWriteFile | landlock::kFsMakeReg;
  const int rs = LandlockCreateRuleset(&attr, sizeof attr, 0);
  if (rs < 0) fail(errno);
  int cur = open(dir.c_str(), O_PATH | O_CLOEXEC);
  if (cur < 0) fail(errno);
  for (int i = 0; i < depth; ++i) {
    LandlockPathBeneathAttr rule;
    rule.allowed_access = landlock::kFsIoctlDev;
    rule.parent_fd = cur;
    if (LandlockAddRule(rs, landlock::kRulePathBeneath, &rule, 0) != 0) fail(errno);
    if (mkdirat(cur, "d", 0755) != 0) fail(errno);
    const int next = openat(cur, "d", O_PATH | O_CLOEXEC);
    if (next < 0) fail(errno);
    close(cur);
    cur = next;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(errno);
  if (LandlockRestrictSelf(rs, 0) != 0) fail(errno);
  auto once = [&] {
    const int fd = openat(cur, "file.txt", O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    return fd;
  };
  if (once() >= 0 || errno != EACCES) fail(errno ? errno : EINVAL);  // must be denied
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) once();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
  }
  (void)!write(out, &best, sizeof best);
  _exit(0);
}

}  // namespace

double KernelLandlockNs(int depth, int iterations, std::string* why) {
  if (geteuid() != 0) {
    *why = "not root (needs a private mount namespace for a tmpfs)";
    return -1;
  }
  char tmpl[] = "/tmp/pathwarden-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    *why = fmt::format("mkdtemp: {}", std::strerror(errno));
    return -1;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    rmdir(tmpl);
    *why = fmt::format("pipe: {}", std::strerror(errno));
    return -1;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    LandlockChild(tmpl, depth, iterations, p[1]);
  }
  close(p[1]);
  double v = -EIO;
  if (pid < 0 || read(p[0], &v, sizeof v) != sizeof v) v = -EIO;
  close(p[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  rmdir(tmpl);
  if (v < 0) {
    *why = fmt::format("the kernel benchmark failed: {}", std::strerror(static_cast<int>(-v)));
    return -1;
  }
  return v;
}

double KernelStatNs(const std::string& path, int iterations, bool faccessat_, std::string* why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *why = fmt::format("stat {}: {}", path, std::strerror(errno));
    return -1;
  }
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      if (faccessat_) {
        (void)faccessat(AT_FDCWD, path.c_str(), R_OK, 0);
      } else {
        (void)stat(path.c_str(), &st);
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
  }
  return best;
}

}  // namespace pathwarden::bench
