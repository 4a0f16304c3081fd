// POSIX ACL values: parsing, printing and Linux's mode arithmetic.
// Linux: fs/posix_acl.c

#include "pathwarden/acl.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

namespace pathwarden {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' ||
                        s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Result<uint8_t, std::string> ParsePerm(std::string_view p) {
  if (p.size() == 1 && p[0] >= '0' && p[0] <= '7')
    return static_cast<uint8_t>(p[0] - '0');
  if (p.empty() || p.size() > 3)
    return Unexpected(fmt::format("bad permissions \"{}\"", p));
  uint8_t perm = 0;
  for (char c : p) {
    switch (c) {
      case 'r': perm |= 4; break;
      case 'w': perm |= 2; break;
      case 'x': perm |= 1; break;
      case '-': break;
      default:
        return Unexpected(fmt::format("bad permissions \"{}\"", p));
    }
  }
  return perm;
}

}  // namespace

std::string PermString(uint32_t perm) {
  std::string s = "---";
  if (perm & 4) s[0] = 'r';
  if (perm & 2) s[1] = 'w';
  if (perm & 1) s[2] = 'x';
  return s;
}

PosixAcl PosixAcl::FromMode(uint32_t mode) {
  PosixAcl acl;
  acl.entries_ = {{AclTag::kUserObj, static_cast<uint8_t>((mode >> 6) & 7), 0},
                  {AclTag::kGroupObj, static_cast<uint8_t>((mode >> 3) & 7), 0},
                  {AclTag::kOther, static_cast<uint8_t>(mode & 7), 0}};
  return acl;
}

Result<std::vector<AclEntry>, std::string> PosixAcl::ParseEntries(
    std::string_view text) {
  std::vector<AclEntry> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    if (item.empty()) continue;
    // tag ":" [qualifier] ":" perms, or tag ":" perms for m and o.
    size_t c1 = item.find(':');
    if (c1 == std::string_view::npos)
      return Unexpected(fmt::format("ACL entry \"{}\" lacks ':'", item));
    std::string_view tag = item.substr(0, c1);
    std::string_view rest = item.substr(c1 + 1);
    std::string_view qual, perms;
    size_t c2 = rest.find(':');
    if (c2 == std::string_view::npos) {
      perms = rest;
    } else {
      qual = rest.substr(0, c2);
      perms = rest.substr(c2 + 1);
    }
    AclEntry e{};
    bool named_ok = false;
    if (tag == "u" || tag == "user") {
      e.tag = AclTag::kUserObj;
      named_ok = true;
    } else if (tag == "g" || tag == "group") {
      e.tag = AclTag::kGroupObj;
      named_ok = true;
    } else if (tag == "m" || tag == "mask") {
      e.tag = AclTag::kMask;
    } else if (tag == "o" || tag == "other") {
      e.tag = AclTag::kOther;
    } else {
      return Unexpected(fmt::format("unknown ACL tag \"{}\"", tag));
    }
    if (c2 == std::string_view::npos && named_ok)
      return Unexpected(
          fmt::format("ACL entry \"{}\" needs tag:qualifier:perms", item));
    if (!qual.empty()) {
      if (!named_ok)
        return Unexpected(
            fmt::format("ACL entry \"{}\" takes no qualifier", item));
      uint32_t id = 0;
      auto [p, ec] = std::from_chars(qual.data(), qual.data() + qual.size(), id);
      if (ec != std::errc() || p != qual.data() + qual.size())
        return Unexpected(
            fmt::format("ACL qualifier \"{}\" is not a numeric id", qual));
      // Linux: fs/posix_acl.c posix_acl_from_xattr(): make_kuid() of
      // (uid_t)-1 is invalid (EINVAL), in any namespace.
      if (id == kAclNoId)
        return Unexpected(fmt::format(
            "ACL qualifier {} is (uid_t)-1, which no user or group can be (Linux refuses it: "
            "EINVAL)",
            id));
      e.id = id;
      e.tag = e.tag == AclTag::kUserObj ? AclTag::kUser : AclTag::kGroup;
    }
    auto perm = ParsePerm(perms);
    if (!perm) return Unexpected(perm.error());
    e.perm = *perm;
    out.push_back(e);
  }
  return out;
}

void PosixAcl::Sort() {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const AclEntry& a, const AclEntry& b) {
                     if (a.tag != b.tag) return a.tag < b.tag;
                     return a.id < b.id;
                   });
}

AclEntry* PosixAcl::Find(AclTag tag, uint32_t id) noexcept {
  for (auto& e : entries_)
    if (e.tag == tag && e.id == id) return &e;
  return nullptr;
}
const AclEntry* PosixAcl::Find(AclTag tag, uint32_t id) const noexcept {
  for (const auto& e : entries_)
    if (e.tag == tag && e.id == id) return &e;
  return nullptr;
}

void PosixAcl::Modify(const std::vector<AclEntry>& entries) {
  bool mask_given = false;
  for (const AclEntry& e : entries) {
    if (e.tag == AclTag::kMask) mask_given = true;
    if (AclEntry* old = Find(e.tag, e.id)) {
      old->perm = e.perm;
    } else {
      entries_.push_back(e);
    }
  }
  bool named = std::any_of(entries_.begin(), entries_.end(), [](auto& e) {
    return e.tag == AclTag::kUser || e.tag == AclTag::kGroup;
  });
  AclEntry* mask = Find(AclTag::kMask);
  if (!mask_given && (named || mask)) {
    uint8_t u = 0;
    for (const auto& e : entries_)
      if (e.tag == AclTag::kUser || e.tag == AclTag::kGroup ||
          e.tag == AclTag::kGroupObj)
        u |= e.perm;
    if (mask) {
      mask->perm = u;
    } else {
      entries_.push_back({AclTag::kMask, u, 0});
    }
  }
  Sort();
}

bool PosixAcl::EquivMode(uint32_t* mode_p) const noexcept {
  uint32_t mode = 0;
  bool not_equiv = false;
  for (const auto& e : entries_) {
    switch (e.tag) {
      case AclTag::kUserObj: mode |= (e.perm & 7u) << 6; break;
      case AclTag::kGroupObj: mode |= (e.perm & 7u) << 3; break;
      case AclTag::kOther: mode |= e.perm & 7u; break;
      case AclTag::kMask:
        // Sorted order puts the mask after the owning group: it wins.
        mode = (mode & ~070u) | ((e.perm & 7u) << 3);
        not_equiv = true;
        break;
      case AclTag::kUser:
      case AclTag::kGroup: not_equiv = true; break;
    }
  }
  *mode_p = (*mode_p & ~0777u) | mode;
  return !not_equiv;
}

void PosixAcl::Chmod(uint32_t mode) noexcept {
  AclEntry* mask = Find(AclTag::kMask);
  for (auto& e : entries_) {
    switch (e.tag) {
      case AclTag::kUserObj: e.perm = (mode >> 6) & 7; break;
      case AclTag::kGroupObj:
        if (!mask) e.perm = (mode >> 3) & 7;
        break;
      case AclTag::kMask: e.perm = (mode >> 3) & 7; break;
      case AclTag::kOther: e.perm = mode & 7; break;
      default: break;
    }
  }
}

bool PosixAcl::CreateMasq(uint32_t* mode_p) noexcept {
  uint32_t mode = *mode_p;
  AclEntry* group_obj = nullptr;
  AclEntry* mask_obj = nullptr;
  bool not_equiv = false;
  for (auto& e : entries_) {
    switch (e.tag) {
      case AclTag::kUserObj:
        e.perm &= (mode >> 6) & 7;
        mode &= (static_cast<uint32_t>(e.perm) << 6) | ~0700u;
        break;
      case AclTag::kUser:
      case AclTag::kGroup: not_equiv = true; break;
      case AclTag::kGroupObj: group_obj = &e; break;
      case AclTag::kOther:
        e.perm &= mode & 7;
        mode &= e.perm | ~07u;
        break;
      case AclTag::kMask:
        mask_obj = &e;
        not_equiv = true;
        break;
    }
  }
  AclEntry* g = mask_obj ? mask_obj : group_obj;
  if (g) {
    g->perm &= (mode >> 3) & 7;
    mode &= (static_cast<uint32_t>(g->perm) << 3) | ~070u;
  }
  *mode_p = mode;
  return not_equiv;
}

std::string PosixAcl::ToText() const { return AclEntriesToText(entries_); }

std::string AclEntriesToText(const std::vector<AclEntry>& entries) {
  std::string s;
  for (const auto& e : entries) {
    if (!s.empty()) s += ',';
    switch (e.tag) {
      case AclTag::kUserObj: s += "u::"; break;
      case AclTag::kUser: s += fmt::format("u:{}:", e.id); break;
      case AclTag::kGroupObj: s += "g::"; break;
      case AclTag::kGroup: s += fmt::format("g:{}:", e.id); break;
      case AclTag::kMask: s += "m::"; break;
      case AclTag::kOther: s += "o::"; break;
    }
    s += PermString(e.perm);
  }
  return s;
}

// Linux: fs/posix_acl.c posix_acl_from_xattr(), posix_acl_to_xattr(),
// posix_acl_valid()
Result<std::vector<AclEntry>, int> AclEntriesFromXattr(std::string_view value,
                                                      bool drop_invalid_ids) {
  std::vector<AclEntry> out;
  if (value.empty()) return out;
  constexpr size_t kHeader = 4, kEntry = 8;
  auto le16 = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<unsigned char>(value[at])) |
           static_cast<uint32_t>(static_cast<unsigned char>(value[at + 1])) << 8;
  };
  auto le32 = [&](size_t at) { return le16(at) | le16(at + 2) << 16; };
  if (value.size() < kHeader) return Unexpected(EINVAL);
  if (le32(0) != 2) return Unexpected(EOPNOTSUPP);
  if ((value.size() - kHeader) % kEntry != 0) return Unexpected(EINVAL);
  for (size_t at = kHeader; at < value.size(); at += kEntry) {
    const uint32_t tag = le16(at), perm = le16(at + 2), id = le32(at + 4);
    AclEntry e{AclTag::kUserObj, 0, 0};
    switch (tag) {
      case 0x01: e.tag = AclTag::kUserObj; break;
      case 0x04: e.tag = AclTag::kGroupObj; break;
      case 0x10: e.tag = AclTag::kMask; break;
      case 0x20: e.tag = AclTag::kOther; break;
      case 0x02:
      case 0x08:
        e.tag = tag == 0x02 ? AclTag::kUser : AclTag::kGroup;
        if (id == 0xffffffffu) {
          if (drop_invalid_ids) continue;
          return Unexpected(EINVAL);
        }
        e.id = id;
        break;
      default: return Unexpected(EINVAL);
    }
    // posix_acl_valid() refuses other bits; keep them visible to it.
    e.perm = static_cast<uint8_t>(perm > 0xff ? 0xff : perm);
    out.push_back(e);
  }
  return out;
}

std::string AclEntriesToXattr(const std::vector<AclEntry>& entries) {
  std::string out;
  auto put16 = [&](uint32_t v) {
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
  };
  auto put32 = [&](uint32_t v) {
    put16(v & 0xffff);
    put16(v >> 16);
  };
  put32(2);
  for (const AclEntry& e : entries) {
    put16(static_cast<uint32_t>(e.tag));
    put16(e.perm);
    const bool named = e.tag == AclTag::kUser || e.tag == AclTag::kGroup;
    put32(named ? e.id : 0xffffffffu);
  }
  return out;
}

Result<PosixAcl, int> AclFromValidEntries(const std::vector<AclEntry>& entries) {
  // posix_acl_valid()'s states.
  enum { kUserObj, kUsers, kGroups, kOther, kDone } state = kUserObj;
  bool needs_mask = false, in_order = true;
  const AclEntry* prev = nullptr;
  for (const AclEntry& e : entries) {
    if (e.perm & ~7u) return Unexpected(EINVAL);
    switch (e.tag) {
      case AclTag::kUserObj:
        if (state != kUserObj) return Unexpected(EINVAL);
        state = kUsers;
        break;
      case AclTag::kUser:
        if (state != kUsers) return Unexpected(EINVAL);
        needs_mask = true;
        break;
      case AclTag::kGroupObj:
        if (state != kUsers) return Unexpected(EINVAL);
        state = kGroups;
        break;
      case AclTag::kGroup:
        if (state != kGroups) return Unexpected(EINVAL);
        needs_mask = true;
        break;
      case AclTag::kMask:
        if (state != kGroups) return Unexpected(EINVAL);
        state = kOther;
        break;
      case AclTag::kOther:
        if (state != kOther && !(state == kGroups && !needs_mask)) return Unexpected(EINVAL);
        state = kDone;
        break;
      default: return Unexpected(EINVAL);
    }
    if (prev && prev->tag == e.tag && (e.tag == AclTag::kUser || e.tag == AclTag::kGroup) &&
        prev->id >= e.id)
      in_order = false;
    prev = &e;
  }
  if (state != kDone) return Unexpected(EINVAL);
  if (!in_order) return Unexpected(kAclOutsideModel);
  PosixAcl acl = PosixAcl::FromMode(0);
  acl.Modify(entries);
  return acl;
}

}  // namespace pathwarden
