// The child behind each scenario process: setup in the order a privileged
// launcher uses (cwd, rule paths, credentials, umask, no_new_privs, layers).

#include "src/kernel/process_server.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "src/kernel/credentials.h"
#include "src/kernel/layer.h"

namespace pathwarden::kernel_internal {
namespace {

// The pid ForkTied() forked this process from: the death signal is tied to
// it, and a process whose parent is already gone must not go on.
pid_t tied_parent = 0;

int ListenAbstract(const std::string& name) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 4096) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// Setup of one process; every failure ends the child after telling the
// supervisor why, as a complete kError message.
class ProcessSetup {
 public:
  ProcessSetup(const Scenario& s, const ProcessTable& t, int index)
      : s_(s), t_(t), index_(index), p_(t.procs[static_cast<size_t>(index)]) {}

  void Run(bool inherited) {
    if (!inherited || p_.cwd) {
      std::string cwd = p_.cwd.value_or("/");
      if (chdir(cwd.c_str()) != 0)
        Fail(p_.loc, fmt::format("cwd \"{}\" does not resolve: {}", cwd, ErrnoName(errno)));
    }
    // Rule paths resolve with the credentials the process starts from
    // (root's, or the parent's), as a privileged launcher opens them.
    std::vector<std::vector<int>> opened(p_.layers.size());
    for (size_t l = 0; l < p_.layers.size(); ++l) {
      for (const RuleSpec& rule : p_.layers[l].rules) {
        int fd = rule.is_port ? -1 : OpenRulePath(rule);
        if (!rule.is_port && fd < 0)
          Fail(rule.loc, fmt::format("rule path \"{}\" does not resolve: {}",
                                     rule.path, ErrnoName(errno)));
        opened[l].push_back(fd);
      }
    }
    if (!inherited) TakeCredentials();
    if (p_.umask || !inherited) umask(p_.umask.value_or(022));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Internal("PR_SET_NO_NEW_PRIVS", errno);
    for (size_t l = 0; l < p_.layers.size(); ++l) {
      const LayerSpec& layer = p_.layers[l];
      LayerFailure f;
      if (int err = EnforceLayer(layer, opened[l], &f); err != 0) {
        const SourceLoc& loc = f.stage == LayerFailure::Stage::kAddRule
                                   ? layer.rules[f.rule].loc
                                   : layer.loc;
        Fail(loc, DescribeFailure(layer, f, err));
      }
      for (int fd : opened[l])
        if (fd >= 0) close(fd);
    }
  }

 private:
  void TakeCredentials() {
    Cred cred = Cred::ForUser(p_.uid, p_.gid);
    cred.SetGroups(p_.groups);
    cred.cap_effective = cred.cap_permitted = t_.CapsOf(index_);
    const char* call = "";
    if (!p_.userns_uids.empty()) {
      EnterUserNs(cred);
    } else if (int err = TakeCred(cred, &call); err != 0) {
      Internal(call, err);
    }
    // A change of euid cleared the death signal.
    RearmDeathSignal();
  }

  // The process in a user namespace of its own, as a user makes one: its
  // groups set while it is still root of the initial one (unshare() keeps
  // them, and they need not map), its ids (the namespace's owner is the
  // euid that creates it, and the owner has every capability in it), then
  // unshare(CLONE_NEWUSER), the maps written by a forked helper that stays
  // root outside (as newuidmap does: a process cannot map other ids than
  // its own), then `cred` in the namespace's own ids.
  void EnterUserNs(const Cred& cred) {
    std::vector<gid_t> groups(cred.groups().begin(), cred.groups().end());
    if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0) Internal("setgroups", errno);
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) Internal("pipe2", errno);
    const pid_t self = getpid();
    const pid_t helper = ForkTied();
    if (helper < 0) Internal("fork", errno);
    if (helper == 0) {
      char b = 0;
      close(go[1]);
      if (read(go[0], &b, 1) != 1) _exit(1);
      const std::shared_ptr<const UserNamespace> ns = p_.UserNs();
      // The scenario's root has no /proc: a procfs of its own, detached
      // (fsopen(), fsmount()), mounted nowhere.
      const int fs = static_cast<int>(syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC));
      if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        _exit(2);
      const int proc = static_cast<int>(syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0));
      if (proc < 0) _exit(3);
      auto write_map = [&](const char* file, const std::vector<IdRange>& map) {
        std::string text;
        for (const IdRange& r : map) text += fmt::format("{} {} {}\n", r.inside, r.outside, r.count);
        const int fd =
            openat(proc, fmt::format("{}/{}", self, file).c_str(), O_WRONLY | O_CLOEXEC);
        const bool ok = fd >= 0 && write(fd, text.data(), text.size()) ==
                                       static_cast<ssize_t>(text.size());
        if (fd >= 0) close(fd);
        return ok;
      };
      _exit(write_map("uid_map", ns->uid_map) && write_map("gid_map", ns->gid_map) ? 0 : 1);
    }
    close(go[0]);
    if (syscall(SYS_setresgid, cred.rgid, cred.egid, cred.sgid) != 0) Internal("setresgid", errno);
    if (syscall(SYS_setresuid, cred.ruid, cred.euid, cred.suid) != 0) Internal("setresuid", errno);
    if (unshare(CLONE_NEWUSER) != 0) Internal("unshare(CLONE_NEWUSER)", errno);
    char b = 1;
    if (write(go[1], &b, 1) != 1) Internal("write to the map helper", errno);
    close(go[1]);
    int status = 0;
    if (waitpid(helper, &status, 0) != helper || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      Internal(fmt::format("writing uid_map and gid_map (helper status {})", status), EIO);
    // Its ids in the namespace's own terms: each maps (the parser checked).
    const std::shared_ptr<const UserNamespace> ns = p_.UserNs();
    Cred in = cred;
    in.ruid = in.euid = in.suid = in.fsuid = IdInside(ns->uid_map, cred.euid).value_or(cred.euid);
    in.rgid = in.egid = in.sgid = in.fsgid = IdInside(ns->gid_map, cred.egid).value_or(cred.egid);
    const char* call = "";
    if (int err = TakeCred(in, &call, false); err != 0) Internal(call, err);
  }

  [[noreturn]] void Fail(const SourceLoc& loc, std::string text) {
    SendReply(kServerSock, Reply{EINVAL, 0, s_.Where(loc) + ": " + text});
    _exit(0);
  }
  [[noreturn]] void Internal(std::string_view what, int err) {
    std::string where = index_ == 0 ? s_.file : s_.Where(p_.loc);
    SendReply(kServerSock,
              Reply{err, 0,
                    fmt::format("{}: internal: process \"{}\": {}: {}", where,
                                p_.name, what, ErrnoName(err))});
    _exit(0);
  }

  const Scenario& s_;
  const ProcessTable& t_;
  int index_;
  const ProcessSpec& p_;
};

[[noreturn]] void Serve(const Scenario& s, const ProcessTable& t) {
  FdTable fds;
  for (;;) {
    Request req;
    int fd = -1;
    if (RecvRequest(kServerSock, &req, &fd) != 0) _exit(0);
    Reply reply;
    int send_fd = -1;
    switch (req.kind) {
      case RequestKind::kStep:
        reply.err = RunStep(t, s.steps[req.index], req, &fds);
        break;
      case RequestKind::kSendFd:
        send_fd = fds.Find(s.steps[req.index].fd);
        if (send_fd < 0) reply.err = EBADF;
        break;
      case RequestKind::kRecvFd:
        if (fd < 0) {
          reply.err = EBADF;
        } else {
          fds.Put(s.steps[req.index].fd, fd);
          fd = -1;
        }
        break;
      case RequestKind::kFork: {
        pid_t pid = ForkTied();
        if (pid == 0) RunProcess(s, t, static_cast<int>(req.index), fd, true);
        reply.err = pid < 0 ? errno : 0;
        reply.value = pid;
        break;
      }
    }
    if (fd >= 0) close(fd);
    if (SendReply(kServerSock, reply, send_fd) != 0) _exit(0);
  }
}

}  // namespace

ProcessTable ProcessTable::For(const Scenario& s, uint64_t caps_available) {
  ProcessTable t;
  t.procs.reserve(s.processes.size() + 1);
  ProcessSpec root;
  root.name = "root";
  t.procs.push_back(std::move(root));
  t.procs.insert(t.procs.end(), s.processes.begin(), s.processes.end());
  t.caps_available = caps_available;
  t.supervisor = getpid();
  return t;
}

int ProcessTable::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < procs.size(); ++i)
    if (procs[i].name == name) return static_cast<int>(i);
  return -1;
}

uint64_t ProcessTable::CapsOf(int index) const {
  const ProcessSpec& p = procs[static_cast<size_t>(index)];
  // "All" is what this machine's bounding set allows; explicit sets beyond
  // it are refused before the run (KernelSession).
  return p.caps ? *p.caps : p.EffectiveCaps() & caps_available;
}

std::shared_ptr<const UserNamespace> ProcessTable::UserNsOf(int index) const {
  // A caller outside any scenario (the host probe's) has the table's none.
  if (index < 0 || static_cast<size_t>(index) >= procs.size()) return nullptr;
  while (index > 0 && !procs[static_cast<size_t>(index)].parent.empty()) {
    index = IndexOf(procs[static_cast<size_t>(index)].parent);
    if (index < 0) return nullptr;
  }
  return procs[static_cast<size_t>(index)].UserNs();
}

uint32_t ProcessTable::IdAsPassed(int index, int64_t id, bool gid) const {
  if (id == -1) return static_cast<uint32_t>(-1);
  const auto ns = UserNsOf(index);
  if (!ns) return static_cast<uint32_t>(id);
  const std::vector<IdRange>& map = gid ? ns->gid_map : ns->uid_map;
  if (const auto in = IdInside(map, static_cast<uint32_t>(id))) return *in;
  // No inside id stands for it: one that maps to nothing does the same.
  for (uint32_t c = 0xfffffffeu;; --c)
    if (!IdOutside(map, c)) return c;
}

std::string AbstractSocketName(pid_t supervisor, int index) {
  return fmt::format("pathwarden.{}.{}", supervisor, index);
}

pid_t ForkTied() {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    tied_parent = parent;
    RearmDeathSignal();
  }
  return pid;
}

pid_t SpawnSelf(const char* name, std::string_view env_name, int channel, int* sock) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  // Built before the fork: a multithreaded caller's child should only
  // make system calls until execve.
  std::string arg0(name);
  std::string env = fmt::format("{}=1", env_name);
  char* argv[] = {arg0.data(), nullptr};
  char* envp[] = {env.data(), nullptr};
  const pid_t pid = ForkTied();
  if (pid == 0) {
    if (sv[1] != channel && dup2(sv[1], channel) < 0) _exit(127);
    syscall(SYS_close_range, channel + 1, ~0u, 0);
    fcntl(channel, F_SETFD, 0);
    execve("/proc/self/exe", argv, envp);
    _exit(127);
  }
  const int err = errno;
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    errno = err;
    return -1;
  }
  *sock = sv[0];
  return pid;
}

void RearmDeathSignal() {
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != tied_parent) _exit(1);
}

int FdTable::Find(std::string_view name) const {
  for (const auto& [n, fd] : fds_)
    if (n == name) return fd;
  return -1;
}

void FdTable::Put(std::string_view name, int fd) {
  for (auto& [n, old] : fds_) {
    if (n != name) continue;
    close(old);
    old = fd;
    return;
  }
  fds_.emplace_back(std::string(name), fd);
}

bool FdTable::Close(std::string_view name, int* close_result) {
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (fds_[i].first != name) continue;
    *close_result = close(fds_[i].second) == 0 ? 0 : errno;
    fds_.erase(fds_.begin() + static_cast<ptrdiff_t>(i));
    return true;
  }
  return false;
}

void RunProcess(const Scenario& s, const ProcessTable& t, int index, int sock,
                bool inherited) {
  // Only the supervisor's channel survives: the parent's channel, its
  // listening socket and any lock or pipe of the caller are closed.
  if (sock != kServerSock && dup2(sock, kServerSock) < 0) _exit(1);
  syscall(SYS_close_range, kServerSock + 1, ~0u, 0);
  ProcessSetup(s, t, index).Run(inherited);
  std::string name = AbstractSocketName(t.supervisor, index);
  if (ListenAbstract(name) < 0) {
    int err = errno;
    SendReply(kServerSock, Reply{err, 0,
                                 fmt::format("{}: internal: listen on @{}: {}",
                                             s.file, name, ErrnoName(err))});
    _exit(0);
  }
  if (SendReply(kServerSock, Reply{0, getpid(), ""}) != 0) _exit(0);
  Serve(s, t);
}

}  // namespace pathwarden::kernel_internal
