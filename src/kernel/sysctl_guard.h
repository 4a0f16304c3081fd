// The machine-global fs.protected_* sysctls a scenario sets: one holder at a
// time across processes, and the host's values restored even after a crash.

#ifndef PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_
#define PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_

#include <array>
#include <expected>
#include <memory>
#include <string>

namespace pathwarden::kernel_internal {

// Where the lock and the saved host values live.
inline constexpr const char* kStateDir = "/run/pathwarden";

using SysctlValues = std::array<int, 4>;  // in kSysctlNames order

// ReadSysctls()
//
// The current values of /proc/sys/fs/protected_{symlinks,hardlinks,
// regular,fifos}.
std::expected<SysctlValues, std::string> ReadSysctls();

// ReadHostSysctls()
//
// The host's values: read under the lock (after repairing a crash), so
// never the values of a scenario another process is running.
std::expected<SysctlValues, std::string> ReadHostSysctls(
    const std::string& dir = kStateDir);

// SysctlGuard
//
// Holds an exclusive flock on `<dir>/sysctl.lock` for its lifetime, so that
// no two pathwarden processes run scenarios with different values at once.
// On acquisition, a `<dir>/sysctl.saved` left by a crashed holder is put
// back first. The host's values are written to `sysctl.saved` before the
// first change; the destructor restores them and deletes the file.
// Acquire() waits while another process holds the lock, and fails at once
// when this process does (waiting would never end).
//
// Example:
//   auto guard = SysctlGuard::Acquire();
//   if (!guard) return Error(guard.error());
//   if (std::string e = (*guard)->Set(s.sysctl); !e.empty()) ...
class SysctlGuard {
 public:
  static std::expected<std::unique_ptr<SysctlGuard>, std::string> Acquire(
      const std::string& dir = kStateDir);
  ~SysctlGuard();
  SysctlGuard(const SysctlGuard&) = delete;
  SysctlGuard& operator=(const SysctlGuard&) = delete;

  // Set()
  //
  // Makes `values` current (writing only what differs). Returns "" or the
  // reason it failed.
  std::string Set(const SysctlValues& values);

  // Restore()
  //
  // Puts the host's values back and deletes the saved file; "" or why not.
  // The guard stays usable (the next Set() saves again).
  std::string Restore();

  const SysctlValues& host() const noexcept { return host_; }

 private:
  SysctlGuard(int lock_fd, std::string dir, SysctlValues host)
      : lock_fd_(lock_fd), dir_(std::move(dir)), host_(host), current_(host) {}

  int lock_fd_;
  std::string dir_;
  SysctlValues host_;
  SysctlValues current_;
  bool saved_ = false;  // sysctl.saved holds host_
};

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_SYSCTL_GUARD_H_
