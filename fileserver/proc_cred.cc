// The caller's credentials, read from procfs for every request.

#include "fileserver/proc_cred.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace pathwarden::fileserver {

Result<Cred, std::string> ReadCred(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  char buf[8192];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += static_cast<size_t>(n);
  close(fd);
  buf[len] = '\0';
  Cred c;
  int seen = 0;
  std::vector<uint32_t> groups;
  for (char* line = buf; line != nullptr && *line != '\0';) {
    char* next = std::strchr(line, '\n');
    if (next != nullptr) *next++ = '\0';
    auto field = [&](const char* key) -> char* {
      const size_t k = std::strlen(key);
      return std::strncmp(line, key, k) == 0 ? line + k : nullptr;
    };
    char* v;
    if ((v = field("Umask:")) != nullptr) {
      c.umask = static_cast<uint32_t>(std::strtoul(v, nullptr, 8));
      ++seen;
    } else if ((v = field("Uid:")) != nullptr || (v = field("Gid:")) != nullptr) {
      uint32_t ids[4];
      for (uint32_t& id : ids) id = static_cast<uint32_t>(std::strtoul(v, &v, 10));
      if (line[0] == 'U') {
        c.ruid = ids[0], c.euid = ids[1], c.suid = ids[2], c.fsuid = ids[3];
      } else {
        c.rgid = ids[0], c.egid = ids[1], c.sgid = ids[2], c.fsgid = ids[3];
      }
      ++seen;
    } else if ((v = field("Groups:")) != nullptr) {
      for (;;) {
        char* end;
        const unsigned long g = std::strtoul(v, &end, 10);
        if (end == v) break;
        groups.push_back(static_cast<uint32_t>(g));
        v = end;
      }
      ++seen;
    } else if ((v = field("CapPrm:")) != nullptr) {
      c.cap_permitted = std::strtoull(v, nullptr, 16) & kCapAll;
      ++seen;
    } else if ((v = field("CapEff:")) != nullptr) {
      c.cap_effective = std::strtoull(v, nullptr, 16) & kCapAll;
      ++seen;
      break;  // the last one read
    }
    line = next;
  }
  if (seen != 6) return Unexpected(fmt::format("{}: a credential line is missing", path));
  c.SetGroups(std::move(groups));
  // The user namespace (pathwarden/cred.h). The link /proc/TID/ns/user
  // names it ("user:[4026531837]"): a caller in the server's own
  // namespace, when that is the initial one, costs one readlink(). Any
  // other namespace is read each time: its number can be reused once it
  // dies, and its maps are written after it is made.
  static const std::string initial = [] {
    auto self = ReadUserNamespace("/proc/self");
    char own[64];
    const ssize_t own_len = readlink("/proc/self/ns/user", own, sizeof own);
    return self && *self == nullptr && own_len > 0 ? std::string(own, static_cast<size_t>(own_len))
                                                 : std::string();
  }();
  std::snprintf(path, sizeof path, "/proc/%d/ns/user", tid);
  char link[64];
  const ssize_t ln = readlink(path, link, sizeof link);
  if (ln <= 0) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  if (initial.empty() || std::string_view(link, static_cast<size_t>(ln)) != initial) {
    std::snprintf(path, sizeof path, "/proc/%d", tid);
    auto ns = ReadUserNamespace(path);
    if (!ns) return Unexpected(ns.error());
    c.userns = std::move(*ns);
  }
  return c;
}

}  // namespace pathwarden::fileserver
