// Flag, command and type names of the scenario format.

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

FlagFamily FamilyFor(Op op) {
  switch (op) {
    case Op::kOpen: return FlagFamily::kOpen;
    case Op::kAccess: return FlagFamily::kAccess;
    case Op::kStat:
    case Op::kLstat:
    case Op::kChmod:
    case Op::kChown:
    case Op::kLchown:
    case Op::kExecCheck:
    case Op::kUtimensat: return FlagFamily::kAtNofollow;
    case Op::kLink: return FlagFamily::kLink;
    case Op::kUnlink: return FlagFamily::kUnlink;
    case Op::kRename: return FlagFamily::kRename;
    case Op::kMountTmpfs: return FlagFamily::kMount;
    case Op::kBindMount: return FlagFamily::kBind;
    case Op::kUmount: return FlagFamily::kUmount;
    default: return FlagFamily::kNone;
  }
}

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
    case FlagFamily::kNone: break;
  }
  return {};
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

std::optional<NodeType> NodeTypeFromName(std::string_view name) {
  static constexpr std::pair<std::string_view, NodeType> kTypes[] = {
      {"file", NodeType::kFile},   {"dir", NodeType::kDir},
      {"symlink", NodeType::kSymlink}, {"fifo", NodeType::kFifo},
      {"socket", NodeType::kSocket},   {"char", NodeType::kChar},
      {"block", NodeType::kBlock},     {"tmpfs", NodeType::kTmpfs},
      {"bind", NodeType::kBind},
  };
  for (const auto& [n, t] : kTypes)
    if (n == name) return t;
  return std::nullopt;
}

}  // namespace pathwarden::scenario_internal
