// The live host's security modules: which are active and in what state
// (pathwarden/security_modules.h), read without changing anything: the
// kernel's list (lsm_list_modules(), Linux 6.8, or securityfs's `lsm`
// where it is mounted: nothing is mounted to read it), SELinux's
// `enforce`, a process's AppArmor label, and the BPF links whose program
// is an LSM program (bpf(BPF_LINK_GET_NEXT_ID), CAP_SYS_ADMIN; reading
// takes a reference for the time of the read, nothing else).
// Linux: security/lsm_syscalls.c, security/selinux/selinuxfs.c,
// security/apparmor/procattr.c, kernel/bpf/syscall.c

#ifndef PATHWARDEN_SRC_SECURITY_HOST_MODULES_H_
#define PATHWARDEN_SRC_SECURITY_HOST_MODULES_H_

#include <optional>
#include <string>
#include <vector>

#include "pathwarden/security_modules.h"

namespace pathwarden::security {

// ModuleFacts
//
// What was read of the host, each with why it could not be where it
// could not (nullopt).
struct ModuleFacts {
  std::optional<std::vector<std::string>> names;  // active, in the kernel's order
  std::string names_why;
  std::optional<std::string> selinux_enforce;  // "0" or "1"
  std::string selinux_why;
  std::optional<std::string> apparmor_label;  // "unconfined", "NAME (enforce)", ...
  std::string apparmor_why;
  // The reader's AppArmor policy namespace's level (apparmorfs's
  // .ns_level, "0" for the root namespace): a label is shown relative
  // to it, so "unconfined" below the root may still be confined by an
  // outer profile.
  std::optional<std::string> apparmor_ns_level;
  std::string apparmor_ns_why;
  std::optional<std::vector<std::string>> bpf_lsm_programs;  // attached LSM programs' names
  std::string bpf_why;
  // The process's label may change at its next exec (a traced program):
  // a label other than unconfined is then not the process's for good.
  bool labels_change = false;
  std::vector<std::string> trusted;  // --trust-lsm
};

// ReadModuleFacts()
//
// The facts of SecurityModuleSources; a stand-in root is read as files
// only (ROOT/sys/kernel/security/lsm, ROOT/sys/fs/selinux/enforce,
// ROOT/proc/PID/attr/apparmor/current) and its BPF programs cannot be
// stood in for (not known).
ModuleFacts ReadModuleFacts(const SecurityModuleSources& from);

// AssessModules()
//
// Each module's Refuses and state from the facts (the rules in
// host_modules.cc, one a module).
SecurityModules AssessModules(const ModuleFacts& f);

// LsmName()
//
// The name of an LSM id of include/uapi/linux/lsm.h ("lsm N" for one not
// known).
std::string LsmName(uint64_t id);
}  // namespace pathwarden::security

#endif  // PATHWARDEN_SRC_SECURITY_HOST_MODULES_H_
