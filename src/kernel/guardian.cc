// A guardian process: forked in a session of its own, woken when its
// holder is done or dead, then doing its work.

#include "src/kernel/guardian.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/errno.h"

namespace pathwarden::kernel_internal {
namespace {

// Closes every descriptor but those in `keep` (sorted, no duplicates).
void CloseAllBut(const std::vector<int>& keep) {
  unsigned from = 0;
  for (int fd : keep) {
    if (fd < 0) continue;
    if (static_cast<unsigned>(fd) > from) close_range(from, static_cast<unsigned>(fd) - 1, 0);
    from = static_cast<unsigned>(fd) + 1;
  }
  close_range(from, ~0u, 0);
}

// Does this process already hold the flock on `fd`'s file? Linux:
// fs/locks.c (/proc/locks lines).
bool HeldByThisProcess(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  FILE* f = fopen("/proc/locks", "re");
  if (f == nullptr) return false;
  bool held = false;
  char line[256];
  while (!held && fgets(line, sizeof(line), f) != nullptr) {
    char kind[16] = {};
    int pid = 0;
    unsigned maj = 0, min = 0;
    unsigned long ino = 0;
    if (std::sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) == 5)
      held = std::string_view(kind) == "FLOCK" && pid == getpid() && ino == st.st_ino &&
             makedev(maj, min) == st.st_dev;
  }
  fclose(f);
  return held;
}

// The write ends of this process's guardians not yet woken.
struct HeldPipes {
  std::mutex mu;
  std::vector<int> fds;
};
HeldPipes& Held() {
  static auto* held = new HeldPipes;  // never destroyed: used until exit
  return *held;
}

}  // namespace

void Guardian::WithHeldPipes(const std::function<void(std::span<const int>)>& f) {
  HeldPipes& h = Held();
  const std::lock_guard<std::mutex> lock(h.mu);
  f(h.fds);
}

Result<Guardian, std::string> Guardian::Start(std::span<const int> keep,
                                              const std::function<int()>& work) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Unexpected(fmt::format("pipe: {}", ErrnoName(errno)));
  // Built before fork(): the child allocates nothing before `work`.
  std::vector<int> kept(keep.begin(), keep.end());
  kept.push_back(fds[0]);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  // Held over fork() until the child ignores them: a Ctrl-C at that
  // moment ends the holder, never the guardian.
  sigset_t deaf, old;
  sigemptyset(&deaf);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&deaf, sig);
  sigprocmask(SIG_BLOCK, &deaf, &old);
  const pid_t pid = fork();
  if (pid != 0) sigprocmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return Unexpected(fmt::format("fork a guardian: {}", ErrnoName(err)));
  }
  if (pid == 0) {
    // Out of the terminal's process group, deaf to what ends the holder,
    // the last the OOM killer picks; only `keep` and the pipe's read end
    // left open.
    setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    if (const int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); adj >= 0) {
      (void)!write(adj, "-1000", 5);
      close(adj);
    }
    CloseAllBut(kept);
    char c;
    for (;;) {
      const ssize_t n = read(fds[0], &c, 1);
      if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
    _exit(work());
  }
  close(fds[0]);
  {
    HeldPipes& h = Held();
    const std::lock_guard<std::mutex> lock(h.mu);
    h.fds.push_back(fds[1]);
  }
  return Guardian(pid, fds[1]);
}

Guardian::Guardian(Guardian&& other) noexcept : pid_(other.pid_), pipe_(other.pipe_) {
  other.pid_ = -1;
  other.pipe_ = -1;
}

Guardian& Guardian::operator=(Guardian&& other) noexcept {
  if (this != &other) {
    Finish();
    pid_ = other.pid_;
    pipe_ = other.pipe_;
    other.pid_ = -1;
    other.pipe_ = -1;
  }
  return *this;
}

Guardian::~Guardian() { Finish(); }

void Guardian::Wake() {
  if (pipe_ < 0) return;
  HeldPipes& h = Held();
  const std::lock_guard<std::mutex> lock(h.mu);
  std::erase(h.fds, pipe_);
  close(pipe_);
  pipe_ = -1;
}

int Guardian::Finish() {
  if (pid_ < 0) return -1;
  Wake();
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) {
      status = -1;
      break;
    }
  }
  pid_ = -1;
  pipe_ = -1;
  return status;
}

Result<int, std::string> LockStateFile(const std::string& dir, const std::string& name,
                                       std::string_view held_here) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Unexpected(fmt::format("mkdir {}: {}", dir, ErrnoName(errno)));
  const std::string path = dir + "/" + name;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unexpected(fmt::format("open {}: {}", path, ErrnoName(errno)));
  int r = flock(fd, LOCK_EX | LOCK_NB);
  if (r != 0 && errno == EWOULDBLOCK && HeldByThisProcess(fd)) {
    close(fd);
    return Unexpected(std::string(held_here));
  }
  while (r != 0 && (errno == EWOULDBLOCK || errno == EINTR)) r = flock(fd, LOCK_EX);
  if (r != 0) {
    const int err = errno;
    close(fd);
    return Unexpected(fmt::format("flock {}: {}", path, ErrnoName(err)));
  }
  return fd;
}

std::string SaveAtomically(const std::string& path, std::string_view bytes, mode_t mode,
                           bool sync) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return fmt::format("create {}: {}", tmp, ErrnoName(errno));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && sync && fsync(fd) != 0) err = errno;
  close(fd);
  if (err != 0) {
    unlink(tmp.c_str());
    return fmt::format("write {}: {}", tmp, ErrnoName(err));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    unlink(tmp.c_str());
    return fmt::format("rename {} to {}: {}", tmp, path, ErrnoName(err));
  }
  return "";
}

}  // namespace pathwarden::kernel_internal
