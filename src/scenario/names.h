// Symbolic names of the flags, ioctl commands and node types that scenario
// files use, with the Linux values they stand for.

#ifndef PATHWARDEN_SRC_SCENARIO_NAMES_H_
#define PATHWARDEN_SRC_SCENARIO_NAMES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pathwarden/scenario.h"

namespace pathwarden::scenario_internal {

struct FlagName {
  std::string_view name;
  uint64_t value;
};

// Which flag family an operation's `flags` key takes.
enum class FlagFamily {
  kNone,
  kOpen,      // O_*
  kAccess,    // R_OK.. in access_mode, AT_EACCESS|AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH
  kAtNofollow,  // AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH (stat, chmod, chown, exec_check, utimensat)
  kLink,      // AT_SYMLINK_FOLLOW|AT_EMPTY_PATH
  kUnlink,    // AT_REMOVEDIR
  kRename,    // RENAME_*
  kMount,     // MS_* (mount_tmpfs)
  kBind,      // MS_REC (bind_mount)
  kUmount,    // MNT_DETACH|MNT_FORCE|UMOUNT_NOFOLLOW
};
FlagFamily FamilyFor(Op op);
std::span<const FlagName> FlagsOf(FlagFamily f);

// Access modes of access(): R_OK, W_OK, X_OK, F_OK.
std::span<const FlagName> AccessModeNames();

// IoctlFromName()
//
// "FIONREAD" to its command number; also accepts a number ("0x541b").
std::optional<uint32_t> IoctlFromName(std::string_view name);
std::string IoctlName(uint32_t cmd);

std::optional<NodeType> NodeTypeFromName(std::string_view name);

}  // namespace pathwarden::scenario_internal

#endif  // PATHWARDEN_SRC_SCENARIO_NAMES_H_
