// The live host's procfs: what the model decides there, by path below its
// root. /proc/sys follows proc_sys_permission() (kInodeProcSys); the
// system files whose open checks nothing but their mode follow
// generic_permission() like any file; the rest is opaque with the reason:
// /proc/self and /proc/thread-self name the asking task, a process's
// directory follows ptrace access and its entries their own opens, and
// any other file its proc_ops, which may check more than its mode.
// Linux: fs/proc/root.c, base.c proc_pid_permission(), proc_sysctl.c
// proc_sys_permission(), generic.c, and each file's proc_ops.

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "src/vfs/host.h"

namespace pathwarden::vfs {
namespace {

// The system files of /proc whose open (proc_ops->proc_open, or the
// seq_file one) checks nothing but the mode: what a reader sees in them
// may depend on its capabilities (addresses in modules and kallsyms),
// whether it may open them does not. Each is compared with the kernel
// for several identities (tests/host/proc_test.cc).
constexpr std::string_view kPlainFiles[] = {
    "buddyinfo", "cgroups",    "cmdline",     "consoles",   "cpuinfo",   "crypto",
    "devices",   "diskstats",  "execdomains", "filesystems", "interrupts", "kallsyms",
    "key-users", "loadavg",    "locks",       "meminfo",    "misc",      "partitions",
    "softirqs",  "stat",       "swaps",       "uptime",     "version",   "vmstat",
    "zoneinfo"};

}  // namespace

uint32_t HostBackend::ProcFlags(const SbInfo& sb, const Found& f, std::string* why) {
  std::string_view rel = f.path;
  if (sb.proc_root.empty() || !rel.starts_with(sb.proc_root)) {
    *why = "a procfs name not read through its root";
    return 0;
  }
  rel.remove_prefix(sb.proc_root.size());
  while (rel.starts_with('/')) rel.remove_prefix(1);
  if (rel.empty()) return 0;  // the root: generic, r-xr-xr-x
  const std::string_view first = rel.substr(0, rel.find('/'));
  // A directory the sysctl core keeps empty for a filesystem to mount on
  // (register_sysctl_mount_point()): empty_dir_inode_operations, no
  // ->permission of its own: generic.
  if (rel == "sys/fs/binfmt_misc") return 0;
  if (first == "sys") {
    uint32_t flags = kInodeProcSys;
    if (rel.starts_with("sys/net/") || rel == "sys/net") {
      if (sb.proc_net != true) {
        *why = "a network sysctl of a network namespace not of the initial user namespace: "
               "CAP_NET_ADMIN over that namespace decides (net_ctl_permissions()), which is not "
               "shown";
        return 0;
      }
      flags |= kInodeProcSysNet;
    } else if (rel.starts_with("sys/user/") || rel == "sys/user") {
      if (sb.proc_user != true) {
        *why = "a user namespace sysctl seen from inside a user namespace: CAP_SYS_RESOURCE over "
               "it decides (set_permissions()); not modelled";
        return 0;
      }
      flags |= kInodeProcSysUser;
    } else if (rel == "sys/kernel/msg_next_id" || rel == "sys/kernel/sem_next_id" ||
               rel == "sys/kernel/shm_next_id") {
      *why = fmt::format("/proc/{} is writable with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE over "
                         "its IPC namespace's owner (ipc_permissions()); not modelled",
                         rel);
      return 0;
    }
    return flags;
  }
  if (first == "self" || first == "thread-self") {
    *why = fmt::format("/proc/{} names the asking task (proc_self_get_link()), not the process "
                       "that read it; not modelled",
                       first);
    return 0;
  }
  if (std::all_of(first.begin(), first.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    *why = "a process's directory in procfs: entering it, and each of its entries, follows the "
           "process's ids, dumpability and ptrace access (proc_pid_permission(), "
           "ptrace_may_access()); not modelled";
    return 0;
  }
  if (rel == first && std::find(std::begin(kPlainFiles), std::end(kPlainFiles), first) !=
                          std::end(kPlainFiles))
    return 0;
  *why = fmt::format("/proc/{} is procfs's own: its open and reads may check more than its mode "
                     "(its proc_ops); not modelled",
                     rel);
  return 0;
}

}  // namespace pathwarden::vfs
