// The kernel executor's entry points: availability, the session that holds
// the sysctl lock, and one forked supervisor per scenario.

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "pathwarden/executor.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/landlock_uapi.h"
#include "src/kernel/process_server.h"
#include "src/kernel/supervisor.h"
#include "src/kernel/wire.h"

namespace pathwarden {
namespace kernel_internal {
namespace {

RunResult Status(RunResult::Status status, std::string message) {
  RunResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

// Devices whose driver is harmless to open and to ioctl: char (and the
// unregistered block) 1:3, 1:5, 1:7. Anything else might be a watchdog, a
// disk or a terminal of the host.
bool SafeDevice(NodeType t, uint32_t major, uint32_t minor) {
  if (t != NodeType::kChar && t != NodeType::kBlock) return true;
  return major == 1 && (minor == 3 || minor == 5 || minor == 7);
}

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// All of the supervisor's answer, or "" when it died first.
std::string ReadAll(int fd, int64_t deadline_ms, bool* timed_out) {
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int64_t left = deadline_ms - NowMs();
    if (left <= 0) {
      *timed_out = true;
      return out;
    }
    int r = poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      *timed_out = r == 0;
      return out;
    }
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

uint64_t AvailableCaps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return (uint64_t{data[1].permitted} << 32 | data[0].permitted) & kCapAll;
}

std::string SkipReason(const Scenario& s, int abi, uint64_t caps_available) {
  if (s.abi != abi)
    return fmt::format("needs Landlock ABI {}, this kernel has {}", s.abi, abi);
  for (const ProcessSpec& p : s.processes) {
    uint64_t missing = p.caps.value_or(0) & ~caps_available;
    for (int cap = 0; cap <= kCapLast; ++cap)
      if (missing & CapBit(cap))
        return fmt::format("{}: process \"{}\" needs {}, which this machine cannot grant",
                           s.Where(p.loc), p.name, CapName(cap));
  }
  auto unsafe = [&](const SourceLoc& loc, uint32_t major, uint32_t minor) {
    return fmt::format("{}: device {}:{} is not null, zero or full; opening it could "
                       "reach a real driver of this machine",
                       s.Where(loc), major, minor);
  };
  for (const NodeSpec& n : s.nodes)
    if (!SafeDevice(n.type, n.rdev_major, n.rdev_minor))
      return unsafe(n.loc, n.rdev_major, n.rdev_minor);
  for (const StepSpec& st : s.steps)
    if (st.op == Op::kMknod && !SafeDevice(st.mknod_type, st.rdev_major, st.rdev_minor))
      return unsafe(st.loc, st.rdev_major, st.rdev_minor);
  return "";
}

std::expected<std::unique_ptr<KernelSession>, std::string> KernelSession::Open() {
  if (std::string why = KernelUnavailableReason(); !why.empty()) return std::unexpected(why);
  std::string root = fmt::format("{}/root", kStateDir);
  auto guard = SysctlGuard::Acquire();
  if (!guard) return std::unexpected(guard.error());
  if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST)
    return std::unexpected(fmt::format("mkdir {}: {}", root, ErrnoName(errno)));
  return std::unique_ptr<KernelSession>(
      new KernelSession(std::move(*guard), AvailableCaps(), KernelAbi()));
}

RunResult KernelSession::Run(const Scenario& s, const KernelOptions& options) {
  if (std::string why = SkipReason(s, abi_, caps_available_); !why.empty())
    return Status(RunResult::Status::kSkipped, why);
  if (std::string e = sysctl_->Set(s.sysctl); !e.empty())
    return Status(RunResult::Status::kError, fmt::format("{}: internal: sysctl: {}", s.file, e));
  return RunSupervisor(s, options);
}

RunResult KernelSession::RunSupervisor(const Scenario& s, const KernelOptions& options) {
  auto internal = [&](std::string_view what, int err) {
    return Status(RunResult::Status::kError,
                  fmt::format("{}: internal: {}: {}", s.file, what, ErrnoName(err)));
  };
  SupervisorParams params;
  params.mount_dir = fmt::format("{}/root", kStateDir);
  params.caps_available = caps_available_;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return internal("pipe2", errno);
  pid_t pid = ForkTied();
  if (pid == 0) {
    // Keep only the answer pipe (and stdio): in particular the lock's fd,
    // or the lock would outlive this session in a stray process.
    close(pipefd[0]);
    int out = pipefd[1] == kServerSock ? pipefd[1] : dup2(pipefd[1], kServerSock);
    syscall(SYS_close_range, kServerSock + 1, ~0u, 0);
    if (out < 0) _exit(1);
    std::string bytes = EncodeResult(Supervise(s, options, params));
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = write(out, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(1);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  int fork_err = errno;
  close(pipefd[1]);
  if (pid < 0) {
    close(pipefd[0]);
    return internal("fork the supervisor", fork_err);
  }
  // Every child answers within its own timeout; this bounds the rest.
  int64_t budget = 60000 + 11000 * static_cast<int64_t>(s.steps.size() + s.processes.size() + 1);
  bool timed_out = false;
  std::string bytes = ReadAll(pipefd[0], NowMs() + budget, &timed_out);
  close(pipefd[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  RunResult r;
  if (!timed_out && DecodeResult(bytes, &r)) return r;
  if (timed_out) return internal("the supervisor did not finish", ETIMEDOUT);
  if (WIFSIGNALED(status))
    return Status(RunResult::Status::kError,
                  fmt::format("{}: internal: the supervisor died of signal {}", s.file,
                              WTERMSIG(status)));
  return Status(RunResult::Status::kError,
                fmt::format("{}: internal: the supervisor gave no answer (exit {})", s.file,
                            WEXITSTATUS(status)));
}

}  // namespace kernel_internal

std::string KernelUnavailableReason() {
  if (geteuid() != 0) return "not root (the kernel executor needs namespaces, mounts and setuid)";
  int abi = KernelAbi();
  if (abi < 0) return fmt::format("Landlock is not available: {}", ErrnoName(-abi));
  return "";
}

int KernelAbi() {
  int abi = kernel_internal::LandlockCreateRuleset(nullptr, 0, landlock::kCreateRulesetVersion);
  return abi < 0 ? -errno : abi;
}

RunResult RunInKernel(const Scenario& s, const KernelOptions& options) {
  using kernel_internal::Status;
  if (std::string why = KernelUnavailableReason(); !why.empty())
    return Status(RunResult::Status::kSkipped, why);
  // Skips need no lock: decide them before waiting for one.
  if (std::string why = kernel_internal::SkipReason(s, KernelAbi(), kernel_internal::AvailableCaps());
      !why.empty())
    return Status(RunResult::Status::kSkipped, why);
  auto session = kernel_internal::KernelSession::Open();
  if (!session)
    return Status(RunResult::Status::kError,
                  fmt::format("{}: internal: {}", s.file, session.error()));
  return (*session)->Run(s, options);
}

}  // namespace pathwarden
