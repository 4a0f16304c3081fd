// File: pathwarden/landlock.h
//
// Landlock's userspace ABI as Linux 6.18 defines it (ABI 7), carried here
// because Debian's <linux/landlock.h> stops at ABI 2: access-right bits,
// scopes, syscall flags, their audit names, and which ABI added what.
//
// The values are the kernel's interface (include/uapi/linux/landlock.h,
// "GPL-2.0 WITH Linux-syscall-note"); names follow the audit strings of
// security/landlock/audit.c.

#ifndef PATHWARDEN_LANDLOCK_H_
#define PATHWARDEN_LANDLOCK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden::landlock {

using AccessMask = uint32_t;

// Filesystem rights (LANDLOCK_ACCESS_FS_*).
inline constexpr AccessMask kFsExecute = 1u << 0;
inline constexpr AccessMask kFsWriteFile = 1u << 1;
inline constexpr AccessMask kFsReadFile = 1u << 2;
inline constexpr AccessMask kFsReadDir = 1u << 3;
inline constexpr AccessMask kFsRemoveDir = 1u << 4;
inline constexpr AccessMask kFsRemoveFile = 1u << 5;
inline constexpr AccessMask kFsMakeChar = 1u << 6;
inline constexpr AccessMask kFsMakeDir = 1u << 7;
inline constexpr AccessMask kFsMakeReg = 1u << 8;
inline constexpr AccessMask kFsMakeSock = 1u << 9;
inline constexpr AccessMask kFsMakeFifo = 1u << 10;
inline constexpr AccessMask kFsMakeBlock = 1u << 11;
inline constexpr AccessMask kFsMakeSym = 1u << 12;
inline constexpr AccessMask kFsRefer = 1u << 13;     // ABI 2
inline constexpr AccessMask kFsTruncate = 1u << 14;  // ABI 3
inline constexpr AccessMask kFsIoctlDev = 1u << 15;  // ABI 5
inline constexpr int kNumFsRights = 16;
inline constexpr AccessMask kFsAll = (1u << kNumFsRights) - 1;

// Rights a rule on a non-directory may carry (security/landlock/fs.c
// ACCESS_FILE).
inline constexpr AccessMask kFsFileRights =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

// Network rights (LANDLOCK_ACCESS_NET_*), ABI 4.
inline constexpr AccessMask kNetBindTcp = 1u << 0;
inline constexpr AccessMask kNetConnectTcp = 1u << 1;
inline constexpr int kNumNetRights = 2;
inline constexpr AccessMask kNetAll = (1u << kNumNetRights) - 1;

// Scopes (LANDLOCK_SCOPE_*), ABI 6.
inline constexpr AccessMask kScopeAbstractUnixSocket = 1u << 0;
inline constexpr AccessMask kScopeSignal = 1u << 1;
inline constexpr int kNumScopes = 2;
inline constexpr AccessMask kScopeAll = (1u << kNumScopes) - 1;

// Syscall-level constants.
inline constexpr int kMaxLayers = 16;  // LANDLOCK_MAX_NUM_LAYERS
inline constexpr uint32_t kCreateRulesetVersion = 1u << 0;
inline constexpr uint32_t kCreateRulesetErrata = 1u << 1;
inline constexpr int kRulePathBeneath = 1;  // LANDLOCK_RULE_PATH_BENEATH
inline constexpr int kRuleNetPort = 2;      // LANDLOCK_RULE_NET_PORT
inline constexpr uint32_t kRestrictSelfLogSameExecOff = 1u << 0;
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1u << 1;
inline constexpr uint32_t kRestrictSelfLogSubdomainsOff = 1u << 2;

// The highest ABI the modelled kernel (Linux 6.18) implements.
inline constexpr int kAbiLatest = 7;

// AbiRights
//
// What one ABI version knows.
struct AbiRights {
  AccessMask fs;
  AccessMask net;
  AccessMask scoped;
};

// RightsForAbi()
//
// ABI 1: fs bits 0-12; 2: +refer; 3: +truncate; 4: +network; 5: +ioctl_dev;
// 6: +scopes; 7: audit flags only. Out-of-range values clamp.
AbiRights RightsForAbi(int abi);

// FsRightName() / NetRightName() / ScopeName()
//
// The unprefixed scenario name of one bit ("read_file"); the audit name is
// "fs." + it ("fs.read_file"), "net." or "scope." for the others.
std::string_view FsRightName(int bit);
std::string_view NetRightName(int bit);
std::string_view ScopeName(int bit);

std::optional<AccessMask> FsRightFromName(std::string_view name);
std::optional<AccessMask> NetRightFromName(std::string_view name);
std::optional<AccessMask> ScopeFromName(std::string_view name);

// AuditNames()
//
// "fs.read_file,fs.refer" for a mask of filesystem rights (bit order).
std::string FsAuditNames(AccessMask fs);
std::string NetAuditNames(AccessMask net);
std::string ScopeAuditNames(AccessMask scoped);

}  // namespace pathwarden::landlock
PATHWARDEN_API_END

#endif  // PATHWARDEN_LANDLOCK_H_
