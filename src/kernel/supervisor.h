// The per-scenario supervisor: private namespaces, the scenario's tmpfs as
// its root, one child per process, the steps dispatched in order.

#ifndef PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_
#define PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"

namespace pathwarden::kernel_internal {

struct SupervisorParams {
  // An existing directory of the host; the scenario's tmpfs is mounted on
  // it inside the private mount namespace only.
  std::string mount_dir;
  // The capabilities this machine can grant ("all" in a scenario).
  uint64_t caps_available = 0;
  // How long one child may take to answer (setup or one step).
  int32_t reply_timeout_ms = 10000;
  // Unshare a network namespace of its own (with `lo` up). False when the
  // forking process already sits in a private one made for the executor.
  bool own_netns = true;
};

// RunSupervised()
//
// Runs one scenario in a supervisor forked for it. The supervisor
// unshares the mount namespace (and the network one, see `own_netns`),
// makes every mount private, mounts a fresh tmpfs and makes it the root
// (pivot_root, the host's tree detached, so no step can reach it), builds
// the tree, starts the processes, runs the steps, captures the tree when
// asked, and sends the result; only then does it kill every child and
// exit, and the namespaces die with it. With `wait_for_teardown` false the
// result returns before that, and the caller reaps the supervisor later
// (waitpid). A supervisor that dies or hangs before answering gives a
// kError saying so.
RunResult RunSupervised(const Scenario& s, const KernelOptions& options,
                        const SupervisorParams& params, bool wait_for_teardown);

// ResultBudgetMs()
//
// How long a whole run may take: every child answers within its own
// timeout, and this bounds the rest.
int64_t ResultBudgetMs(const Scenario& s, const SupervisorParams& params);

// Skipped() / Failed()
//
// A RunResult that ran nothing: kSkipped with the reason, or kError with
// the message ("file:line:col: ..." or "file: internal: ...").
RunResult Skipped(std::string reason);
RunResult Failed(std::string message);

// LoopbackUp()
//
// Brings `lo` of the current network namespace up: 0 or the errno.
int LoopbackUp();

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_
