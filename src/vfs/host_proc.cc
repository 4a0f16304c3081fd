// The live host's procfs: what the model decides there, by path below its
// root. /proc/sys follows proc_sys_permission() (kInodeProcSys); the
// system files whose open checks nothing but their mode follow
// generic_permission() like any file; the rest is opaque with the reason:
// /proc/self and /proc/thread-self name the asking task, a process's
// directory follows ptrace access and its entries their own opens, and
// any other file its proc_ops, which may check more than its mode.
// Linux: fs/proc/root.c, base.c proc_pid_permission(), proc_sysctl.c
// proc_sys_permission(), generic.c, and each file's proc_ops.

#include <sys/stat.h>

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

// The entries of a process's directory whose open checks nothing but the
// mode and owner procfs shows (the task's euid and egid while it is
// dumpable, else root: task_dump_owner(), refreshed by getattr): what a
// reader then reads may depend on ptrace access (io, wchan, stack, ...),
// whether it may open them does not. The rest (environ, auxv, mem, maps,
// pagemap: ptrace access at open; fd, ns, cwd, exe, root: at the walk;
// mountinfo: EINVAL for a zombie; setgroups: CAP_SYS_ADMIN to write; attr:
// the security modules) is unknown. Linux: fs/proc/base.c tgid_base_stuff.
constexpr std::string_view kPlainPidEntries[] = {
    "arch_status", "autogroup",  "cgroup",  "cmdline",       "comm",          "coredump_filter",
    "cpuset",      "io",         "limits",  "loginuid",      "oom_adj",       "oom_score",
    "oom_score_adj", "personality", "sched", "schedstat",    "sessionid",     "stack",
    "stat",        "statm",      "status",  "syscall",       "timerslack_ns", "wchan"};

// The IPC namespace's sysctls in kernel/ (ipc/ipc_sysctl.c).
bool IsIpcSysctl(std::string_view rel) {
  for (std::string_view n : {"shmmax", "shmall", "shmmni", "shm_rmid_forced", "msgmax", "msgmni",
                             "auto_msgmni", "msgmnb", "sem", "sem_next_id", "msg_next_id",
                             "shm_next_id"})
    if (rel.starts_with("sys/kernel/") && rel.substr(11) == n) return true;
  return false;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

uint32_t HostBackend::ProcFlags(const SbInfo& sb, const Found& f, std::string* why) {
  std::string_view rel = f.path;
  if (sb.proc_root.empty() || !rel.starts_with(sb.proc_root) ||
      (rel.size() > sb.proc_root.size() && rel[sb.proc_root.size()] != '/' &&
       !sb.proc_root.ends_with('/'))) {
    *why = "a procfs name not read through the mount of procfs this reader classifies it by";
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
    // The sysctls procfs picks by the asking task's namespaces
    // (net_ctl_header_lookup(), set_lookup() of ipc_sysctl.c, mq_sysctl.c,
    // ucount.c): their modes and the root they compare with are that
    // namespace's.
    auto under = [&](std::string_view dir) {
      return rel == dir || (rel.starts_with(dir) && rel[dir.size()] == '/');
    };
    const std::string_view ns = under("sys/net")            ? "network"
                                : under("sys/user")         ? "user"
                                : under("sys/fs/mqueue")    ? "IPC"
                                : IsIpcSysctl(rel)          ? "IPC"
                                                            : "";
    if (!ns.empty()) {
      const std::optional<bool>& initial = ns == "network" ? sb.proc_net
                                           : ns == "user"  ? sb.proc_user
                                                           : sb.proc_ipc;
      if (!sb.proc_same_ns || initial != true) {
        *why = fmt::format(
            "/proc/{} is a sysctl of the asking task's {} namespace, whose mode and owner are "
            "that namespace's (sysctl_perm()): {}; not modelled",
            rel, ns,
            !sb.proc_same_ns ? "the askers are not known to share this reader's namespaces"
                             : "this reader's is not the initial user namespace's");
        return 0;
      }
    }
    if (under("sys/net")) flags |= kInodeProcSysNet;
    if (under("sys/user")) flags |= kInodeProcSysUser;
    if (rel == "sys/kernel/msg_next_id" || rel == "sys/kernel/sem_next_id" ||
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
  if (AllDigits(first)) {
    // The directory: proc_pid_permission(), generic where hidepid= is 0
    // (WhyNotModelled() keeps the others out); immutable (a write to it
    // is EPERM), which statx does not show.
    if (rel == first) return S_ISDIR(f.mode) ? kInodeImmutable : 0;
    const std::string_view entry = rel.substr(first.size() + 1);
    if (std::find(std::begin(kPlainPidEntries), std::end(kPlainPidEntries), entry) !=
        std::end(kPlainPidEntries))
      return 0;
    *why = fmt::format("/proc/{} follows the process's ptrace access, its own open or its "
                       "namespaces (ptrace_may_access(), proc_mem_open(), ...); not modelled",
                       rel);
    return 0;
  }
  if (rel == first && std::find(std::begin(kPlainFiles), std::end(kPlainFiles), first) !=
                          std::end(kPlainFiles))
    return 0;
  if (S_ISLNK(f.mode)) {
    *why = fmt::format("/proc/{} is a procfs link to \"{}\", which may name the asking task's own "
                       "directory; not modelled",
                       rel, f.link);
    return 0;
  }
  *why = fmt::format("/proc/{} is procfs's own: its open and reads may check more than its mode "
                     "(its proc_ops); not modelled",
                     rel);
  return 0;
}

}  // namespace pathwarden::vfs
