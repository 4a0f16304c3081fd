// File: pathwarden/security_modules.h
//
// The running kernel's security modules (LSMs), and for each whether it
// could refuse what the library answers "allowed". The library models two
// of them, capabilities and Landlock; any other that is active and could
// refuse (SELinux enforcing, AppArmor confining the process, a BPF LSM
// program attached, Smack, TOMOYO, IMA, EVM, IPE for executions) turns an
// allowed answer of a host model into an unknown one that names the
// module: the library never says "ok" where a module it does not model
// may refuse. A denial stays a denial: DAC refuses before any module is
// asked (inode_permission() calls security_inode_permission() after
// generic_permission()), and Landlock's refusal stands whatever the other
// modules say (each hook runs the modules in order until one refuses; the
// errno is then the first refuser's: EACCES for Landlock, SELinux and
// AppArmor alike).
// Linux: security/security.c (call_int_hook(), lsm_list_modules()),
// include/uapi/linux/lsm.h
//
// Example:
//   auto m = Model::FromHost({});
//   if (const SecurityModules* s = m->security_modules())
//     for (const std::string& line : s->Describe()) std::cout << line << "\n";

#ifndef PATHWARDEN_SECURITY_MODULES_H_
#define PATHWARDEN_SECURITY_MODULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/decision.h"
#include "pathwarden/export.h"
#include "pathwarden/request.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// SecurityModule
//
// One active module: its name as /sys/kernel/security/lsm gives it, what
// it could refuse of what the model answers, and the state that says so.
struct SecurityModule {
  std::string name;  // "selinux", "bpf", ...; "lsm 120" for an id the library does not know
  // kNever: nothing the model answers "allowed" (a module the library
  // models, or one whose hooks act only on calls and objects the model
  // leaves unknown or does not answer: ptrace, /dev/mem, module loading);
  // kExec: an execution (exec_check); kAny: any call with a hook.
  enum class Refuses : uint8_t { kNever, kExec, kAny };
  Refuses refuses = Refuses::kAny;
  // Why: "modelled", "enforcing", "profile /usr/bin/x (enforce)", "no LSM
  // program attached", "taken to refuse nothing (--trust-lsm)".
  std::string state;
};

// SecurityModules
//
// The active modules in the kernel's order, or why they are not known
// (then any module may refuse anything).
struct SecurityModules {
  std::string unknown;  // why the active modules are not known; "" when they are
  std::vector<SecurityModule> active;

  // Why an allowed `op` is unknown: the modules that could refuse it and
  // their states ("selinux (enforcing) also decides; not modelled"), or ""
  // when none could.
  std::string WhyUnknown(Op op) const;
  // One line a module: "bpf: no LSM program attached: refuses nothing the
  // model answers".
  std::vector<std::string> Describe() const;
  // Whether some module could refuse some call the model answers.
  bool MayRefuse() const;
};

// UnknownWhereModulesMayRefuse()
//
// `d`, an answer of Unix and Landlock to a request of `op`, as the modules
// leave it: allowed where one of them could refuse is unknown, naming
// them (what Unix and Landlock said kept in the reason); a denial stays a
// denial, but its errno may be a module's that refused first (their hooks
// run during the walk and before the filesystem's own answers): unless it
// is EACCES, which theirs is too, its reason says so.
Decision UnknownWhereModulesMayRefuse(const SecurityModules& m, Op op, Decision d);

// SecurityModuleSources
//
// How the modules are read. `read` off: they are not (a file server
// deciding for its own files: the kernel's modules check the FUSE inode
// before the server is asked). `pid`: whose labels (an AppArmor
// profile), 0 for this process's (an identity asked about runs as this
// process would). `root`: a stand-in for / (tests): files only under it,
// no system call. `trusted`: modules the caller takes to refuse nothing
// (--trust-lsm: it checked, e.g. that no BPF LSM program is attached
// where reading that takes CAP_SYS_ADMIN). `labels_change`: the process
// may exec into another label (a traced program), so a label that
// confines nothing now does not settle it.
struct SecurityModuleSources {
  bool read = true;
  int pid = 0;
  std::string root;
  std::vector<std::string> trusted;
  bool labels_change = false;
};

// ReadSecurityModules()
//
// The running kernel's modules and their states, read without changing
// anything: the list from lsm_list_modules() (Linux 6.8) or securityfs's
// `lsm` where it is mounted (nothing is mounted to read it); SELinux's
// /sys/fs/selinux/enforce; the process's /proc/PID/attr/apparmor/current;
// the BPF links whose program is an LSM program (CAP_SYS_ADMIN). What
// cannot be read leaves that module able to refuse, with why.
SecurityModules ReadSecurityModules(const SecurityModuleSources& from);

// SecurityModuleNames()
//
// The modules the kernel knows by name (include/uapi/linux/lsm.h), in
// their ids' order: what --trust-lsm takes.
const std::vector<std::string>& SecurityModuleNames();

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_SECURITY_MODULES_H_
