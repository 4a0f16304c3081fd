// POSIX ACL values: parsing, printing and Linux's mode arithmetic.
// Linux: fs/posix_acl.c

#include "pathwarden/acl.h"

#include <algorithm>
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

}  // namespace pathwarden
