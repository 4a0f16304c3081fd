// The per-scenario supervisor: private namespaces, the scenario's tmpfs as
// its root, one child per process, the steps dispatched in order.

#ifndef PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_
#define PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_

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
  int reply_timeout_ms = 10000;
};

// Supervise()
//
// Runs in a process forked for this one scenario and changes it for good:
// unshares the mount and network namespaces, makes every mount private,
// brings `lo` up, mounts a fresh tmpfs and makes it the root (pivot_root,
// the host's tree detached, so no step can reach it), builds the tree,
// starts the processes, runs the steps, kills every child, and captures the
// tree when asked. The namespaces die with the process.
RunResult Supervise(const Scenario& s, const KernelOptions& options,
                    const SupervisorParams& params);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_SUPERVISOR_H_
