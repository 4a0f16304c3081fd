// What the predictor reads of the host and of a tracee (host_paths.h).

#include "src/trace/host_paths.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace pathwarden::trace {
namespace {

// The PT_INTERP of the ELF file open as `fd` whose first bytes are
// `head` (at least an Ehdr's), "" when none.
template <typename Ehdr, typename Phdr>
std::string ElfInterp(int fd, const unsigned char* head) {
  Ehdr eh;
  std::memcpy(&eh, head, sizeof eh);
  for (int i = 0; i < eh.e_phnum && i < 256; ++i) {
    Phdr ph;
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) !=
        static_cast<ssize_t>(sizeof ph))
      return "";
    if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > PATH_MAX) continue;
    std::string interp(ph.p_filesz, '\0');
    if (pread(fd, interp.data(), interp.size(), static_cast<off_t>(ph.p_offset)) !=
        static_cast<ssize_t>(interp.size()))
      return "";
    return interp.c_str();
  }
  return "";
}

}  // namespace

std::string ReadLinkAt(const std::string& path) {
  char buf[PATH_MAX + 1];
  const ssize_t n = readlink(path.c_str(), buf, PATH_MAX);
  if (n < 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

std::string FdLink(pid_t tid, int fd) { return ReadLinkAt(fmt::format("/proc/{}/fd/{}", tid, fd)); }

// The flags of an open fd (/proc/TID/fdinfo/N "flags:", octal), or -1.
int64_t FdFlags(pid_t tid, int fd) {
  std::ifstream in(fmt::format("/proc/{}/fdinfo/{}", tid, fd));
  std::string key, value;
  while (in >> key >> value)
    if (key == "flags:") return static_cast<int64_t>(std::stoull(value, nullptr, 8));
  return -1;
}

bool FdStat(pid_t tid, int fd, struct stat* st) {
  return stat(fmt::format("/proc/{}/fd/{}", tid, fd).c_str(), st) == 0;
}

std::string Join(const std::string& dir, const std::string& name) {
  if (name.empty()) return dir;
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// "dir/name" split at the last '/' (trailing slashes ignored).
std::pair<std::string, std::string> Split(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return {".", p};
  return {slash == 0 ? "/" : p.substr(0, slash), p.substr(slash + 1)};
}

// The real path of `abs`'s directory, joined with its last name: where a
// rule must be for what a call did to that name.
std::string RealParentJoin(const std::string& abs, std::string* parent_out) {
  auto [dir, name] = Split(abs);
  char* real = realpath(dir.c_str(), nullptr);
  std::string parent = real ? real : dir;
  std::free(real);
  if (parent_out) *parent_out = parent;
  if (name.empty() || name == "." || name == "..") {
    char* r = realpath(abs.c_str(), nullptr);
    std::string out = r ? r : abs;
    std::free(r);
    return out;
  }
  return Join(parent, name);
}

std::string RealPath(const std::string& abs) {
  char* r = realpath(abs.c_str(), nullptr);
  std::string out = r ? r : abs;
  std::free(r);
  return out;
}

// The first line's interpreter of a "#!" script, or the PT_INTERP of an
// ELF binary; "" when none. The file is read with O_NOATIME, so that
// reading changes nothing on the host; *unreadable when it cannot be.
std::string InterpreterOf(const std::string& path, bool* unreadable, bool* script) {
  *unreadable = false;
  *script = false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME | O_NOFOLLOW);
  if (fd < 0) {
    // O_NOFOLLOW: a symlink's target is read through its real path.
    if (errno == ELOOP) return InterpreterOf(RealPath(path), unreadable, script);
    *unreadable = errno == EPERM;
    return "";
  }
  unsigned char head[256];
  const ssize_t n = pread(fd, head, sizeof head, 0);
  std::string out;
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    *script = true;
    std::string line(reinterpret_cast<char*>(head) + 2, static_cast<size_t>(n - 2));
    line = line.substr(0, line.find('\n'));
    const size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos) {
      line = line.substr(b);
      out = line.substr(0, line.find_first_of(" \t"));
    }
  } else if (n >= static_cast<ssize_t>(sizeof(Elf64_Ehdr)) &&
             std::memcmp(head, ELFMAG, SELFMAG) == 0) {
    if (head[EI_CLASS] == ELFCLASS64) out = ElfInterp<Elf64_Ehdr, Elf64_Phdr>(fd, head);
    if (head[EI_CLASS] == ELFCLASS32) out = ElfInterp<Elf32_Ehdr, Elf32_Phdr>(fd, head);
  }
  close(fd);
  return out;
}

}  // namespace pathwarden::trace
