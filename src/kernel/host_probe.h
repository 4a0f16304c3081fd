// The real kernel's answers to read-only requests on the host's own
// paths, for an identity: credentials and Landlock layers. The oracle a
// model filled from the live machine is checked against.
// Linux: the syscalls themselves, as src/kernel/step_runner.cc makes them.

#ifndef PATHWARDEN_SRC_KERNEL_HOST_PROBE_H_
#define PATHWARDEN_SRC_KERNEL_HOST_PROBE_H_

#include <span>
#include <string>
#include <vector>

#include "pathwarden/cred.h"
#include "pathwarden/request.h"
#include "pathwarden/result.h"
#include "pathwarden/ruleset.h"

namespace pathwarden::kernel_internal {

// ProbeIdentity
//
// Who asks: `cred` exactly (real, effective, saved and fs ids, the
// supplementary groups, the effective and permitted capability sets, the
// umask) and no_new_privs, confined by `layers` in order (none:
// unconfined), in `root` and `cwd`. The child takes them as a model's
// process is set up (src/query/explain.cc, Session::Open()): chroot(root),
// then chdir(cwd) inside it, both as root before the credentials change.
// Rule paths resolve from there, as root, as a privileged launcher opens
// them; rules by Node handle are refused.
struct ProbeIdentity {
  Cred cred;
  std::vector<LandlockRuleset> layers = {};
  std::string cwd = "/";
  std::string root = "/";
};

// ProbeHost()
//
// Starts one child (a ProbeChild, src/kernel/probe_child.h: forked by
// this thread's lean probe server, or here) that takes `who` (its root and
// working directory, then TakeCred(), no_new_privs, each layer), runs
// `requests` in order as real system calls and reports each one's errno
// (0: success) in request order.
// Every request starts in `who.cwd` (a relative path resolves from it): a
// Chdir is undone after it succeeds, so each answer is that of
// Model::Evaluate() on an unchanged process.
//
// Requests (dirfd kAtFdcwd only): Stat, Lstat, Access (faccessat2),
// Readlink, Chdir, ExecCheck (execveat(..., AT_EXECVE_CHECK), which never
// executes and opens regular files only) and Open, whose descriptor is
// closed at once. An Open with O_CREAT, O_TRUNC or O_TMPFILE is refused,
// and so, unless it is O_PATH, is one whose target (found with an O_PATH
// open as the identity first) is a device, a FIFO or a socket: such opens
// reach a driver or a peer. Opening regular files for writing is allowed
// (it changes no data, but watchers see IN_OPEN / IN_CLOSE_WRITE).
//
// Errors: a refused request ("request 3: open of a character device
// /dev/null is refused: ..."), any other request type, a root or working
// directory the child cannot enter, an identity this
// process cannot grant (capabilities outside its own permitted set, as
// in a container: mask Cred::ForUser(0, 0)'s with AvailableCaps() from
// src/kernel/kernel_session.h), a layer the kernel refuses, or a child
// that dies. Nothing is reported
// then, and requests after a refused one do not run.
//
// Preconditions: the caller is root with every capability `who` needs and
// Landlock is enabled when `who` has layers. The requests are checked and
// turned into steps before the child starts; it never returns into the
// caller's code.
//
// Example:
//   ProbeIdentity alice{Cred::ForUser(1000, 1000)};
//   auto errs = ProbeHost(alice, std::vector<pathwarden::Request>{
//       Stat{.path = "/root/.bashrc"}, Open{.path = "/etc/passwd"}});
//   // *errs == {EACCES, 0} on a typical machine
Result<std::vector<int>, std::string> ProbeHost(const ProbeIdentity& who,
                                                std::span<const pathwarden::Request> requests);

// ProbeHostChanging()
//
// ProbeHost(), and with `changes` also the calls that change the tree
// (mkdir, mknod of a file, FIFO or socket, symlink, link, unlink, rmdir,
// rename, truncate, chmod, chown, lchown, opens that create or
// truncate). The caller is the one to make sure they touch only what it
// may change, and to put it back (src/query/scratch.h).
Result<std::vector<int>, std::string> ProbeHostChanging(
    const ProbeIdentity& who, std::span<const pathwarden::Request> requests, bool changes);

// ProbeHere()
//
// The requests of ProbeHostChanging(), made by this very process with
// its own credentials, namespaces and domain (no fork, nothing taken):
// for a caller whose credentials cannot be taken again exactly, such as
// a process in a user namespace whose supplementary groups do not map
// into it. A Chdir is undone after it succeeds. The same refusals and
// errors as ProbeHostChanging(); with `changes`, the caller makes sure
// they touch only what it may change.
Result<std::vector<int>, std::string> ProbeHere(std::span<const pathwarden::Request> requests,
                                                bool changes);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_HOST_PROBE_H_
