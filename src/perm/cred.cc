// Credentials and capability names.
// Linux: kernel/groups.c, include/uapi/linux/capability.h

#include "pathwarden/cred.h"

#include <sys/capability.h>

#include <algorithm>
#include <charconv>
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

bool Maps(const std::vector<IdRange>& map, uint32_t id) { return IdOutside(map, id).has_value(); }

// Whether `id`, as a request names it, maps into `ns` through `map`
// (UserNamespace::NamedUidMaps()): inside, the namespace's own; from the
// initial namespace, a kernel id, in the maps' outside ids; from a third,
// not known.
bool NamedMaps(const UserNamespace& ns, const std::vector<IdRange>& map, uint32_t id) {
  if (ns.reader_inside) return Maps(map, id);
  if (ns.overflow_shown) return ns.lenient;
  return IdInside(map, id).has_value();
}

// Whether `id`, as the reader sees it, maps into `ns` through `map`
// (UserNamespace::ShownUidMaps()). Inside, an id shown as itself maps (the
// kernel shows only mapped ids so); the overflow id stands for every
// unmapped one too, so it is known unmapped only when the namespace does
// not map it. From the initial namespace, the maps' outside ids are the
// kernel's, which is what the reader sees. From a third namespace, the
// maps show outside ids in the reader's terms, which need not be
// contiguous: not known.
// Linux: kernel/user_namespace.c map_id_up(), proc_id_map_show()
bool ShownMaps(const UserNamespace& ns, const std::vector<IdRange>& map, uint32_t id,
               uint32_t overflow) {
  if (ns.reader_inside) {
    if (ns.overflow_shown && id == overflow) return Maps(map, id) && ns.lenient;
    return true;
  }
  return NamedMaps(ns, map, id);
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t i = 0;;) {
    const size_t end = s.find(sep, i);
    out.push_back(s.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    if (end == std::string_view::npos) return out;
    i = end + 1;
  }
}

std::string MapText(const std::vector<IdRange>& map) {
  std::string out;
  for (const IdRange& r : map)
    out += fmt::format("{}{} {} {}", out.empty() ? "" : ", ", r.inside, r.outside, r.count);
  return out.empty() ? "empty" : out;
}

}  // namespace

std::optional<uint32_t> IdOutside(std::span<const IdRange> map, uint32_t inside) noexcept {
  for (const IdRange& r : map)
    if (inside >= r.inside && inside - r.inside < r.count) return r.outside + (inside - r.inside);
  return std::nullopt;
}

std::optional<uint32_t> IdInside(std::span<const IdRange> map, uint32_t outside) noexcept {
  for (const IdRange& r : map)
    if (outside >= r.outside && outside - r.outside < r.count) return r.inside + (outside - r.outside);
  return std::nullopt;
}

Result<std::vector<IdRange>, std::string> ParseIdMap(std::string_view text,
                                                    std::string_view what) {
  // Linux: kernel/user_namespace.c UID_GID_MAP_MAX_EXTENTS
  constexpr size_t kMaxRanges = 340;
  std::vector<IdRange> map;
  size_t col = 1;  // where the range starts in `text`, from 1
  for (std::string_view range : SplitOn(text, ',')) {
    auto bad = [&](std::string_view why) {
      return Unexpected(fmt::format("{}: range {} \"{}\" at character {}: {}", what,
                                    map.size() + 1, range, col, why));
    };
    const std::vector<std::string_view> f = SplitOn(range, ':');
    uint64_t v[3] = {0, 0, 0};
    bool ok = f.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) {
      auto [p, ec] = std::from_chars(f[i].data(), f[i].data() + f[i].size(), v[i]);
      ok = !f[i].empty() && ec == std::errc() && p == f[i].data() + f[i].size();
    }
    if (!ok) return bad("not INSIDE:OUTSIDE:COUNT (three ids)");
    if (v[2] == 0) return bad("the count must be at least 1");
    // The last id a range covers is 4294967294: (uid_t)-1 is never one.
    if (v[0] + v[2] > 0xffffffffu || v[1] + v[2] > 0xffffffffu)
      return bad("the range goes past id 4294967294");
    const IdRange r{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]),
                    static_cast<uint32_t>(v[2])};
    for (const IdRange& o : map) {
      const bool in = r.inside < o.inside + o.count && o.inside < r.inside + r.count;
      const bool out = r.outside < o.outside + o.count && o.outside < r.outside + r.count;
      if (in || out)
        return bad(fmt::format("it overlaps {}:{}:{} {}", o.inside, o.outside, o.count,
                               in ? "inside" : "outside"));
    }
    if (map.size() == kMaxRanges) return bad("a map holds at most 340 ranges");
    map.push_back(r);
    col += range.size() + 1;
  }
  return map;
}

bool UserNamespace::MapsUid(uint32_t id) const noexcept { return Maps(uid_map, id); }
bool UserNamespace::MapsGid(uint32_t id) const noexcept { return Maps(gid_map, id); }
bool UserNamespace::ShownUidMaps(uint32_t id) const noexcept {
  return ShownMaps(*this, uid_map, id, overflow_uid);
}
bool UserNamespace::ShownGidMaps(uint32_t id) const noexcept {
  return ShownMaps(*this, gid_map, id, overflow_gid);
}

bool UserNamespace::NamedUidMaps(uint32_t id) const noexcept {
  return NamedMaps(*this, uid_map, id);
}
bool UserNamespace::NamedGidMaps(uint32_t id) const noexcept {
  return NamedMaps(*this, gid_map, id);
}
bool UserNamespace::ShownIsRoot(uint32_t uid) const noexcept {
  if (reader_inside) return uid == 0 && Maps(uid_map, 0);
  if (overflow_shown) return lenient;
  return IdOutside(uid_map, 0) == uid;
}

std::string UserNamespace::Describe() const {
  return fmt::format("uid_map {}; gid_map {}", MapText(uid_map), MapText(gid_map));
}

bool Cred::InGroup(uint32_t gid) const noexcept {
  if (gid == fsgid) return true;
  auto g = groups();
  return std::binary_search(g.begin(), g.end(), gid);
}

}  // namespace pathwarden
