// The tracer: seccomp's SECCOMP_RET_TRACE for the modelled calls, ptrace
// for their entries and exits, the whole process tree followed.

#include "src/trace/tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "pathwarden/errno.h"

namespace pathwarden::trace {
namespace {

// The seccomp filter's data for a call of another ABI (i386, x32): the
// decoders cannot read it, so it is reported, never passed off.
constexpr uint32_t kBadArch = 1;

}  // namespace

bool Memory::Bytes(uint64_t addr, void* out, size_t n) const {
  struct iovec local = {out, n};
  struct iovec remote = {reinterpret_cast<void*>(addr), n};
  return process_vm_readv(tid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

bool Memory::String(uint64_t addr, size_t max, std::string* out, bool* truncated) const {
  out->clear();
  *truncated = false;
  if (addr == 0) return false;
  constexpr uint64_t kPage = 4096;
  char buf[kPage];
  while (out->size() < max) {
    // Up to the end of the page, so that no read crosses into one that
    // may be unmapped.
    size_t n = kPage - (addr % kPage);
    n = std::min<size_t>(n, max - out->size());
    struct iovec local = {buf, n};
    struct iovec remote = {reinterpret_cast<void*>(addr), n};
    const ssize_t got = process_vm_readv(tid_, &local, 1, &remote, 1, 0);
    if (got <= 0) return false;
    const void* nul = std::memchr(buf, 0, static_cast<size_t>(got));
    if (nul != nullptr) {
      out->append(buf, static_cast<const char*>(nul) - buf);
      return true;
    }
    out->append(buf, static_cast<size_t>(got));
    addr += static_cast<uint64_t>(got);
  }
  *truncated = true;
  return true;
}

const std::vector<int>& TracedSyscalls() {
  static const std::vector<int> kCalls = {
      // Files and directories.
      SYS_open, SYS_openat, SYS_openat2, SYS_creat, SYS_stat, SYS_lstat, SYS_newfstatat,
      SYS_statx, SYS_access, SYS_faccessat, SYS_faccessat2, SYS_execve, SYS_execveat,
      SYS_mkdir, SYS_mkdirat, SYS_mknod, SYS_mknodat, SYS_symlink, SYS_symlinkat, SYS_link,
      SYS_linkat, SYS_unlink, SYS_unlinkat, SYS_rmdir, SYS_rename, SYS_renameat,
      SYS_renameat2, SYS_truncate, SYS_ftruncate, SYS_chmod, SYS_fchmod, SYS_fchmodat,
      452 /* fchmodat2 */, SYS_chown, SYS_fchown, SYS_lchown, SYS_fchownat, SYS_readlink,
      SYS_readlinkat, SYS_chdir, SYS_fchdir, SYS_chroot, SYS_mount, SYS_umount2,
      SYS_utimensat, SYS_fallocate, SYS_ioctl, SYS_pivot_root, 429 /* move_mount */,
      442 /* mount_setattr */,
      // Sockets and signals.
      SYS_bind, SYS_connect, SYS_kill, SYS_tgkill, SYS_tkill,
      // What the model must follow: credentials, Landlock, io_uring (whose
      // calls are invisible here), descriptors copied (dup, dup2, dup3,
      // and fcntl's F_DUPFD and F_DUPFD_CLOEXEC only: BuildFilter()), whose
      // copies of a descriptor opened where a denial was predicted are
      // consequences of it too. A file's opener is found with kcmp() when
      // asked.
      SYS_dup, SYS_dup2, SYS_dup3, SYS_setuid, SYS_setgid, SYS_setreuid, SYS_setregid, SYS_setresuid, SYS_setresgid,
      SYS_setfsuid, SYS_setfsgid, SYS_setgroups, SYS_capset, SYS_prctl,
      444 /* landlock_create_ruleset */, 445 /* landlock_add_rule */,
      446 /* landlock_restrict_self */, SYS_io_uring_setup};
  return kCalls;
}

namespace {

// The filter: SECCOMP_RET_TRACE for the traced calls, and for every call
// of another ABI.
Result<scmp_filter_ctx, std::string> BuildFilter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return Unexpected(std::string("seccomp_init failed"));
  auto fail = [&](const std::string& what, int rc) -> Result<scmp_filter_ctx, std::string> {
    seccomp_release(ctx);
    return Unexpected(fmt::format("{}: {}", what, ErrnoName(-rc)));
  };
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRACE(kBadArch)))
    return fail("seccomp_attr_set(BADARCH)", rc);
  for (int nr : TracedSyscalls()) {
    const int rc = seccomp_rule_add(ctx, SCMP_ACT_TRACE(0), nr, 0);
    if (rc) return fail(fmt::format("seccomp_rule_add({})", nr), rc);
  }
  // fcntl() is frequent: only its copies stop.
  for (const int cmd : {F_DUPFD, F_DUPFD_CLOEXEC}) {
    // (The command is an int: its upper half is whatever the caller left.)
    const int rc = seccomp_rule_add(
        ctx, SCMP_ACT_TRACE(0), SYS_fcntl, 1,
        SCMP_A1(SCMP_CMP_MASKED_EQ, scmp_datum_t{0xffffffff}, static_cast<scmp_datum_t>(cmd)));
    if (rc) return fail(fmt::format("seccomp_rule_add(fcntl, {})", cmd), rc);
  }
  return ctx;
}

// Loads the filter: without no_new_privs when the process may (it would
// change what setuid programs do), with it otherwise.
int LoadFilter(scmp_filter_ctx ctx) {
  // The kernel's own errno (libseccomp otherwise reports every refusal
  // as ECANCELED, and the EACCES of a process without CAP_SYS_ADMIN would
  // never be retried with no_new_privs).
  seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  int rc = seccomp_load(ctx);
  if (rc == -EACCES) {
    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
    rc = seccomp_load(ctx);
  }
  return rc;
}

[[noreturn]] void Die(int report_fd, int status, const std::string& msg) {
  const std::string line = "pathwarden trace: " + msg + "\n";
  (void)!write(report_fd, line.data(), line.size());
  _exit(status);
}

[[noreturn]] void Child(const TraceOptions& o, scmp_filter_ctx filter, int report_fd) {
  auto die = [&](int status, const std::string& msg) { Die(report_fd, status, msg); };
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0)
    die(125, "ptrace(PTRACE_TRACEME): " + ErrnoName(errno));
  raise(SIGSTOP);
  if (o.before_exec) {
    if (std::string msg = o.before_exec(); !msg.empty()) die(125, msg);
  }
  if (int rc = LoadFilter(filter)) die(125, "cannot load the seccomp filter: " + ErrnoName(-rc));
  std::vector<char*> argv;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  const int e = errno;
  if (e == ENOENT) die(127, o.argv[0] + ": command not found");
  Die(report_fd, 126, fmt::format("cannot execute {}: {}", o.argv[0], std::strerror(e)));
}

Stop ReadStop(pid_t tid, pid_t pid) {
  Stop s;
  s.tid = tid;
  s.pid = pid;
  struct user_regs_struct r;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0) return s;
  s.nr = static_cast<long>(r.orig_rax);
  s.args = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
  s.ret = static_cast<long>(r.rax);
  return s;
}

// The thread group of `tid` (/proc/TID/status "Tgid:").
pid_t TgidOf(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", tid);
  FILE* f = std::fopen(path, "re");
  if (!f) return tid;
  char line[256];
  pid_t tgid = tid;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "Tgid: %d", &tgid) == 1) break;
  std::fclose(f);
  return tgid;
}

struct Thread {
  pid_t pid = 0;
  bool announced = false;  // the observer was told of it
  bool held = false;       // its first stop waits for its creation event
  bool fresh = false;      // its first stop (SIGSTOP) is still to come
  bool in_call = false;    // an entry was seen, its exit not yet
  Stop pending;
};

}  // namespace

Result<int, std::string> RunTraced(const TraceOptions& options, Observer& observer) {
  if (options.argv.empty()) return Unexpected(std::string("no command to trace"));
  auto filter = BuildFilter();
  if (!filter) return Unexpected(filter.error());
  const pid_t child = fork();
  if (child < 0) {
    seccomp_release(*filter);
    return Unexpected("fork: " + ErrnoName(errno));
  }
  if (child == 0) Child(options, *filter, STDERR_FILENO);
  seccomp_release(*filter);

  int status = 0;
  if (waitpid(child, &status, __WALL) != child || !WIFSTOPPED(status)) {
    return Unexpected(std::string("the child did not stop for the tracer"));
  }
  const long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD |
                    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
                    PTRACE_O_TRACEEXEC;
  if (ptrace(PTRACE_SETOPTIONS, child, nullptr, reinterpret_cast<void*>(opts)) != 0) {
    const int e = errno;
    kill(child, SIGKILL);
    waitpid(child, nullptr, __WALL);
    return Unexpected("ptrace(PTRACE_SETOPTIONS): " + ErrnoName(e));
  }
  std::map<pid_t, Thread> threads;
  Thread first;
  first.pid = child;
  first.announced = true;
  threads[child] = first;
  observer.NewThread(child, child, 0, false);
  ptrace(PTRACE_CONT, child, nullptr, nullptr);

  int exit_status = 0;
  auto resume = [&](pid_t tid, int sig) {
    auto it = threads.find(tid);
    const bool in_call = it != threads.end() && it->second.in_call;
    ptrace(in_call ? PTRACE_SYSCALL : PTRACE_CONT, tid, nullptr,
           reinterpret_cast<void*>(static_cast<long>(sig)));
  };
  while (!threads.empty()) {
    const pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (tid == child)
        exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (threads.erase(tid)) observer.Gone(tid);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    auto it = threads.find(tid);
    if (it == threads.end()) {
      // A new thread or process stopping before its creator's event:
      // held until that event says whose it is.
      Thread t;
      t.pid = TgidOf(tid);
      t.held = true;
      threads[tid] = t;
      continue;
    }
    Thread& t = it->second;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
      // The call, its arguments and the filter's data in one request.
      struct __ptrace_syscall_info info;
      Stop s;
      s.tid = tid;
      s.pid = t.pid;
      if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) > 0 &&
          info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
        s.nr = static_cast<long>(info.seccomp.nr);
        for (int i = 0; i < 6; ++i) s.args[static_cast<size_t>(i)] = info.seccomp.args[i];
        if (info.seccomp.ret_data == kBadArch || info.arch != AUDIT_ARCH_X86_64) s.nr = -2;
      } else {
        s = ReadStop(tid, t.pid);
      }
      const Memory mem(tid);
      t.in_call = observer.Entry(s, mem);
      if (t.in_call) t.pending = s;
      resume(tid, 0);
      continue;
    }
    if (sig == (SIGTRAP | 0x80)) {
      if (t.in_call) {
        struct __ptrace_syscall_info info;
        if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) > 0 &&
            info.op == PTRACE_SYSCALL_INFO_EXIT)
          t.pending.ret = static_cast<long>(info.exit.rval);
        t.in_call = false;
        const Memory mem(tid);
        observer.Exit(t.pending, mem);
      }
      resume(tid, 0);
      continue;
    }
    if (sig == SIGTRAP && (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
                           event == PTRACE_EVENT_CLONE)) {
      unsigned long msg = 0;
      ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg);
      const pid_t new_tid = static_cast<pid_t>(msg);
      const bool thread = event == PTRACE_EVENT_CLONE && TgidOf(new_tid) == t.pid;
      const pid_t new_pid = thread ? t.pid : new_tid;
      observer.NewThread(new_tid, new_pid, tid, thread);
      auto n = threads.find(new_tid);
      if (n == threads.end()) {
        Thread n_t;
        n_t.pid = new_pid;
        n_t.announced = true;
        n_t.fresh = true;
        threads[new_tid] = n_t;
      } else {
        n->second.pid = new_pid;
        n->second.announced = true;
        if (n->second.held) {
          n->second.held = false;
          ptrace(PTRACE_CONT, new_tid, nullptr, nullptr);
        }
      }
      resume(tid, 0);
      continue;
    }
    if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
      unsigned long former = 0;
      ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former);
      const pid_t old_tid = static_cast<pid_t>(former);
      if (old_tid != tid) {
        // A thread other than the leader called execve: it now has the
        // leader's id, and the leader is gone.
        auto o = threads.find(old_tid);
        if (o != threads.end()) {
          t.pending = o->second.pending;
          t.pending.tid = tid;
          t.in_call = o->second.in_call;
          threads.erase(o);
          observer.Gone(old_tid);
        }
      }
      resume(tid, 0);
      continue;
    }
    if (event != 0) {  // another event (PTRACE_EVENT_EXIT, STOP): go on
      resume(tid, 0);
      continue;
    }
    // A new thread's first stop, after its creation event.
    if (sig == SIGSTOP && t.fresh) {
      t.fresh = false;
      resume(tid, 0);
      continue;
    }
    // A group-stop (PTRACE_GETSIGINFO refuses it) resumes; a signal is
    // delivered.
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0 && errno == EINVAL) {
      resume(tid, 0);
      continue;
    }
    resume(tid, sig);
  }
  return exit_status;
}

}  // namespace pathwarden::trace
