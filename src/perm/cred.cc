// Credentials and capability names.
// Linux: kernel/groups.c, include/uapi/linux/capability.h

#include "pathwarden/cred.h"

#include <sys/capability.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace pathwarden {

std::optional<int> CapFromName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  if (lower.rfind("cap_", 0) != 0) return std::nullopt;
  cap_value_t v;
  if (cap_from_name(lower.c_str(), &v) != 0) return std::nullopt;
  if (v < 0 || v > kCapLast) return std::nullopt;
  return static_cast<int>(v);
}

std::string CapName(int cap) {
  char* n = cap_to_name(static_cast<cap_value_t>(cap));
  std::string s = n ? n : "cap_" + std::to_string(cap);
  cap_free(n);
  for (char& c : s) c = static_cast<char>(std::toupper(c));
  return s;
}

Cred Cred::ForUser(uint32_t uid, uint32_t gid) {
  Cred c;
  c.ruid = c.euid = c.suid = c.fsuid = uid;
  c.rgid = c.egid = c.sgid = c.fsgid = gid;
  c.cap_effective = c.cap_permitted = uid == 0 ? kCapAll : 0;
  return c;
}

void Cred::SetGroups(std::vector<uint32_t> groups) {
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (groups.empty()) {
    groups_.reset();
  } else {
    groups_ = std::make_shared<const std::vector<uint32_t>>(std::move(groups));
  }
}

namespace {

bool Maps(const std::vector<IdRange>& map, uint32_t id) {
  for (const IdRange& r : map)
    if (id >= r.inside && id - r.inside < r.count) return true;
  return false;
}

std::string MapText(const std::vector<IdRange>& map) {
  std::string out;
  for (const IdRange& r : map)
    out += fmt::format("{}{} {} {}", out.empty() ? "" : ", ", r.inside, r.outside, r.count);
  return out.empty() ? "empty" : out;
}

}  // namespace

bool UserNamespace::MapsUid(uint32_t id) const noexcept { return Maps(uid_map, id); }
bool UserNamespace::MapsGid(uint32_t id) const noexcept { return Maps(gid_map, id); }

std::string UserNamespace::Describe() const {
  return fmt::format("uid_map {}; gid_map {}", MapText(uid_map), MapText(gid_map));
}

bool Cred::InGroup(uint32_t gid) const noexcept {
  if (gid == fsgid) return true;
  auto g = groups();
  return std::binary_search(g.begin(), g.end(), gid);
}

}  // namespace pathwarden
