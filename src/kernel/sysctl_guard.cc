// The fs.protected_* sysctls: a cross-process lock, the host's values saved
// on disk while changed, a guardian that restores them when the holder dies,
// and the repair after a crash of both.

#include "src/kernel/sysctl_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/sysctls.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr size_t kNumSysctls = std::size(kSysctlFields);

std::string SysctlPath(const SysctlField& f) {
  return fmt::format("/proc/sys/fs/{}", f.name);
}

Result<int, std::string> ReadInt(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(fmt::format("open {}: {}", path, ErrnoName(errno)));
  char buf[32] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  int err = errno;
  close(fd);
  if (n < 0) return Unexpected(fmt::format("read {}: {}", path, ErrnoName(err)));
  int v = 0;
  if (std::sscanf(buf, "%d", &v) != 1)
    return Unexpected(fmt::format("{} holds \"{}\", not a number", path, buf));
  return v;
}

std::string WriteInt(const std::string& path, int v) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("open {}: {}", path, ErrnoName(errno));
  std::string text = fmt::format("{}\n", v);
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return fmt::format("write {} to {}: {}", v, path, ErrnoName(n < 0 ? err : EIO));
  return "";
}

std::string WriteSysctls(const Sysctls& want, Sysctls* current) {
  for (const SysctlField& f : kSysctlFields) {
    if (current->*f.value == want.*f.value) continue;
    if (std::string e = WriteInt(SysctlPath(f), want.*f.value); !e.empty()) return e;
    current->*f.value = want.*f.value;
  }
  return "";
}

// The saved file is "name=value" lines in kSysctlFields order; written to
// a temporary name and renamed, so a crash never leaves half a file.
std::string SaveFile(const std::string& path, const Sysctls& v) {
  std::string text;
  for (const SysctlField& f : kSysctlFields) text += fmt::format("{}={}\n", f.name, v.*f.value);
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("create {}: {}", tmp, ErrnoName(errno));
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  if (n == static_cast<ssize_t>(text.size()) && fsync(fd) != 0) {
    n = -1;
    err = errno;
  }
  close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return fmt::format("write {}: {}", tmp, ErrnoName(n < 0 ? err : EIO));
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return fmt::format("rename {} to {}: {}", tmp, path, ErrnoName(errno));
  return "";
}

Result<Sysctls, std::string> LoadFile(const std::string& path) {
  FILE* f = fopen(path.c_str(), "re");
  if (f == nullptr) return Unexpected(fmt::format("open {}: {}", path, ErrnoName(errno)));
  Sysctls v;
  bool ok = true;
  for (const SysctlField& field : kSysctlFields) {
    if (!ok) break;
    char name[64] = {};
    ok = std::fscanf(f, " %63[a-z_]=%d", name, &(v.*field.value)) == 2 && name == field.name;
  }
  fclose(f);
  if (!ok)
    return Unexpected(fmt::format(
        "{} is damaged: restore /proc/sys/fs/protected_* by hand and delete it", path));
  return v;
}

// Does this process already hold the flock on `fd`'s file? Then waiting
// for it would wait forever. Linux: fs/locks.c (/proc/locks lines).
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

// The guardian's work once the holder is gone: sysctl.saved back into
// /proc/sys, then the file deleted. Runs in a child forked from a process
// that may have threads, so only async-signal-safe calls: no allocation,
// no stdio. The file is LoadFile()'s format, parsed by hand.
[[noreturn]] void GuardianRestore(const char* saved, const char* const paths[kNumSysctls]) {
  const int fd = open(saved, O_RDONLY | O_CLOEXEC);
  if (fd < 0) _exit(0);  // the holder put the values back itself
  char buf[512];
  ssize_t n = 0;
  for (ssize_t r; n < static_cast<ssize_t>(sizeof buf) && (r = read(fd, buf + n, sizeof buf - n)) != 0;) {
    if (r < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    n += r;
  }
  close(fd);
  int values[kNumSysctls];
  ssize_t at = 0;
  for (size_t i = 0; i < kNumSysctls; ++i) {
    const char* name = kSysctlFields[i].name.data();
    const size_t len = kSysctlFields[i].name.size();
    if (at + static_cast<ssize_t>(len) + 1 > n || memcmp(buf + at, name, len) != 0 ||
        buf[at + len] != '=')
      _exit(1);  // damaged: the next holder says so
    at += static_cast<ssize_t>(len) + 1;
    int v = 0, digits = 0;
    while (at < n && buf[at] >= '0' && buf[at] <= '9' && digits < 6) v = v * 10 + (buf[at++] - '0'), ++digits;
    if (digits == 0 || at >= n || buf[at] != '\n') _exit(1);
    ++at;
    values[i] = v;
  }
  for (size_t i = 0; i < kNumSysctls; ++i) {
    char text[16];
    int len = 0;
    char rev[16];
    int v = values[i], k = 0;
    do {
      rev[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k > 0) text[len++] = rev[--k];
    text[len++] = '\n';
    const int out = open(paths[i], O_WRONLY | O_CLOEXEC);
    if (out < 0 || write(out, text, len) != len) _exit(1);  // the file stays for the next holder
    close(out);
  }
  unlink(saved);
  _exit(0);
}

}  // namespace

Result<Sysctls, std::string> ReadSysctls() {
  Sysctls v;
  for (const SysctlField& f : kSysctlFields) {
    auto r = ReadInt(SysctlPath(f));
    if (!r) return Unexpected(r.error());
    v.*f.value = *r;
  }
  return v;
}

Result<std::unique_ptr<SysctlGuard>, std::string> SysctlGuard::Acquire(
    const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Unexpected(fmt::format("mkdir {}: {}", dir, ErrnoName(errno)));
  std::string lock_path = dir + "/sysctl.lock";
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unexpected(fmt::format("open {}: {}", lock_path, ErrnoName(errno)));
  int r = flock(fd, LOCK_EX | LOCK_NB);
  if (r != 0 && errno == EWOULDBLOCK && HeldByThisProcess(fd)) {
    close(fd);
    return Unexpected(
        "this process already holds the kernel executor's lock (a KernelSession is open): "
        "end it first");
  }
  while (r != 0 && (errno == EWOULDBLOCK || errno == EINTR)) r = flock(fd, LOCK_EX);
  if (r != 0) {
    int err = errno;
    close(fd);
    return Unexpected(fmt::format("flock {}: {}", lock_path, ErrnoName(err)));
  }
  auto fail = [fd](std::string e) {
    close(fd);
    return Unexpected(std::move(e));
  };
  // A holder that died while the values were changed left them here.
  std::string saved = dir + "/sysctl.saved";
  const bool repaired = access(saved.c_str(), F_OK) == 0;
  if (repaired) {
    auto old = LoadFile(saved);
    if (!old) return fail(old.error());
    auto now = ReadSysctls();
    if (!now) return fail(now.error());
    if (std::string e = WriteSysctls(*old, &*now); !e.empty()) return fail(e);
    if (unlink(saved.c_str()) != 0)
      return fail(fmt::format("unlink {}: {}", saved, ErrnoName(errno)));
  }
  auto host = ReadSysctls();
  if (!host) return fail(host.error());
  return std::unique_ptr<SysctlGuard>(new SysctlGuard(fd, dir, *host, repaired));
}

Result<Sysctls, std::string> ReadHostSysctls(const std::string& dir) {
  auto guard = SysctlGuard::Acquire(dir);
  if (!guard) return Unexpected(guard.error());
  return (*guard)->host();
}

SysctlGuard::~SysctlGuard() {
  // Nothing to report to: a failure leaves sysctl.saved for the guardian,
  // or the next holder.
  (void)Restore();
  StopGuardian();
  close(lock_fd_);
}

std::string SysctlGuard::Set(const Sysctls& values) {
  if (values == current_) return "";
  if (!saved_) {
    if (std::string e = SaveFile(dir_ + "/sysctl.saved", host_); !e.empty()) return e;
    saved_ = true;
    if (std::string e = StartGuardian(); !e.empty()) return e;
  }
  return WriteSysctls(values, &current_);
}

std::string SysctlGuard::Restore() {
  if (std::string e = WriteSysctls(host_, &current_); !e.empty()) return e;
  if (saved_) {
    std::string saved = dir_ + "/sysctl.saved";
    if (unlink(saved.c_str()) != 0 && errno != ENOENT)
      return fmt::format("unlink {}: {}", saved, ErrnoName(errno));
    saved_ = false;
    StopGuardian();
  }
  return "";
}

std::string SysctlGuard::StartGuardian() {
  // Everything the child needs, built before fork().
  const std::string saved = dir_ + "/sysctl.saved";
  std::string paths[kNumSysctls];
  const char* cpaths[kNumSysctls];
  for (size_t i = 0; i < kNumSysctls; ++i) {
    paths[i] = SysctlPath(kSysctlFields[i]);
    cpaths[i] = paths[i].c_str();
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fmt::format("pipe: {}", ErrnoName(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return fmt::format("fork the sysctl guardian: {}", ErrnoName(err));
  }
  if (pid == 0) {
    // Out of the terminal's process group, deaf to what ends the holder;
    // only the lock and the pipe's read end kept open (the lock stays held
    // until the values are back).
    setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
    const int keep_lo = std::min(lock_fd_, fds[0]), keep_hi = std::max(lock_fd_, fds[0]);
    if (keep_lo > 0) close_range(0, keep_lo - 1, 0);
    if (keep_hi > keep_lo + 1) close_range(keep_lo + 1, keep_hi - 1, 0);
    close_range(keep_hi + 1, ~0u, 0);
    char c;
    while (read(fds[0], &c, 1) != 0 && errno == EINTR) {
    }
    GuardianRestore(saved.c_str(), cpaths);
  }
  close(fds[0]);
  guardian_ = pid;
  guardian_pipe_ = fds[1];
  return "";
}

void SysctlGuard::StopGuardian() {
  if (guardian_ < 0) return;
  close(guardian_pipe_);  // wakes it: it finds no saved file, or restores
  while (waitpid(guardian_, nullptr, 0) < 0 && errno == EINTR) {
  }
  guardian_ = -1;
  guardian_pipe_ = -1;
}

}  // namespace pathwarden::kernel_internal
