// The calling process takes on a set of credentials: the ids, the groups
// and the capability sets, in the order a privileged launcher sets them.
// Linux: kernel/sys.c (setres[ug]id, setfs[ug]id), kernel/capability.c

#ifndef PATHWARDEN_SRC_KERNEL_CREDENTIALS_H_
#define PATHWARDEN_SRC_KERNEL_CREDENTIALS_H_

#include <cstdint>

#include "pathwarden/cred.h"

namespace pathwarden::kernel_internal {

// SetCaps()
//
// capset() of the effective and permitted sets (inheritable empty); 0 or
// -1 with errno set.
int SetCaps(uint64_t effective, uint64_t permitted);

// TakeCred()
//
// Makes the calling process (root, with every capability it needs) run
// with `cred`: setgroups(), setresgid(), setresuid(), setfsgid(),
// setfsuid(), then capset() of exactly `cred`'s effective and permitted
// sets. Changing the uids clears the effective set (and the fs uid
// follows the euid), so the effective set is raised again for the fs ids
// and set last. The umask is the caller's business. Returns 0, or the
// errno of the call that failed with *failed_call naming it ("setresuid");
// a process that fails is left half-changed and should exit.
//
// The euid change also clears the death signal: ForkTied() children
// rearm it (RearmDeathSignal()).
// With `set_groups` false the groups stay as they are (a process in a new
// user namespace keeps its groups, which need not map there).
int TakeCred(const Cred& cred, const char** failed_call, bool set_groups = true);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_CREDENTIALS_H_
