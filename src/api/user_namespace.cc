// A process's user namespace, as /proc shows it (pathwarden/cred.h
// ReadUserNamespace()).
// Linux: kernel/user_namespace.c proc_id_map_show(); Documentation/
// admin-guide/sysctl/kernel.rst (overflowuid, overflowgid)

#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "pathwarden/cred.h"

namespace pathwarden {

namespace {

// One /proc/PID/uid_map or gid_map: "inside outside count" per line.
Result<std::vector<IdRange>, std::string> ReadIdMap(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  std::vector<IdRange> map;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    uint64_t inside, outside, count;
    if (!(fields >> inside >> outside >> count) || inside > UINT32_MAX || outside > UINT32_MAX ||
        count > UINT32_MAX)
      return Unexpected(fmt::format("{}:{}: not \"inside outside count\"", path, n));
    map.push_back({static_cast<uint32_t>(inside), static_cast<uint32_t>(outside),
                   static_cast<uint32_t>(count)});
  }
  return map;
}

uint32_t ReadOverflowId(const char* path) {
  std::ifstream in(path);
  uint64_t v = 65534;
  if (!(in >> v) || v > UINT32_MAX) v = 65534;
  return static_cast<uint32_t>(v);
}

std::string ReadLinkText(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

Result<std::shared_ptr<const UserNamespace>, std::string> ReadUserNamespace(
    const std::string& proc) {
  auto uids = ReadIdMap(proc + "/uid_map");
  if (!uids) return Unexpected(uids.error());
  auto gids = ReadIdMap(proc + "/gid_map");
  if (!gids) return Unexpected(gids.error());
  // The initial namespace maps every id onto itself.
  const std::vector<IdRange> initial{{0, 0, UINT32_MAX}};
  if (*uids == initial && *gids == initial) return std::shared_ptr<const UserNamespace>();
  auto ns = std::make_shared<UserNamespace>();
  ns->uid_map = std::move(*uids);
  ns->gid_map = std::move(*gids);
  // The reader is inside when it is in the same namespace (a process's
  // map, read from inside, is the same text for every process of it).
  const std::string target = ReadLinkText(proc + "/ns/user");
  ns->reader_inside = !target.empty() && target == ReadLinkText("/proc/self/ns/user");
  // Its owner, in this reader's ids (NS_GET_OWNER_UID; unknown when the
  // namespace file cannot be opened).
  if (const int fd = open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    uid_t owner = 0;
    if (ioctl(fd, NS_GET_OWNER_UID, &owner) == 0) ns->owner = owner;
    close(fd);
  }
  ns->overflow_uid = ReadOverflowId("/proc/sys/kernel/overflowuid");
  ns->overflow_gid = ReadOverflowId("/proc/sys/kernel/overflowgid");
  // Unreadable: as if shown (the cost is unknowns, never a wrong answer).
  auto self_uids = ReadIdMap("/proc/self/uid_map");
  auto self_gids = ReadIdMap("/proc/self/gid_map");
  ns->overflow_shown = !self_uids || !self_gids || *self_uids != initial || *self_gids != initial;
  return std::shared_ptr<const UserNamespace>(std::move(ns));
}

}  // namespace pathwarden
