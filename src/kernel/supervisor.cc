// The per-scenario supervisor: isolation, processes started in file order,
// each step sent to the child of its process, and a teardown that leaves nothing.

#include "src/kernel/supervisor.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/kernel/codec.h"
#include "src/kernel/process_server.h"
#include "src/kernel/tree_builder.h"
#include "src/kernel/tree_capture.h"
#include "src/kernel/wire.h"

namespace pathwarden::kernel_internal {

RunResult Skipped(std::string reason) {
  RunResult r;
  r.status = RunResult::Status::kSkipped;
  r.message = std::move(reason);
  return r;
}

RunResult Failed(std::string message) {
  RunResult r;
  r.status = RunResult::Status::kError;
  r.message = std::move(message);
  return r;
}

int LoopbackUp() {
  int so = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (so < 0) return errno;
  ifreq ifr{};
  std::strcpy(ifr.ifr_name, "lo");
  int err = 0;
  if (ioctl(so, SIOCGIFFLAGS, &ifr) != 0) {
    err = errno;
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (ioctl(so, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  close(so);
  return err;
}

namespace {

class Supervisor {
 public:
  Supervisor(const Scenario& s, const KernelOptions& o, const SupervisorParams& p)
      : s_(s), o_(o), p_(p), table_(ProcessTable::For(s, p.caps_available)),
        kids_(table_.procs.size()) {}

  // The result goes out before the teardown: the caller moves on while
  // the children die.
  void Run(int out_fd) {
    RunResult res = Execute();
    // A caller gone meanwhile must not kill this process before its
    // teardown (the children are forked already: their dispositions stay).
    signal(SIGPIPE, SIG_IGN);
    ByteWriter w;
    EncodeResult(res, &w);
    (void)WriteFrame(out_fd, w.Take());
    close(out_fd);
    Teardown();
  }

 private:
  struct Child {
    pid_t pid = -1;
    int sock = -1;
  };

  RunResult Execute() {
    if (std::string e = Isolate(); !e.empty()) return Failed(e);
    if (std::string e = BuildTree(s_); !e.empty()) return Failed(e);
    RunResult res;
    for (size_t i = 0; i < table_.procs.size(); ++i)
      if (std::string e = StartProcess(static_cast<int>(i)); !e.empty()) return Failed(e);
    if (std::string e = RunSteps(&res); !e.empty()) return Failed(e);
    if (o_.capture_tree) {
      auto tree = CaptureTree();
      if (!tree) return Failed(fmt::format("{}: internal: capture: {}", s_.file, tree.error()));
      res.tree = std::move(*tree);
    }
    return res;
  }

  std::string Internal(std::string_view what, int err) const {
    return fmt::format("{}: internal: {}: {}", s_.file, what, ErrnoName(err));
  }

  std::string Isolate() {
    // Children of a process that dies come here to be reaped.
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return Internal("PR_SET_CHILD_SUBREAPER", errno);
    signal(SIGCHLD, SIG_DFL);
    // One CPU for the supervisor and its children: each step is a request
    // and a reply, and waking a process on the other CPU costs an IPI (dear
    // in a VM: 16 µs a step pinned, 40 µs not, on this machine).
    cpu_set_t cpu;
    CPU_ZERO(&cpu);
    CPU_SET(sched_getcpu(), &cpu);
    sched_setaffinity(0, sizeof(cpu), &cpu);
    int flags = CLONE_NEWNS | (p_.own_netns ? CLONE_NEWNET : 0);
    if (unshare(flags) != 0) return Internal("unshare", errno);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return Internal("make / private", errno);
    if (p_.own_netns) {
      if (int err = LoopbackUp(); err != 0) return Internal("bring lo up", err);
    }
    const char* dir = p_.mount_dir.c_str();
    if (mount("tmpfs", dir, "tmpfs", 0, "mode=0755,uid=0,gid=0") != 0)
      return Internal(fmt::format("mount tmpfs on {}", dir), errno);
    // The old root stacked on the new one and then detached: no path, fd
    // or chroot escape leads back to the host's files.
    if (chdir(dir) != 0) return Internal("chdir to the new root", errno);
    if (syscall(SYS_pivot_root, ".", ".") != 0) return Internal("pivot_root", errno);
    if (umount2(".", MNT_DETACH) != 0) return Internal("detach the old root", errno);
    if (chroot(".") != 0 || chdir("/") != 0) return Internal("chroot", errno);
    return "";
  }

  std::string StartProcess(int i) {
    const ProcessSpec& p = table_.procs[static_cast<size_t>(i)];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      return Internal("socketpair", errno);
    Child& kid = kids_[static_cast<size_t>(i)];
    if (p.parent.empty()) {
      pid_t pid = ForkTied();
      if (pid == 0) RunProcess(s_, table_, i, sv[1], false);
      int err = errno;
      close(sv[1]);
      if (pid < 0) {
        close(sv[0]);
        return Internal("fork", err);
      }
      kid.pid = pid;
    } else {
      // A fork of the parent's child, after the parent's own layers.
      const Child& parent = kids_[static_cast<size_t>(table_.IndexOf(p.parent))];
      Request req{RequestKind::kFork, static_cast<uint32_t>(i), -1, -1};
      int err = SendRequest(parent.sock, req, sv[1]);
      close(sv[1]);
      Reply r;
      if (err == 0) err = RecvReply(parent.sock, &r, nullptr, p_.reply_timeout_ms);
      if (err == 0) err = r.err;
      if (err != 0) {
        close(sv[0]);
        return Internal(fmt::format("fork process \"{}\" from \"{}\"", p.name, p.parent), err);
      }
      kid.pid = r.value;
    }
    kid.sock = sv[0];
    Reply ready;
    if (int err = RecvReply(kid.sock, &ready, nullptr, p_.reply_timeout_ms); err != 0)
      return Internal(fmt::format("process \"{}\" did not start", p.name), err);
    if (ready.err != 0) return ready.text;
    return "";
  }

  std::string RunSteps(RunResult* res) {
    res->steps.assign(s_.steps.size(), StepResult{});
    for (size_t i = 0; i < s_.steps.size(); ++i) {
      const StepSpec& step = s_.steps[i];
      auto failed = [&](int err) {
        return fmt::format("{}: internal: step {} ({} as \"{}\"): no answer: {}",
                           s_.Where(step.loc), i + 1, OpName(step.op), step.as,
                           ErrnoName(err));
      };
      const Child& kid = kids_[static_cast<size_t>(table_.IndexOf(step.as))];
      Request req{RequestKind::kStep, static_cast<uint32_t>(i), -1, -1};
      if (step.op == Op::kSendFd) req.kind = RequestKind::kSendFd;
      if (step.op == Op::kSignal || step.op == Op::kConnectAbstract) {
        req.peer_index = table_.IndexOf(step.target);
        req.peer_pid = kids_[static_cast<size_t>(req.peer_index)].pid;
      }
      Reply r;
      int fd = -1;
      int err = SendRequest(kid.sock, req);
      if (err == 0) err = RecvReply(kid.sock, &r, &fd, p_.reply_timeout_ms);
      if (err != 0) return failed(err);
      if (step.op == Op::kSendFd && r.err == 0) {
        // SCM_RIGHTS through the supervisor: the target holds the same
        // open file under the same name.
        const Child& target = kids_[static_cast<size_t>(table_.IndexOf(step.target))];
        req.kind = RequestKind::kRecvFd;
        err = fd < 0 ? EBADF : SendRequest(target.sock, req, fd);
        if (err == 0) err = RecvReply(target.sock, &r, nullptr, p_.reply_timeout_ms);
        if (err != 0) {
          if (fd >= 0) close(fd);
          return failed(err);
        }
      }
      if (fd >= 0) close(fd);
      res->steps[i].err = r.err;
    }
    return "";
  }

  void Teardown() {
    for (Child& kid : kids_) {
      if (kid.pid > 0) kill(kid.pid, SIGKILL);
      if (kid.sock >= 0) close(kid.sock);
      kid = Child{};
    }
    // As subreaper this process inherits the grandchildren too: reap until
    // none is left.
    for (;;) {
      pid_t w = waitpid(-1, nullptr, 0);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) break;
    }
  }

  const Scenario& s_;
  const KernelOptions& o_;
  const SupervisorParams& p_;
  ProcessTable table_;
  std::vector<Child> kids_;
};

}  // namespace

int64_t ResultBudgetMs(const Scenario& s, const SupervisorParams& params) {
  return 60000 + int64_t{params.reply_timeout_ms + 1000} *
                     static_cast<int64_t>(s.steps.size() + s.processes.size() + 1);
}

RunResult RunSupervised(const Scenario& s, const KernelOptions& options,
                        const SupervisorParams& params, bool wait_for_teardown) {
  auto error = [&](std::string message) {
    return Failed(fmt::format("{}: internal: {}", s.file, message));
  };
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return error(fmt::format("pipe2: {}", ErrnoName(errno)));
  pid_t pid = ForkTied();
  if (pid == 0) {
    // Keep only stdio and the answer's pipe: above all not the sysctl
    // lock, which must not outlive its session in a stray process.
    int out = dup2(pipefd[1], kServerSock);
    syscall(SYS_close_range, kServerSock + 1, ~0u, 0);
    if (out < 0) _exit(1);
    Supervisor(s, options, params).Run(out);
    _exit(0);
  }
  int fork_err = errno;
  close(pipefd[1]);
  if (pid < 0) {
    close(pipefd[0]);
    return error(fmt::format("fork the supervisor: {}", ErrnoName(fork_err)));
  }
  std::string bytes;
  int err = ReadFrame(pipefd[0], &bytes, NowMs() + ResultBudgetMs(s, params));
  close(pipefd[0]);
  RunResult r;
  ByteReader in(bytes);
  if (err == 0 && DecodeResult(&in, &r) && in.AtEnd()) {
    if (wait_for_teardown) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    return r;
  }
  if (err == ETIMEDOUT) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (err == ETIMEDOUT) return error("the supervisor did not answer in time");
  if (WIFSIGNALED(status))
    return error(fmt::format("the supervisor died of signal {} ({})", WTERMSIG(status),
                             sigabbrev_np(WTERMSIG(status))));
  return error(fmt::format("the supervisor gave no answer (exit status {})", WEXITSTATUS(status)));
}

}  // namespace pathwarden::kernel_internal
