// The vocabularies of scenario files, each in one table here (the
// operations' names and keys are their codec rows', op_codec.h): node
// types and the types mknod makes, mount flags and inode attributes (with
// the Linux values they stand for), utimensat's `times`, the flags of
// each flag family, and ioctl commands. The parser, the writer, the
// descriptions, the kernel executor and the fuzzer all read them here.

#ifndef PATHWARDEN_SRC_SCENARIO_NAMES_H_
#define PATHWARDEN_SRC_SCENARIO_NAMES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/landlock.h"
#include "pathwarden/scenario.h"
#include "src/scenario/op_codec.h"

namespace pathwarden::scenario_internal {

struct FlagName {
  std::string_view name;
  uint64_t value;
};

// Which flag family an operation's `flags` key takes (its codec row's).
FlagFamily FamilyFor(Op op);
// The open flags begin with the access modes O_RDONLY, O_WRONLY, O_RDWR
// (values 0, 1, 2).
std::span<const FlagName> FlagsOf(FlagFamily f);

// `xattr_flags`: XATTR_CREATE, XATTR_REPLACE.
std::span<const FlagName> XattrFlagNames();

// `attr_set`, `attr_clr` (mount_setattr): MOUNT_ATTR_*, but IDMAP (which
// takes a user namespace the format cannot name). MountAttrText() writes
// a value with these names ("MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOSUID"; "" for
// 0, bits without a name in hex).
std::span<const FlagName> MountAttrNames();
std::string MountAttrText(uint64_t attrs);

// Access modes of access(): R_OK, W_OK, X_OK, F_OK.
std::span<const FlagName> AccessModeNames();

// IoctlFromName()
//
// "FIONREAD" to its command number; also accepts a number ("0x541b").
std::optional<uint32_t> IoctlFromName(std::string_view name);
std::string IoctlName(uint32_t cmd);

// The step keys an operation takes besides `as`, `op` and `expect`: the
// required ones, then the optional ones.
struct StepKeys {
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
};
const StepKeys& StepKeysFor(Op op);
// Whether `op` takes `key` (required or optional).
bool StepTakes(Op op, std::string_view key);
// Whether some operation takes `key`.
bool IsStepKey(std::string_view key);

std::optional<NodeType> NodeTypeFromName(std::string_view name);
// The types a mknod step makes: file, fifo, socket, char, block, dir.
std::span<const NodeType> MknodTypes();

// A bit of the model's (kMount*, kAttr*), its name in the format, and the
// Linux flag it stands for (MS_*, FS_*_FL).
struct FlagBit {
  std::string_view name;
  uint32_t bit;
  uint64_t linux_flag;
};
// `mount_flags`: ro, noexec, nosuid, nodev, nosymfollow (MS_*).
std::span<const FlagBit> MountFlagBits();
// `attrs`: immutable, append (FS_IMMUTABLE_FL, FS_APPEND_FL).
std::span<const FlagBit> AttrBits();
std::optional<uint32_t> BitFromName(std::span<const FlagBit> table, std::string_view name);
// The names of the bits set in `bits`, in the table's order.
std::vector<std::string_view> BitNames(std::span<const FlagBit> table, uint32_t bits);
// The Linux flags of the bits set in `bits`.
uint64_t LinuxFlags(std::span<const FlagBit> table, uint32_t bits);

// utimensat's `times`: now, omit, set.
std::optional<TimeSpec> TimeSpecFromName(std::string_view name);
std::string_view TimeSpecName(TimeSpec t);
std::vector<std::string_view> TimeSpecNames();

// RightNames()
//
// The names of the rights set in `m` of the `n` that `name` names (the
// landlock::FsRightName() family), lowest bit first.
std::vector<std::string_view> RightNames(landlock::AccessMask m, int n,
                                         std::string_view (*name)(int));

// Alternatives()
//
// "a, b or c" (for messages that list what a key takes).
std::string Alternatives(std::span<const std::string_view> names);

}  // namespace pathwarden::scenario_internal

#endif  // PATHWARDEN_SRC_SCENARIO_NAMES_H_
