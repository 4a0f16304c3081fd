// The vocabularies of the scenario format, one table each (names.h).

#include "pathwarden/uapi.h"
#include "src/scenario/names.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace pathwarden::scenario_internal {
namespace {

template <typename T>
struct Name {
  std::string_view name;
  T value;
};

constexpr Name<NodeType> kNodeTypes[] = {
    {"file", NodeType::kFile},     {"dir", NodeType::kDir},
    {"symlink", NodeType::kSymlink}, {"fifo", NodeType::kFifo},
    {"socket", NodeType::kSocket},   {"char", NodeType::kChar},
    {"block", NodeType::kBlock},     {"tmpfs", NodeType::kTmpfs},
    {"bind", NodeType::kBind},
};
constexpr NodeType kMknodTypes[] = {NodeType::kFile, NodeType::kFifo,  NodeType::kSocket,
                                    NodeType::kChar, NodeType::kBlock, NodeType::kDir};

constexpr FlagBit kMountFlagBits[] = {
    {"ro", kMountRdonly, MS_RDONLY},
    {"noexec", kMountNoexec, MS_NOEXEC},
    {"nosuid", kMountNosuid, MS_NOSUID},
    {"nodev", kMountNodev, MS_NODEV},
    {"nosymfollow", kMountNosymfollow, kMsNosymfollow},
};
constexpr FlagBit kAttrBits[] = {
    {"immutable", kAttrImmutable, FS_IMMUTABLE_FL},
    {"append", kAttrAppend, FS_APPEND_FL},
};

constexpr Name<TimeSpec> kTimeSpecs[] = {
    {"now", TimeSpec::kNow}, {"omit", TimeSpec::kOmit}, {"set", TimeSpec::kSet}};

// Values Debian's 6.1 headers may lack (include/uapi/linux/*.h of 6.18).
constexpr uint32_t kFsIocGetFsUuid = 0x80111500;       // _IOR(0x15, 0, 17)
constexpr uint32_t kFsIocGetFsSysfsPath = 0x80811501;  // _IOR(0x15, 1, 129)

constexpr std::array kOpenFlags = {
    FlagName{"O_RDONLY", O_RDONLY},     FlagName{"O_WRONLY", O_WRONLY},
    FlagName{"O_RDWR", O_RDWR},         FlagName{"O_CREAT", O_CREAT},
    FlagName{"O_EXCL", O_EXCL},         FlagName{"O_NOCTTY", O_NOCTTY},
    FlagName{"O_TRUNC", O_TRUNC},       FlagName{"O_APPEND", O_APPEND},
    FlagName{"O_NONBLOCK", O_NONBLOCK}, FlagName{"O_DSYNC", O_DSYNC},
    FlagName{"O_SYNC", O_SYNC},         FlagName{"O_DIRECTORY", O_DIRECTORY},
    FlagName{"O_NOFOLLOW", O_NOFOLLOW}, FlagName{"O_CLOEXEC", O_CLOEXEC},
    FlagName{"O_PATH", O_PATH},         FlagName{"O_NOATIME", O_NOATIME},
    FlagName{"O_LARGEFILE", 0},
};
static_assert(kOpenFlags[0].value == O_RDONLY && kOpenFlags[1].value == O_WRONLY &&
                  kOpenFlags[2].value == O_RDWR,
              "FlagsOf(kOpen) begins with the access modes (names.h)");
constexpr std::array kAccessFlags = {
    FlagName{"AT_EACCESS", AT_EACCESS},
    FlagName{"AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW},
    FlagName{"AT_EMPTY_PATH", AT_EMPTY_PATH},
};
constexpr std::array kAccessModes = {
    FlagName{"F_OK", F_OK}, FlagName{"R_OK", R_OK}, FlagName{"W_OK", W_OK},
    FlagName{"X_OK", X_OK}};
constexpr std::array kAtNofollowFlags = {
    FlagName{"AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW},
    FlagName{"AT_EMPTY_PATH", AT_EMPTY_PATH},
};
constexpr std::array kLinkFlags = {
    FlagName{"AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW},
    FlagName{"AT_EMPTY_PATH", AT_EMPTY_PATH},
};
constexpr std::array kUnlinkFlags = {
    FlagName{"AT_REMOVEDIR", AT_REMOVEDIR},
};
constexpr std::array kRenameFlags = {
    FlagName{"RENAME_NOREPLACE", RENAME_NOREPLACE},
    FlagName{"RENAME_EXCHANGE", RENAME_EXCHANGE},
    FlagName{"RENAME_WHITEOUT", RENAME_WHITEOUT},
};
constexpr std::array kMountFlags = {
    FlagName{"MS_RDONLY", MS_RDONLY},   FlagName{"MS_NOSUID", MS_NOSUID},
    FlagName{"MS_NODEV", MS_NODEV},     FlagName{"MS_NOEXEC", MS_NOEXEC},
    FlagName{"MS_NOSYMFOLLOW", kMsNosymfollow},
};
constexpr std::array kBindFlags = {
    FlagName{"MS_REC", MS_REC},
};
constexpr std::array kUmountFlags = {
    FlagName{"MNT_FORCE", MNT_FORCE},
    FlagName{"MNT_DETACH", MNT_DETACH},
    FlagName{"UMOUNT_NOFOLLOW", UMOUNT_NOFOLLOW},
};

constexpr std::array kMountSetattrFlags = {
    FlagName{"AT_EMPTY_PATH", AT_EMPTY_PATH},
    FlagName{"AT_RECURSIVE", kAtRecursive},
    FlagName{"AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW},
    FlagName{"AT_NO_AUTOMOUNT", AT_NO_AUTOMOUNT},
};
// The atime mask before the modes it holds, so that a mask is written as
// its own name (MountAttrNames()).
constexpr std::array kMountAttrs = {
    FlagName{"MOUNT_ATTR_RDONLY", kMountAttrRdonly},
    FlagName{"MOUNT_ATTR_NOSUID", kMountAttrNosuid},
    FlagName{"MOUNT_ATTR_NODEV", kMountAttrNodev},
    FlagName{"MOUNT_ATTR_NOEXEC", kMountAttrNoexec},
    FlagName{"MOUNT_ATTR__ATIME", kMountAttrAtime},
    FlagName{"MOUNT_ATTR_RELATIME", kMountAttrRelatime},
    FlagName{"MOUNT_ATTR_NOATIME", kMountAttrNoatime},
    FlagName{"MOUNT_ATTR_STRICTATIME", kMountAttrStrictatime},
    FlagName{"MOUNT_ATTR_NODIRATIME", kMountAttrNodiratime},
    FlagName{"MOUNT_ATTR_NOSYMFOLLOW", kMountAttrNosymfollow},
};

constexpr std::array kFallocateFlags = {
    FlagName{"FALLOC_FL_KEEP_SIZE", 0x01},      FlagName{"FALLOC_FL_PUNCH_HOLE", 0x02},
    FlagName{"FALLOC_FL_NO_HIDE_STALE", 0x04},  FlagName{"FALLOC_FL_COLLAPSE_RANGE", 0x08},
    FlagName{"FALLOC_FL_ZERO_RANGE", 0x10},     FlagName{"FALLOC_FL_INSERT_RANGE", 0x20},
    FlagName{"FALLOC_FL_UNSHARE_RANGE", 0x40},  FlagName{"FALLOC_FL_WRITE_ZEROES", 0x80},
};
constexpr std::array kXattrFlags = {
    FlagName{"XATTR_CREATE", 0x1},
    FlagName{"XATTR_REPLACE", 0x2},
};

constexpr std::array kIoctls = {
    FlagName{"FIOCLEX", FIOCLEX},
    FlagName{"FIONCLEX", FIONCLEX},
    FlagName{"FIONBIO", FIONBIO},
    FlagName{"FIOASYNC", FIOASYNC},
    FlagName{"FIOQSIZE", FIOQSIZE},
    FlagName{"FIONREAD", FIONREAD},
    FlagName{"FIFREEZE", FIFREEZE},
    FlagName{"FITHAW", FITHAW},
    FlagName{"FS_IOC_FIEMAP", FS_IOC_FIEMAP},
    FlagName{"FIGETBSZ", FIGETBSZ},
    FlagName{"FICLONE", FICLONE},
    FlagName{"FICLONERANGE", FICLONERANGE},
    FlagName{"FIDEDUPERANGE", FIDEDUPERANGE},
    FlagName{"FS_IOC_GETFSUUID", kFsIocGetFsUuid},
    FlagName{"FS_IOC_GETFSSYSFSPATH", kFsIocGetFsSysfsPath},
    FlagName{"FS_IOC_GETFLAGS", FS_IOC_GETFLAGS},
    FlagName{"FS_IOC_SETFLAGS", FS_IOC_SETFLAGS},
    FlagName{"FIBMAP", FIBMAP},
    FlagName{"TCGETS", 0x5401},
};

}  // namespace

FlagFamily FamilyFor(Op op) { return CodecOf(op).flags; }

std::span<const FlagName> FlagsOf(FlagFamily f) {
  switch (f) {
    case FlagFamily::kOpen: return kOpenFlags;
    case FlagFamily::kAccess: return kAccessFlags;
    case FlagFamily::kAtNofollow: return kAtNofollowFlags;
    case FlagFamily::kLink: return kLinkFlags;
    case FlagFamily::kUnlink: return kUnlinkFlags;
    case FlagFamily::kRename: return kRenameFlags;
    case FlagFamily::kMount: return kMountFlags;
    case FlagFamily::kBind: return kBindFlags;
    case FlagFamily::kUmount: return kUmountFlags;
    case FlagFamily::kFallocate: return kFallocateFlags;
    case FlagFamily::kMountSetattr: return kMountSetattrFlags;
    case FlagFamily::kNone: break;
  }
  return {};
}

std::span<const FlagName> XattrFlagNames() { return kXattrFlags; }

std::span<const FlagName> MountAttrNames() { return kMountAttrs; }

std::string MountAttrText(uint64_t attrs) {
  std::string s;
  uint64_t left = attrs;
  for (const FlagName& f : kMountAttrs) {
    if (f.value == 0 || (left & f.value) != f.value) continue;
    s += (s.empty() ? "" : "|") + std::string(f.name);
    left &= ~f.value;
  }
  if (left) s += fmt::format("{}{:#x}", s.empty() ? "" : "|", left);
  return s;
}

std::span<const FlagName> AccessModeNames() { return kAccessModes; }

std::optional<uint32_t> IoctlFromName(std::string_view name) {
  for (const auto& f : kIoctls)
    if (f.name == name) return static_cast<uint32_t>(f.value);
  std::string_view digits = name;
  int base = 10;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
    base = 16;
  }
  uint32_t v = 0;
  auto [p, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
    return std::nullopt;
  return v;
}

std::string IoctlName(uint32_t cmd) {
  for (const auto& f : kIoctls)
    if (f.value == cmd) return std::string(f.name);
  return fmt::format("{:#x}", cmd);
}

const StepKeys& StepKeysFor(Op op) {
  static const auto* const kKeys = [] {
    auto* keys = new std::vector<StepKeys>;
    for (const OpCodec& c : OpCodecs()) {
      StepKeys k;
      for (std::string_view key : c.required)
        if (!key.empty()) k.required.push_back(key);
      for (std::string_view key : c.optional)
        if (!key.empty()) k.optional.push_back(key);
      keys->push_back(std::move(k));
    }
    return keys;
  }();
  static const StepKeys kNone;
  const auto i = static_cast<size_t>(op);
  return i < kKeys->size() ? (*kKeys)[i] : kNone;
}

bool StepTakes(Op op, std::string_view key) {
  const StepKeys& k = StepKeysFor(op);
  for (std::string_view a : k.required)
    if (a == key) return true;
  for (std::string_view a : k.optional)
    if (a == key) return true;
  return false;
}

bool IsStepKey(std::string_view key) {
  for (const OpCodec& c : OpCodecs())
    if (StepTakes(c.op, key)) return true;
  return false;
}

std::optional<NodeType> NodeTypeFromName(std::string_view name) {
  for (const auto& [n, t] : kNodeTypes)
    if (n == name) return t;
  return std::nullopt;
}

std::span<const NodeType> MknodTypes() { return kMknodTypes; }

std::span<const FlagBit> MountFlagBits() { return kMountFlagBits; }
std::span<const FlagBit> AttrBits() { return kAttrBits; }

std::optional<uint32_t> BitFromName(std::span<const FlagBit> table, std::string_view name) {
  for (const FlagBit& f : table)
    if (f.name == name) return f.bit;
  return std::nullopt;
}

std::vector<std::string_view> BitNames(std::span<const FlagBit> table, uint32_t bits) {
  std::vector<std::string_view> names;
  for (const FlagBit& f : table)
    if (bits & f.bit) names.push_back(f.name);
  return names;
}

uint64_t LinuxFlags(std::span<const FlagBit> table, uint32_t bits) {
  uint64_t flags = 0;
  for (const FlagBit& f : table)
    if (bits & f.bit) flags |= f.linux_flag;
  return flags;
}

std::optional<TimeSpec> TimeSpecFromName(std::string_view name) {
  for (const auto& [n, t] : kTimeSpecs)
    if (n == name) return t;
  return std::nullopt;
}

std::vector<std::string_view> TimeSpecNames() {
  std::vector<std::string_view> names;
  for (const auto& [n, v] : kTimeSpecs) names.push_back(n);
  return names;
}

std::string_view TimeSpecName(TimeSpec t) {
  for (const auto& [n, v] : kTimeSpecs)
    if (v == t) return n;
  return "?";
}

std::vector<std::string_view> RightNames(landlock::AccessMask m, int n,
                                         std::string_view (*name)(int)) {
  std::vector<std::string_view> names;
  for (int i = 0; i < n; ++i)
    if (m & (1u << i)) names.push_back(name(i));
  return names;
}

std::string Alternatives(std::span<const std::string_view> names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

}  // namespace pathwarden::scenario_internal

namespace pathwarden {

using scenario_internal::kNodeTypes;
using scenario_internal::OpCodec;

std::string_view OpName(Op op) { return scenario_internal::CodecOf(op).name; }

std::optional<Op> OpFromName(std::string_view name) {
  for (const OpCodec& c : scenario_internal::OpCodecs())
    if (c.name == name) return c.op;
  return std::nullopt;
}

std::string_view NodeTypeName(NodeType t) {
  for (const auto& [n, v] : kNodeTypes)
    if (v == t) return n;
  return "?";
}

}  // namespace pathwarden
