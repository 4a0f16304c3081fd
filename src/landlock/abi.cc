// Landlock ABI table and right names.
// Linux: include/uapi/linux/landlock.h, security/landlock/audit.c

#include "pathwarden/landlock.h"

#include <array>

namespace pathwarden::landlock {
namespace {

constexpr std::array<std::string_view, kNumFsRights> kFsNames = {
    "execute",   "write_file", "read_file", "read_dir",
    "remove_dir", "remove_file", "make_char", "make_dir",
    "make_reg",  "make_sock",  "make_fifo", "make_block",
    "make_sym",  "refer",      "truncate",  "ioctl_dev",
};
constexpr std::array<std::string_view, kNumNetRights> kNetNames = {
    "bind_tcp", "connect_tcp"};
constexpr std::array<std::string_view, kNumScopes> kScopeNames = {
    "abstract_unix_socket", "signal"};

template <size_t N>
std::optional<AccessMask> Lookup(const std::array<std::string_view, N>& names,
                                 std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return AccessMask{1} << i;
  return std::nullopt;
}

template <size_t N>
std::string Join(const std::array<std::string_view, N>& names,
                 std::string_view prefix, AccessMask mask) {
  std::string s;
  for (size_t i = 0; i < N; ++i) {
    if (!(mask & (AccessMask{1} << i))) continue;
    if (!s.empty()) s += ',';
    s += prefix;
    s += names[i];
  }
  return s;
}

}  // namespace

AbiRights RightsForAbi(int abi) {
  AbiRights r{(1u << 13) - 1, 0, 0};
  if (abi >= 2) r.fs |= kFsRefer;
  if (abi >= 3) r.fs |= kFsTruncate;
  if (abi >= 4) r.net = kNetAll;
  if (abi >= 5) r.fs |= kFsIoctlDev;
  if (abi >= 6) r.scoped = kScopeAll;
  return r;
}

std::string_view FsRightName(int bit) { return kFsNames.at(bit); }
std::string_view NetRightName(int bit) { return kNetNames.at(bit); }
std::string_view ScopeName(int bit) { return kScopeNames.at(bit); }

std::optional<AccessMask> FsRightFromName(std::string_view name) {
  return Lookup(kFsNames, name);
}
std::optional<AccessMask> NetRightFromName(std::string_view name) {
  return Lookup(kNetNames, name);
}
std::optional<AccessMask> ScopeFromName(std::string_view name) {
  return Lookup(kScopeNames, name);
}

std::string FsAuditNames(AccessMask fs) { return Join(kFsNames, "fs.", fs); }
std::string NetAuditNames(AccessMask net) {
  return Join(kNetNames, "net.", net);
}
std::string ScopeAuditNames(AccessMask scoped) {
  return Join(kScopeNames, "scope.", scoped);
}

}  // namespace pathwarden::landlock
