// What other processes hold on the host's files, which the model's own
// processes do not: the programs they run (exec holds i_writecount
// negative, Linux: fs/exec.c exe_file_deny_write_access()) and the
// active swap files (S_SWAPFILE, mm/swapfile.c). Read once per
// revalidation (HostBackend::ForgetHeldFiles()); both only read /proc.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "src/base/dir_names.h"
#include "src/vfs/host.h"
#include "src/vfs/mountinfo.h"

namespace pathwarden::vfs {

bool HostBackend::Executing(uint64_t dev, uint64_t ino) {
  if (!running_programs_) return false;
  if (!executing_.read) {
    executing_.read = true;
    // The initial PID namespace's inode number (PROC_PID_INIT_INO): in any
    // other, the processes outside it are not in its /proc.
    char ns[64];
    const ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns);
    if (n < 0 || std::string_view(ns, static_cast<size_t>(n)) != "pid:[4026531836]")
      executing_.unseen = SIZE_MAX;
    const int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0) {
      executing_.unseen = SIZE_MAX;
      return false;
    }
    const int err =
        internal::ForEachDirEntry(proc, [&](std::string_view name, ino_t, unsigned char) {
          if (name.empty() || name.find_first_not_of("0123456789") != std::string_view::npos)
            return;
          const std::string exe = fmt::format("{}/exe", name);
          struct stat st {};
          if (fstatat(proc, exe.c_str(), &st, 0) == 0) {
            if (S_ISREG(st.st_mode)) executing_.files.emplace(st.st_dev, st.st_ino);
          } else if (errno != ENOENT && errno != ESRCH && executing_.unseen != SIZE_MAX) {
            ++executing_.unseen;  // EACCES: another user's, or an LSM's refusal
          }
        });
    close(proc);
    if (err != 0) executing_.unseen = SIZE_MAX;  // not every process listed
  }
  return executing_.files.contains({dev, ino});
}

namespace {

// /proc/swaps' text, or nullopt when it cannot be read; "" without swap
// (CONFIG_SWAP=n: no /proc/swaps).
std::optional<std::string> ReadSwaps() {
  const int fd = open("/proc/swaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? std::optional<std::string>("") : std::nullopt;
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

}  // namespace

bool HostBackend::Swapping(uint64_t dev, uint64_t ino) {
  if (!swaps_.read) {
    swaps_.read = true;
    // Readable by anyone, and global (not per namespace); names as this
    // process's root sees them (ParseSwaps()).
    auto text = ReadSwaps();
    if (!text) {
      swaps_.unseen = SIZE_MAX;
      return false;
    }
    // Records a listed file found by its name.
    auto found = [&](const std::string& path) {
      struct stat st {};
      if (path.empty() || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
      swaps_.files.emplace(st.st_dev, st.st_ino);
      return true;
    };
    std::vector<std::string> missing;
    for (const SwapFile& sf : ParseSwaps(*text))
      if (!found(sf.path)) missing.push_back(sf.path);
    // A file turned off and removed between the read and the stat
    // (swapoff(2) comes before the unlink) is listed no more: read again,
    // and only what is still listed and still not found is unseen.
    if (!missing.empty()) {
      auto again = ReadSwaps();
      if (!again) {
        swaps_.unseen = SIZE_MAX;
        return false;
      }
      for (const SwapFile& sf : ParseSwaps(*again))
        if (std::find(missing.begin(), missing.end(), sf.path) != missing.end() && !found(sf.path))
          ++swaps_.unseen;
    }
  }
  return swaps_.files.contains({dev, ino});
}

}  // namespace pathwarden::vfs
