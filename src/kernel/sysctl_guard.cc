// The fs.protected_* sysctls: a cross-process lock, the host's values saved
// on disk while changed, a guardian that restores them when the holder dies,
// and the repair after a crash of both.

#include "src/kernel/sysctl_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

// The saved file is "name=value" lines in kSysctlFields order.
std::string SaveFile(const std::string& path, const Sysctls& v) {
  std::string text;
  for (const SysctlField& f : kSysctlFields) text += fmt::format("{}={}\n", f.name, v.*f.value);
  return SaveAtomically(path, text, 0644, /*sync=*/true);
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
  auto lock = LockStateFile(
      dir, "sysctl.lock",
      "this process already holds the kernel executor's lock (a KernelSession is open): "
      "end it first");
  if (!lock) return Unexpected(lock.error());
  const int fd = *lock;
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
  guardian_.Finish();
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
    guardian_.Finish();  // it finds no saved file: nothing to do
  }
  return "";
}

std::string SysctlGuard::StartGuardian() {
  // Everything the guardian needs, built before it is forked.
  const std::string saved = dir_ + "/sysctl.saved";
  std::string paths[kNumSysctls];
  const char* cpaths[kNumSysctls];
  for (size_t i = 0; i < kNumSysctls; ++i) {
    paths[i] = SysctlPath(kSysctlFields[i]);
    cpaths[i] = paths[i].c_str();
  }
  // The lock stays held until the values are back.
  const int keep[] = {lock_fd_};
  auto g = Guardian::Start(keep, [&]() -> int { GuardianRestore(saved.c_str(), cpaths); });
  if (!g) return "the sysctl guardian: " + g.error();
  guardian_ = std::move(*g);
  return "";
}

}  // namespace pathwarden::kernel_internal
