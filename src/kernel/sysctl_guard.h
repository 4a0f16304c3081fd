// The machine-global fs.protected_* sysctls a scenario sets: one holder at a
// time across processes, and the host's values restored even after a crash.

#ifndef PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_
#define PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "pathwarden/result.h"
#include "pathwarden/sysctls.h"
#include "src/kernel/guardian.h"

namespace pathwarden::kernel_internal {

// ReadSysctls()
//
// The current values of /proc/sys/fs/protected_{symlinks,hardlinks,
// regular,fifos}.
Result<Sysctls, std::string> ReadSysctls();

// ReadHostSysctls()
//
// The host's values: read under the lock (after repairing a crash), so
// never the values of a scenario another process is running.
Result<Sysctls, std::string> ReadHostSysctls(
    const std::string& dir = kStateDir);

// SysctlGuard
//
// Holds an exclusive flock on `<dir>/sysctl.lock` for its lifetime, so that
// no two pathwarden processes run scenarios with different values at once.
// The host's values are written to `sysctl.saved` before the first change;
// Restore() and the destructor put them back and delete the file.
//
// While the values differ from the host's, a guardian process (forked at
// the first change, src/kernel/guardian.h: in a session of its own so that
// a Ctrl-C on the terminal does not reach it) waits on a pipe from the
// holder: when the holder dies however it dies (SIGINT, SIGKILL, a crash),
// the guardian, still holding the lock, writes the saved values back and
// deletes the file. Should both die, the next Acquire() puts the saved values back
// before anything else.
// Acquire() waits while another process holds the lock, and fails at once
// when this process does (waiting would never end).
//
// Example:
//   auto guard = SysctlGuard::Acquire();
//   if (!guard) return Error(guard.error());
//   if (std::string e = (*guard)->Set(s.sysctl); !e.empty()) ...
class SysctlGuard {
 public:
  static Result<std::unique_ptr<SysctlGuard>, std::string> Acquire(
      const std::string& dir = kStateDir);
  ~SysctlGuard();
  SysctlGuard(const SysctlGuard&) = delete;
  SysctlGuard& operator=(const SysctlGuard&) = delete;

  // Set()
  //
  // Makes `values` current (writing only what differs). Returns "" or the
  // reason it failed.
  std::string Set(const Sysctls& values);

  // Restore()
  //
  // Puts the host's values back and deletes the saved file; "" or why not.
  // The guard stays usable (the next Set() saves again).
  std::string Restore();

  const Sysctls& host() const noexcept { return host_; }
  // Whether Acquire() found a dead holder's values and put them back.
  bool repaired() const noexcept { return repaired_; }
  // The guardian's pid while there is one (for tests), else -1.
  pid_t guardian() const noexcept { return guardian_.pid(); }

 private:
  SysctlGuard(int lock_fd, std::string dir, Sysctls host, bool repaired)
      : lock_fd_(lock_fd),
        dir_(std::move(dir)),
        host_(host),
        current_(host),
        repaired_(repaired) {}

  std::string StartGuardian();

  int lock_fd_;
  std::string dir_;
  Sysctls host_;
  Sysctls current_;
  bool repaired_;
  bool saved_ = false;  // sysctl.saved holds host_
  Guardian guardian_;  // while the values differ from the host's
};

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_
