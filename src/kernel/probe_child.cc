// The host probe's child, and the lean per-thread server it is forked from.

#include "src/kernel/probe_child.h"

#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <iterator>
#include <limits>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/kernel/codec.h"
#include "src/kernel/credentials.h"
#include "src/kernel/guardian.h"
#include "src/kernel/layer.h"
#include "src/kernel/process_server.h"
#include "src/kernel/wire.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr const char* kServerEnv = "PATHWARDEN_PROBE_SERVER";
constexpr std::string_view kReady = "pathwarden probe server ready";
// The server's end of the channel to the thread that spawned it.
constexpr int kChannel = 3;

void Send(int fd, const ChildMessage& m) {
  const char* p = reinterpret_cast<const char*>(&m);
  size_t left = sizeof(m);
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

[[noreturn]] void Stop(int fd, ChildMessage m, const char* call = "") {
  std::strncpy(m.call, call, sizeof(m.call) - 1);
  Send(fd, m);
  _exit(0);
}

// The child: `job`'s root and working directory, rule paths opened as
// root from there, the identity, no_new_privs, each layer, then the steps.
[[noreturn]] void RunProbeChild(int out, const ProbeJob& job) {
  using M = ChildMessage;
  if (job.root != "/" && (chroot(job.root.c_str()) != 0 || chdir("/") != 0))
    Stop(out, M{.kind = M::kSetup, .err = errno}, "chroot");
  if (chdir(job.cwd.c_str()) != 0) Stop(out, M{.kind = M::kSetup, .err = errno}, "chdir");
  // Where each step starts, to come back to after a Chdir.
  const int start = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (start < 0) Stop(out, M{.kind = M::kSetup, .err = errno}, "open .");
  // Rule paths are opened as the launcher (root), from there.
  const std::vector<LayerSpec>& layers = job.layers;
  std::vector<std::vector<int>> opened(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    for (size_t i = 0; i < layers[l].rules.size(); ++i) {
      const RuleSpec& rule = layers[l].rules[i];
      int fd = rule.is_port ? -1 : OpenRulePath(rule);
      if (!rule.is_port && fd < 0)
        Stop(out, M{.kind = M::kRulePath, .index = static_cast<int32_t>(l), .err = errno,
                    .rule = static_cast<int32_t>(i)});
      opened[l].push_back(fd);
    }
  }
  const char* call = "";
  if (int err = TakeCred(job.cred, &call); err != 0)
    Stop(out, M{.kind = M::kCred, .err = err}, call);
  RearmDeathSignal();
  umask(job.cred.umask & 0777);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    Stop(out, M{.kind = M::kSetup, .err = errno}, "PR_SET_NO_NEW_PRIVS");
  for (size_t l = 0; l < layers.size(); ++l) {
    LayerFailure f;
    if (int err = EnforceLayer(layers[l], opened[l], &f); err != 0)
      Stop(out, M{.kind = M::kLayer, .index = static_cast<int32_t>(l), .err = err,
                  .rule = static_cast<int32_t>(f.rule), .stage = static_cast<int32_t>(f.stage)});
    for (int fd : opened[l])
      if (fd >= 0) close(fd);
  }
  const ProcessTable no_peers;
  FdTable fds;
  for (size_t i = 0; i < job.steps.size(); ++i) {
    const StepSpec& st = job.steps[i];
    const auto index = static_cast<int32_t>(i);
    uint32_t mode = 0;
    if (st.op == Op::kOpen && OpensSpecialFile(st, &mode))
      Stop(out, M{.kind = M::kRefused, .index = index, .mode = mode});
    int err = RunStep(no_peers, st, Request{}, &fds);
    if (st.op == Op::kChdir && err == 0 && fchdir(start) != 0)
      Stop(out, M{.kind = M::kRestoreCwd, .index = index, .err = errno});
    Send(out, M{.kind = M::kAnswer, .index = index, .err = err});
  }
  _exit(0);
}

// The server: one job at a time from its channel, each with the pipe's
// write end and the guardians' pipes attached; each run in a child, whose
// wait status goes back. Ends when the channel closes.
[[noreturn]] void Serve() {
  // Dispositions set to "ignore" came along through exec; the children
  // must be reaped here.
  signal(SIGCHLD, SIG_DFL);
  if (WriteFrame(kChannel, kReady) != 0) _exit(1);
  for (;;) {
    std::vector<int> fds;
    std::string bytes;
    if (RecvFds(kChannel, &fds) != 0 ||
        ReadFrame(kChannel, &bytes, std::numeric_limits<int64_t>::max()) != 0)
      break;
    ProbeJob job;
    ByteReader in(bytes);
    if (fds.empty() || !DecodeProbeJob(&in, &job) || !in.AtEnd()) break;
    const pid_t pid = ForkTied();
    if (pid == 0) {
      close(kChannel);
      RunProbeChild(fds[0], job);
    }
    const int32_t fork_err = pid < 0 ? errno : 0;
    for (int fd : fds) close(fd);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::array<int32_t, 2> reply{fork_err, status};
    if (WriteFrame(kChannel, std::string_view(reinterpret_cast<const char*>(reply.data()),
                                              sizeof(reply))) != 0)
      break;
  }
  _exit(0);
}

// Runs before main() in every process of a binary linking this file; only
// the exec'd server has the variable (its environment is just that).
__attribute__((constructor)) void ServeIfAsked() {
  const char* v = getenv(kServerEnv);
  if (v != nullptr && std::string_view(v) == "1") Serve();
}

// Is this code in the main program (not a library a script interpreter
// loaded)? Only then does /proc/self/exe hold the server. The first object
// dl_iterate_phdr() reports is the main program.
bool InMainProgram() {
  static const bool in_main = [] {
    struct Find {
      uintptr_t addr;
      int object = 0;
      int found = -1;
    } find{reinterpret_cast<uintptr_t>(&ServeIfAsked)};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          auto* f = static_cast<Find*>(data);
          for (int k = 0; k < info->dlpi_phnum; ++k) {
            const ElfW(Phdr)& ph = info->dlpi_phdr[k];
            const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
            if (ph.p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph.p_memsz) {
              f->found = f->object;
              return 1;
            }
          }
          ++f->object;
          return 0;
        },
        &find);
    return find.found == 0;
  }();
  return in_main;
}

// What the server took from the thread that spawned it and a job depends
// on: its namespaces and its root directory.
struct Context {
  std::array<ino_t, 4> ns{};
  dev_t root_dev = 0;
  ino_t root_ino = 0;
  bool operator==(const Context&) const = default;
};

bool ReadContext(Context* c) {
  static constexpr const char* kNs[] = {
      "/proc/thread-self/ns/mnt", "/proc/thread-self/ns/user", "/proc/thread-self/ns/net",
      "/proc/thread-self/ns/pid_for_children"};
  static_assert(std::size(kNs) == std::tuple_size_v<decltype(Context::ns)>);
  for (size_t i = 0; i < c->ns.size(); ++i) {
    struct stat st;
    if (stat(kNs[i], &st) != 0) return false;
    c->ns[i] = st.st_ino;
  }
  struct stat root;
  if (stat("/", &root) != 0) return false;
  c->root_dev = root.st_dev;
  c->root_ino = root.st_ino;
  return true;
}

// This thread's server.
struct Server {
  pid_t pid = -1;
  int sock = -1;
  pid_t owner = 0;  // the process that spawned it (a fork has a copy)
  bool busy = false;
  bool failed = false;  // one did not start: fork here from then on
  uint64_t probes = 0;  // this thread's, through the server or not
  Context context;

  ~Server() { Stop(); }
  bool Ours() const { return sock >= 0 && owner == getpid(); }
  // Ended, between jobs or after a failure (a half-sent job must not
  // run): killed rather than asked, since a child this process forked
  // meanwhile may hold a copy of the channel, which keeps it open.
  void Stop() {
    if (Ours()) {
      close(sock);
      kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    // Else a fork's copy: the spawner's to end.
    pid = -1;
    sock = -1;
    busy = false;
  }
};

thread_local Server t_server;

bool Spawn(Server* s, const Context& context) {
  int sock = -1;
  const pid_t pid = SpawnSelf("pathwarden-probe-server", kServerEnv, kChannel, &sock);
  if (pid < 0) {
    s->failed = true;
    return false;
  }
  s->pid = pid;
  s->sock = sock;
  s->owner = getpid();
  s->context = context;
  std::string hello;
  if (ReadFrame(sock, &hello, NowMs() + 10000) == 0 && hello == kReady) return true;
  s->Stop();
  s->failed = true;
  return false;
}

// This thread's server for a job, spawned when there is none or the one
// there took another context; nullptr: fork here.
Server* ServerFor(const ProbeJob& job) {
  if (!InMainProgram() || job.root.empty() || job.root[0] != '/' || job.cwd.empty() ||
      job.cwd[0] != '/')
    return nullptr;
  Server* s = &t_server;
  // The first probe forks here: a process that probes once (the CLI's
  // `explain --verify`) would pay the server's exec for nothing.
  if (s->busy || s->failed || ++s->probes < 2) return nullptr;
  Context now;
  if (!ReadContext(&now)) return nullptr;
  if (s->Ours() && s->context == now) return s;
  s->Stop();
  return Spawn(s, now) ? s : nullptr;
}

}  // namespace

namespace {

// Whether the FUSE mount of O_PATH descriptor `fd` refuses this task at
// its gate (fuse_allow_current_process()): no allow_other, and this
// task's real, effective or saved ids not all its user_id= and
// group_id=. Read from /proc/self/mountinfo by the descriptor's mount
// (its fdinfo's mnt_id: statx would ask the getattr the gate refuses).
bool FuseGateRefuses(int fd) {
  unsigned long long mnt_id = 0;
  {
    FILE* info = std::fopen(fmt::format("/proc/self/fdinfo/{}", fd).c_str(), "re");
    if (info == nullptr) return false;
    char l[256];
    bool got = false;
    while (!got && std::fgets(l, sizeof l, info)) got = std::sscanf(l, "mnt_id: %llu", &mnt_id) == 1;
    std::fclose(info);
    if (!got) return false;
  }
  FILE* f = std::fopen("/proc/self/mountinfo", "re");
  if (f == nullptr) return false;
  char line[4096];
  std::string_view super;
  std::string found;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long id = 0;
    if (std::sscanf(line, "%llu", &id) != 1 || id != mnt_id) continue;
    found = line;
    break;
  }
  std::fclose(f);
  const size_t dash = found.find(" - fuse");
  if (dash == std::string::npos) return false;
  super = std::string_view(found).substr(dash + 3);
  // "fuse.X SOURCE OPTIONS": the superblock's options last.
  const size_t opts = super.rfind(' ');
  if (opts == std::string_view::npos) return false;
  super = super.substr(opts + 1);
  while (!super.empty() && (super.back() == '\n' || super.back() == ' ')) super.remove_suffix(1);
  auto value = [&](std::string_view name) -> long long {
    for (size_t i = 0; i <= super.size();) {
      size_t end = std::min(super.find(',', i), super.size());
      const std::string_view o = super.substr(i, end - i);
      if (o == name) return 0;
      if (o.size() > name.size() && o.substr(0, name.size()) == name && o[name.size()] == '=')
        return std::atoll(std::string(o.substr(name.size() + 1)).c_str());
      i = end + 1;
    }
    return -1;
  };
  if (value("allow_other") == 0) return false;
  const long long uid = value("user_id"), gid = value("group_id");
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (uid < 0 || gid < 0 || getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0)
    return false;
  return !(r == uid && e == uid && s == uid && rg == gid && eg == gid && sg == gid);
}

}  // namespace

bool OpensSpecialFile(const StepSpec& st, uint32_t* mode) {
  if (st.flags & O_PATH) return false;
  const int flags = O_PATH | O_CLOEXEC | static_cast<int>(st.flags & (O_NOFOLLOW | O_DIRECTORY));
  int fd = openat(AT_FDCWD, st.path.c_str(), flags);
  if (fd < 0) return false;
  struct stat s;
  const int r = fstat(fd, &s);
  const int err = errno;
  // A FUSE mount that does not admit this task refuses its getattr
  // (fuse_getattr()) and its ->permission alike: the open fails there,
  // before any driver. (An EACCES the server itself answered is no such
  // thing: the gate is read from the mount's options.)
  struct statfs sf;
  const bool fuse_gate = r != 0 && err == EACCES && fstatfs(fd, &sf) == 0 &&
                         sf.f_type == FUSE_SUPER_MAGIC && FuseGateRefuses(fd);
  close(fd);
  if (fuse_gate) return false;
  if (r != 0) return true;  // unknown: refused
  *mode = s.st_mode;
  return S_ISCHR(s.st_mode) || S_ISBLK(s.st_mode) || S_ISFIFO(s.st_mode) ||
         S_ISSOCK(s.st_mode);
}

Result<ProbeChild, std::string> ProbeChild::Start(const ProbeJob& job) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Unexpected(fmt::format("pipe2: {}", ErrnoName(errno)));
  if (Server* s = ServerFor(job)) {
    ByteWriter w;
    EncodeProbeJob(job, &w);
    int err = 0;
    Guardian::WithHeldPipes([&](std::span<const int> held) {
      std::vector<int> fds{p[1]};
      fds.insert(fds.end(), held.begin(), held.end());
      err = SendFds(s->sock, fds);
    });
    if (err == 0) err = WriteFrame(s->sock, w.Take());
    close(p[1]);
    if (err == 0) {
      s->busy = true;
      return ProbeChild(p[0], -1);
    }
    // Gone, or half a job sent: not used again; the child is forked here.
    s->Stop();
    close(p[0]);
    if (pipe2(p, O_CLOEXEC) != 0) return Unexpected(fmt::format("pipe2: {}", ErrnoName(errno)));
  }
  const pid_t pid = ForkTied();
  if (pid < 0) {
    const int err = errno;
    close(p[0]);
    close(p[1]);
    return Unexpected(fmt::format("fork: {}", ErrnoName(err)));
  }
  if (pid == 0) {
    close(p[0]);
    RunProbeChild(p[1], job);
  }
  close(p[1]);
  return ProbeChild(p[0], pid);
}

ProbeChild::ProbeChild(ProbeChild&& other) noexcept
    : out_(other.out_), pid_(other.pid_), waited_(other.waited_) {
  other.out_ = -1;
  other.waited_ = true;
}

ProbeChild::~ProbeChild() {
  if (out_ >= 0) close(out_);
  if (!waited_) (void)Wait();
}

pid_t ProbeServerForTesting() { return t_server.Ours() ? t_server.pid : -1; }

Result<int, std::string> ProbeChild::Wait() {
  if (waited_) return Unexpected(std::string("the probe's child was waited for already"));
  waited_ = true;
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) return Unexpected(fmt::format("waitpid: {}", ErrnoName(errno)));
    }
    return status;
  }
  Server* s = &t_server;
  s->busy = false;
  std::string bytes;
  std::array<int32_t, 2> reply{};
  const int err = s->Ours() ? ReadFrame(s->sock, &bytes, std::numeric_limits<int64_t>::max())
                            : EPIPE;
  if (err != 0 || bytes.size() != sizeof(reply)) {
    s->Stop();
    return Unexpected(fmt::format("the probe server ended: {}", ErrnoName(err != 0 ? err : EBADMSG)));
  }
  std::memcpy(reply.data(), bytes.data(), sizeof(reply));
  if (reply[0] != 0) return Unexpected(fmt::format("fork: {}", ErrnoName(reply[0])));
  return reply[1];
}

}  // namespace pathwarden::kernel_internal
