// explain on procfs, with the kernel as the judge (issue 31): /proc/sys
// (proc_sys_permission(): the sysctl's mode read by euid and egid,
// capabilities not counted but CAP_NET_ADMIN under net/ and
// CAP_SYS_RESOURCE under user/, no file executes, no directory takes a
// name) and the system files whose open checks only their mode; what the
// model does not hold (a process's directory, /proc/self, procfs's other
// files) is unknown, never a guess. Reads and opens only: nothing on the
// host changes (no sysctl is written: an open for writing writes
// nothing). Root only.

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <cstdio>
#include <string>
#include <vector>

#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/identity/identity.h"
#include "src/kernel/kernel_session.h"
#include "src/query/query.h"
#include "tests/host/host_tree.h"

namespace pathwarden {
namespace {

using namespace host_test;

// Every file and directory below /proc/sys, not crossing a mount (an
// automount point, binfmt_misc's, is never touched).
void Walk(const std::string& dir, uint64_t mnt, std::vector<std::string>* files,
          std::vector<std::string>* dirs) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string p = dir + "/" + n;
    struct statx stx {};
    if (statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MNT_ID,
              &stx) != 0 ||
        stx.stx_mnt_id != mnt || (stx.stx_attributes & STATX_ATTR_AUTOMOUNT))
      continue;
    if (S_ISDIR(stx.stx_mode)) {
      dirs->push_back(p);
      Walk(p, mnt, files, dirs);
    } else if (S_ISREG(stx.stx_mode)) {
      files->push_back(p);
    }
  }
}

// StandardIdentities()'s first three, then uid 1001 in group 0, a
// capability that counts under net/ and user/, and euid 0 alone.
std::vector<Who> Identities() {
  std::vector<Who> whos = StandardIdentities();
  whos.pop_back();
  Cred group0 = Cred::ForUser(1001, 1001);
  group0.SetGroups({0, 1001});
  Cred net = Cred::ForUser(1000, 1000);
  // (What this machine lets a process hold: some lack CAP_SYS_RESOURCE.)
  net.cap_effective = net.cap_permitted =
      (CapBit(kCapNetAdmin) | CapBit(kCapSysResource) | CapBit(kCapDacOverride)) &
      kernel_internal::AvailableCaps();
  Cred setuid = Cred::ForUser(1000, 1000);
  setuid.euid = setuid.suid = setuid.fsuid = 0;
  whos.push_back({"uid 1001 in group 0", group0});
  whos.push_back(
      {"uid 1000 with CAP_NET_ADMIN, CAP_SYS_RESOURCE, CAP_DAC_OVERRIDE (those it may hold)",
       net});
  whos.push_back({"euid 0, real uid 1000, no capabilities", setuid});
  return whos;
}

// Each of Identities() asks `lines`, made on the kernel: every answer the
// kernel's. The queries asked in all, or what failed.
Result<size_t, std::string> EveryIdentityAgrees(const std::vector<std::string>& lines,
                                                std::string_view what) {
  size_t total = 0;
  for (const Who& w : Identities()) {
    std::vector<Decision> decisions;
    auto compared = AskAndCompare(w.cred, {}, lines, &decisions);
    if (!compared) return Unexpected(fmt::format("{}: {}", w.name, compared.error()));
    ExpectAllAgree(*compared, lines.size(), w.name);
    size_t refused = 0;
    for (int e : compared->kernel) refused += e != 0;
    total += compared->queries;
    std::printf("%s: %zu queries on %s, %zu agree with the kernel (%zu refused)\n", w.name,
                compared->queries, std::string(what).c_str(), compared->agree, refused);
  }
  return total;
}

TEST(ProcTest, SysctlsAndSystemFilesAreTheKernelsAnswer) {
  if (geteuid() != 0) GTEST_SKIP() << "not root";
  struct statx root {};
  ASSERT_EQ(statx(AT_FDCWD, "/proc/sys", AT_NO_AUTOMOUNT, STATX_MNT_ID, &root), 0);
  std::vector<std::string> files, dirs;
  Walk("/proc/sys", root.stx_mnt_id, &files, &dirs);
  ASSERT_GT(files.size(), 200u);
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    // The ids the next_id sysctls hand out are the IPC namespace's: unknown
    // (asked below).
    if (f.ends_with("_next_id")) continue;
    for (const char* flags : {"O_RDONLY", "O_WRONLY", "O_RDWR"})
      lines.push_back(fmt::format("open {} {}", Q(f), flags));
    lines.push_back(fmt::format("access {} X_OK|AT_EACCESS", Q(f)));
  }
  for (const std::string& d : dirs) {
    lines.push_back(fmt::format("open {} O_RDONLY|O_DIRECTORY", Q(d)));
    lines.push_back(fmt::format("access {} W_OK|AT_EACCESS", Q(d)));
    lines.push_back(fmt::format("mkdir {}", Q(d + "/x")));
    lines.push_back(fmt::format("chdir {}", Q(d)));
  }
  for (const char* f : {"buddyinfo", "cgroups", "cmdline", "consoles", "cpuinfo", "crypto",
                        "devices", "diskstats", "execdomains", "filesystems", "interrupts",
                        "kallsyms", "key-users", "loadavg", "locks", "meminfo", "misc",
                        "partitions", "softirqs", "stat", "swaps", "uptime", "version", "vmstat",
                        "zoneinfo"}) {
    const std::string p = std::string("/proc/") + f;
    if (access(p.c_str(), F_OK) != 0) continue;
    for (const char* flags : {"O_RDONLY", "O_WRONLY", "O_RDWR"})
      lines.push_back(fmt::format("open {} {}", Q(p), flags));
    lines.push_back(fmt::format("access {} W_OK|AT_EACCESS", Q(p)));
  }
  for (const char* l : {"stat /proc", "open /proc O_RDONLY|O_DIRECTORY", "access /proc W_OK",
                        "chdir /proc", "chdir /proc/sys"})
    lines.push_back(l);
  auto total = EveryIdentityAgrees(lines, "/proc/sys and the system files");
  ASSERT_TRUE(total.has_value()) << total.error();
  EXPECT_GE(*total, 10000u);
}

// A process that waits until killed, as uid `uid` (all four ids), made
// not dumpable when asked; its pid, or -1.
pid_t Target(uint32_t uid, bool dumpable) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
  if (!dumpable && prctl(PR_SET_DUMPABLE, 0) != 0) _exit(1);
  for (;;) pause();
}

// A process's directory and the entries whose open checks only the mode
// and owner procfs shows (the task's ids while it is dumpable, root's
// when not): the kernel's answer for targets of several owners.
TEST(ProcTest, AProcessDirectoryAndItsPlainEntriesAreTheKernelsAnswer) {
  if (geteuid() != 0) GTEST_SKIP() << "not root";
  struct Tgt {
    const char* name;
    pid_t pid;
  };
  std::vector<Tgt> targets = {{"uid 1000", Target(1000, true)},
                              {"uid 1000, not dumpable", Target(1000, false)},
                              {"root", Target(0, true)}};
  auto kill_all = [&] {
    for (const Tgt& t : targets)
      if (t.pid > 0) {
        kill(t.pid, SIGKILL);
        waitpid(t.pid, nullptr, 0);
      }
  };
  for (const Tgt& t : targets) ASSERT_GT(t.pid, 0) << t.name;
  // Each target has taken its ids (its status says so) before asking.
  for (const Tgt& t : targets)
    for (int i = 0; i < 200; ++i) {
      std::ifstream in(fmt::format("/proc/{}/status", t.pid));
      std::string line;
      bool ready = false;
      while (std::getline(in, line))
        if (line.starts_with("Uid:")) ready = t.name[0] != 'u' || line.find("1000") != std::string::npos;
      if (ready) break;
      usleep(5000);
    }
  std::vector<std::string> lines;
  for (const Tgt& t : targets) {
    const std::string d = fmt::format("/proc/{}", t.pid);
    for (const char* l : {"open {} O_RDONLY|O_DIRECTORY", "chdir {}", "access {} W_OK|AT_EACCESS"})
      lines.push_back(fmt::format(fmt::runtime(l), Q(d)));
    lines.push_back(fmt::format("open {} O_RDONLY", Q(d + "/nope")));
    lines.push_back(fmt::format("mkdir {}", Q(d + "/x")));
    for (const char* e : {"arch_status", "autogroup", "cgroup", "cmdline", "comm",
                          "coredump_filter", "cpuset", "io", "limits", "loginuid", "oom_adj",
                          "oom_score", "oom_score_adj", "personality", "sched", "schedstat",
                          "sessionid", "stack", "stat", "statm", "status", "syscall",
                          "timerslack_ns", "wchan"}) {
      const std::string p = d + "/" + e;
      if (access(p.c_str(), F_OK) != 0) continue;
      for (const char* flags : {"O_RDONLY", "O_WRONLY", "O_RDWR"})
        lines.push_back(fmt::format("open {} {}", Q(p), flags));
      lines.push_back(fmt::format("access {} R_OK|AT_EACCESS", Q(p)));
    }
  }
  auto total = EveryIdentityAgrees(lines, "processes' directories");
  kill_all();
  ASSERT_TRUE(total.has_value()) << total.error();
  EXPECT_GE(*total, 1000u);
}

// procfs shows a task the sysctls of its own network, IPC and user
// namespaces: for a process in a network namespace of its own (unshare
// -n; nf_conntrack_max, say, is 0444 there and 0644 here), explain --pid
// answers those unknown, and the others as ever.
TEST(ProcTest, ANamespacesSysctlsAreUnknownForAProcessOfAnotherNamespace) {
  if (geteuid() != 0) GTEST_SKIP() << "not root";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char ok = unshare(CLONE_NEWNET) == 0 ? 1 : 0;
    (void)!write(ready[1], &ok, 1);
    for (;;) pause();
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  close(ready[1]);
  identity::IdentityOptions o;
  o.pid = pid;
  auto id = identity::ResolveIdentity(o);
  std::optional<Decision> net, vm, ipc;
  if (ok && id) {
    EXPECT_FALSE(id->shares_sysctl_namespaces);
    auto session = query::Session::Open(*id, {});
    if (session) {
      auto ask = [&](const char* l) { return (*session)->Ask(*query::ParseQueryLine(l), false).decision; };
      net = ask("open /proc/sys/net/ipv4/ip_forward O_WRONLY");
      ipc = ask("open /proc/sys/kernel/msgmax O_WRONLY");
      vm = ask("open /proc/sys/vm/drop_caches O_WRONLY");
    } else {
      ADD_FAILURE() << session.error();
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(ok) << "unshare(CLONE_NEWNET)";
  ASSERT_TRUE(id.has_value()) << id.error();
  ASSERT_TRUE(net && vm && ipc);
  EXPECT_TRUE(net->unknown()) << net->ToText();
  EXPECT_NE(net->reason().unknown_why.find("network namespace"), std::string::npos);
  EXPECT_TRUE(ipc->unknown()) << ipc->ToText();
  EXPECT_TRUE(vm->allowed()) << vm->ToText();
}

// What procfs decides by the process asking, or by its own open, is
// unknown; each also made on the kernel, for the record.
TEST(ProcTest, WhatProcfsDecidesItselfIsUnknown) {
  if (geteuid() != 0) GTEST_SKIP() << "not root";
  Cred u1000 = Cred::ForUser(1000, 1000);
  std::vector<std::string> lines = {
      "open /proc/self/status O_RDONLY", "open /proc/1/environ O_RDONLY",
      "open /proc/1/maps O_RDONLY",      "open /proc/sys/kernel/shm_next_id O_WRONLY",
      "open /proc/mounts O_RDONLY",
  };
  // Files whose open checks more than the mode, where this kernel has them.
  for (const char* f : {"/proc/kmsg", "/proc/kcore", "/proc/timer_list"})
    if (access(f, F_OK) == 0) lines.push_back(fmt::format("open {} O_RDONLY", f));
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective = root.cap_permitted = kernel_internal::AvailableCaps();
  for (const Cred& c : {u1000, root}) {
    std::vector<Decision> decisions;
    auto compared = AskAndCompare(c, {}, lines, &decisions);
    ASSERT_TRUE(compared.has_value()) << compared.error();
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_TRUE(decisions[i].unknown()) << lines[i] << ": " << decisions[i].ToText();
      std::printf("uid %u: %s: kernel %s; engine unknown: %s\n", c.euid, lines[i].c_str(),
                  Name(compared->kernel[i]).c_str(), decisions[i].reason().unknown_why.c_str());
    }
  }
}

}  // namespace
}  // namespace pathwarden
