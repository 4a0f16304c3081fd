// Many scenarios on the real kernel under one hold of the sysctl lock, for
// callers that run thousands (the differential fuzzer).

#ifndef PATHWARDEN_SRC_KERNEL_KERNEL_SESSION_H_
#define PATHWARDEN_SRC_KERNEL_KERNEL_SESSION_H_

#include <cstdint>
#include "pathwarden/result.h"
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/kernel/kernel_server.h"
#include "src/kernel/supervisor.h"
#include "src/kernel/sysctl_guard.h"

namespace pathwarden::kernel_internal {

// KernelSession
//
// Holds the sysctl lock from Open() to destruction; sysctls are written
// only when a scenario's values differ from the current ones, and the
// host's come back when the session ends. Each Run() still gets fresh
// namespaces, a fresh tmpfs and fresh processes. Not thread-safe. While it
// is open, another session (or RunInKernel()) in another process waits for
// it, and in this process fails at once with the reason.
//
// Example:
//   auto session = KernelSession::Open();
//   if (!session) return Fail(session.error());
//   for (const Scenario& s : batch) results.push_back((*session)->Run(s, {}));
class KernelSession {
 public:
  // How supervisors are started: forked from a lean server process (the
  // default: fork costs grow with the forking process's memory), or from
  // the calling process (one scenario, where starting a server costs more).
  enum class Launch { kServer, kDirect };

  // Open()
  //
  // Fails (with the reason) when KernelUnavailableReason() is not empty or
  // the sysctl state cannot be taken over.
  static Result<std::unique_ptr<KernelSession>, std::string> Open(
      Launch launch = Launch::kServer);
  ~KernelSession();

  // Run()
  //
  // As RunInKernel(). kSkipped for another ABI, for capabilities this
  // machine cannot grant, and for devices that could reach a real driver
  // (null, zero and full are safe, and majors no driver has where modules
  // cannot be loaded).
  RunResult Run(const Scenario& s, const KernelOptions& options);

  // RunBatch()
  //
  // As Run() for each scenario of `batch`, up to `jobs` at a time (one
  // server each, every server with its own network namespace); the
  // results in the order of `batch`. Sysctls are global, so scenarios
  // with other sysctl values never run at the same time: the batch runs
  // in groups of equal values, one group after another. With kDirect, or
  // `jobs` 1, the scenarios run one by one. Servers die with the thread
  // that started them (PR_SET_PDEATHSIG), so call Run() and RunBatch()
  // from a thread that lives as long as the session.
  std::vector<RunResult> RunBatch(std::span<const Scenario* const> batch,
                                  const KernelOptions& options, int jobs);

  // launch()
  //
  // How this session starts supervisors: kDirect after a server failed to
  // start (a caller whose /proc/self/exe lacks this library, say), with
  // the reason in fallback_reason().
  Launch launch() const noexcept { return launch_; }
  const std::string& fallback_reason() const noexcept { return fallback_reason_; }

 private:
  KernelSession(std::unique_ptr<SysctlGuard> sysctl, SupervisorParams params, int abi,
                Launch launch)
      : sysctl_(std::move(sysctl)), params_(std::move(params)), abi_(abi), launch_(launch) {}

  // Destroyed before the guard: the server's supervisors are gone before
  // the host's sysctls come back.
  std::unique_ptr<SysctlGuard> sysctl_;
  std::unique_ptr<KernelServer> server_;
  // RunBatch()'s servers besides server_.
  std::vector<std::unique_ptr<KernelServer>> extra_servers_;
  SupervisorParams params_;
  int abi_;
  Launch launch_;
  std::string fallback_reason_;
};

// SkipReason()
//
// Why `s` cannot run on this kernel ("" when it can): another ABI, a
// capability outside `caps_available`, or an unsafe device number.
std::string SkipReason(const Scenario& s, int abi, uint64_t caps_available);

// KernelRulesSkipReason()
//
// Why `s` cannot run on a kernel with `running`'s rules ("" when it can):
// its `[kernel]` table names a rule this kernel answers otherwise, or one
// whose value here could not be probed. The engine runs it as written.
std::string KernelRulesSkipReason(const Scenario& s, const KernelRules& running);

// AvailableCaps()
//
// This process's permitted capabilities: what "all" means here.
uint64_t AvailableCaps();

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_KERNEL_SESSION_H_
