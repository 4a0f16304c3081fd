// /proc/PID/mountinfo, parsed; which filesystem types the model decides.

#include "src/vfs/mountinfo.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "src/vfs/world.h"

namespace pathwarden::vfs {
namespace {

// A line cut at spaces, each field with its column (1-based).
struct Field {
  std::string_view text;
  size_t col;
};

std::vector<Field> Fields(std::string_view line) {
  std::vector<Field> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    out.push_back({line.substr(start, i - start), start + 1});
  }
  return out;
}

// Linux: fs/proc_namespace.c mangle(): space, tab, newline and backslash
// as three octal digits.
Result<std::string, size_t> Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 3 >= s.size()) return Unexpected(i);
    int v = 0;
    for (size_t k = 1; k <= 3; ++k) {
      const char c = s[i + k];
      if (c < '0' || c > '7') return Unexpected(i);
      v = v * 8 + (c - '0');
    }
    if (v > 0xff) return Unexpected(i);
    out.push_back(static_cast<char>(v));
    i += 3;
  }
  return out;
}

bool ParseU32(std::string_view s, uint32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool HasOption(std::string_view options, std::string_view name) {
  size_t i = 0;
  while (i <= options.size()) {
    size_t end = options.find(',', i);
    if (end == std::string_view::npos) end = options.size();
    std::string_view opt = options.substr(i, end - i);
    if (opt == name || (opt.size() > name.size() && opt.substr(0, name.size()) == name &&
                        opt[name.size()] == '='))
      return true;
    i = end + 1;
  }
  return false;
}

uint32_t MountFlagsOf(std::string_view options) {
  uint32_t f = 0;
  if (HasOption(options, "ro")) f |= kMntReadonly;
  if (HasOption(options, "noexec")) f |= kMntNoexec;
  if (HasOption(options, "nosuid")) f |= kMntNosuid;
  if (HasOption(options, "nodev")) f |= kMntNodev;
  if (HasOption(options, "nosymfollow")) f |= kMntNosymfollow;
  return f;
}

// The layers of an overlay's lowerdir= value (octal escapes already
// decoded): split at ':' not escaped by '\\', each unescaped; "::"
// starts the data-only layers (Linux: fs/overlayfs/params.c
// ovl_parse_param_split_lowerdirs()).
void SplitLowerDirs(std::string_view v, OverlayOptions& o) {
  std::string cur;
  bool data_only = false;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] == '\\' && i + 1 < v.size()) {
      cur.push_back(v[++i]);
      continue;
    }
    if (i < v.size() && v[i] != ':') {
      cur.push_back(v[i]);
      continue;
    }
    if (!cur.empty()) {
      o.lower.push_back(std::move(cur));
      o.data_only += data_only;
    }
    cur.clear();
    if (i + 1 < v.size() && v[i + 1] == ':') {
      data_only = true;
      ++i;
    }
  }
}

// An overlay's options from the superblock options as printed (each
// value octal-escaped, so a ',' in a path is never a separator).
Result<OverlayOptions, size_t> ParseOverlayOptions(std::string_view raw) {
  OverlayOptions o;
  size_t i = 0;
  while (i < raw.size()) {
    size_t end = raw.find(',', i);
    if (end == std::string_view::npos) end = raw.size();
    const std::string_view opt = raw.substr(i, end - i);
    const size_t eq = opt.find('=');
    const std::string_view name = opt.substr(0, eq);
    auto value = Unescape(eq == std::string_view::npos ? std::string_view() : opt.substr(eq + 1));
    if (!value) return Unexpected(i + eq + 1 + value.error());
    if (name == "lowerdir") SplitLowerDirs(*value, o);
    else if (name == "upperdir") o.upper = std::move(*value);
    else if (name == "workdir") o.work = std::move(*value);
    else if (name == "redirect_dir") o.redirect_dir = std::move(*value);
    else if (name == "metacopy") o.metacopy = *value == "on";
    else if (name == "userxattr") o.userxattr = true;
    else if (name == "default_permissions") o.default_permissions = true;
    else if (name == "volatile") o.volatile_upper = true;
    i = end + 1;
  }
  return o;
}

}  // namespace

bool MountInfo::HasSuperOption(std::string_view name) const {
  return HasOption(super_options, name);
}

std::optional<std::string_view> MountInfo::SuperOptionValue(std::string_view name) const {
  const std::string_view options = super_options;
  size_t i = 0;
  while (i <= options.size()) {
    size_t end = options.find(',', i);
    if (end == std::string_view::npos) end = options.size();
    const std::string_view opt = options.substr(i, end - i);
    if (opt.size() > name.size() && opt.substr(0, name.size()) == name && opt[name.size()] == '=')
      return opt.substr(name.size() + 1);
    i = end + 1;
  }
  return std::nullopt;
}

Result<std::vector<MountInfo>, std::string> ParseMountInfo(std::string_view text,
                                                           std::string_view file) {
  std::vector<MountInfo> out;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    auto fail = [&](size_t col, std::string_view what) {
      return Unexpected(fmt::format("{}:{}:{}: {}", file, line_no, col, what));
    };
    const std::vector<Field> f = Fields(line);
    // id parent major:minor root mountpoint options [optional...] - type
    // source super_options
    size_t dash = 6;
    while (dash < f.size() && f[dash].text != "-") ++dash;
    if (f.size() < 6 || dash == f.size())
      return fail(f.empty() ? 1 : f.back().col,
                  "a mountinfo line has at least 10 fields, with \" - \" before the last 3");
    if (dash + 4 != f.size())
      return fail(dash + 4 < f.size() ? f[dash + 4].col : f.back().col,
                  "a mountinfo line ends with the filesystem type, the source and the "
                  "superblock options");
    MountInfo m;
    if (!ParseU32(f[0].text, &m.id)) return fail(f[0].col, "the mount id is not a number");
    if (!ParseU32(f[1].text, &m.parent))
      return fail(f[1].col, "the parent mount id is not a number");
    const size_t colon = f[2].text.find(':');
    if (colon == std::string_view::npos || !ParseU32(f[2].text.substr(0, colon), &m.major) ||
        !ParseU32(f[2].text.substr(colon + 1), &m.minor))
      return fail(f[2].col, "the device is not MAJOR:MINOR");
    auto root = Unescape(f[3].text);
    if (!root) return fail(f[3].col + root.error(), "a bad octal escape");
    auto mountpoint = Unescape(f[4].text);
    if (!mountpoint) return fail(f[4].col + mountpoint.error(), "a bad octal escape");
    if (root->empty() || (*root)[0] != '/')
      return fail(f[3].col, "the mount's root is not an absolute path");
    if (mountpoint->empty() || (*mountpoint)[0] != '/')
      return fail(f[4].col, "the mount point is not an absolute path");
    m.root = std::move(*root);
    m.mountpoint = std::move(*mountpoint);
    m.flags = MountFlagsOf(f[5].text);
    m.idmapped = HasOption(f[5].text, "idmapped");
    auto type = Unescape(f[dash + 1].text);
    auto source = Unescape(f[dash + 2].text);
    auto super = Unescape(f[dash + 3].text);
    if (!type) return fail(f[dash + 1].col + type.error(), "a bad octal escape");
    if (!source) return fail(f[dash + 2].col + source.error(), "a bad octal escape");
    if (!super) return fail(f[dash + 3].col + super.error(), "a bad octal escape");
    m.fstype = std::move(*type);
    m.source = std::move(*source);
    m.super_options = std::move(*super);
    m.sb_readonly = HasOption(m.super_options, "ro");
    if (m.fstype == "overlay") {
      auto o = ParseOverlayOptions(f[dash + 3].text);
      if (!o) return fail(f[dash + 3].col + o.error(), "a bad octal escape");
      m.overlay = std::move(*o);
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string WhyNotModelled(const MountInfo& m) {
  const std::string_view t = m.fstype;
  if (m.idmapped)
    return "an idmapped mount: every owner is translated by the mount's idmapping "
           "(mount_setattr(MOUNT_ATTR_IDMAP)): a capability applies only to inodes whose "
           "translated owner maps, and chown, link, rename and xattrs refuse unmapped owners; "
           "not modelled";
  // Modes, ACL xattrs and statx attributes are the whole truth, and the
  // filesystem has no ->permission of its own (generic_permission()).
  // btrfs adds its subvolumes' read-only flag and inode namespaces, which
  // the host backend reads (src/vfs/host_btrfs.cc).
  for (std::string_view ok : {"ext2", "ext3", "ext4", "xfs", "tmpfs", "devtmpfs", "ramfs",
                              "devpts", "f2fs", "squashfs", "erofs", "iso9660", "btrfs"})
    if (t == ok) return {};
  // procfs: /proc/sys and the system files (src/vfs/host_proc.cc); the
  // rest is opaque there, with the reason.
  if (t == "proc") {
    if (auto h = m.SuperOptionValue("hidepid"); h && *h != "0" && *h != "off")
      return fmt::format("procfs mounted hidepid={}: which processes' directories a task sees and "
                         "enters depends on ptrace access (proc_pid_permission()); not modelled",
                         *h);
    if (m.SuperOptionValue("subset"))
      return "procfs mounted with subset=: what it shows at all is not modelled";
    return {};
  }
  if (t == "sysfs" || t == "cgroup" || t == "cgroup2")
    return fmt::format("{} is kernfs: drivers and controllers make its files, and "
                       "kernfs_iop_permission() decides",
                       t);
  // The host backend decides the rest (HostBackend::OverlayFor()).
  if (t == "overlay")
    return m.overlay ? "" : "overlayfs whose options were not read: its layers are unknown";
  if (t == "nfs" || t == "nfs4")
    return "NFS: the server decides (nfs_permission() asks it with ACCESS)";
  if (t == "cifs" || t == "smb3") return "SMB: the server decides";
  if (t == "9p") return "9P: the server decides";
  if (t == "fuse" || t == "fuseblk" || t.starts_with("fuse.")) {
    if (!m.HasSuperOption("default_permissions"))
      return "FUSE without default_permissions: the server decides every access";
    // The kernel's generic checks on what the server's attributes say,
    // behind the mount's gate (HostBackend::Attach() reads it).
    return {};
  }
  if (t == "autofs") return "autofs: a lookup mounts something else";
  if (t == "vfat" || t == "msdos" || t == "exfat" || t == "ntfs" || t == "ntfs3")
    return fmt::format("{}: modes come from mount options, and chmod and chown are refused or "
                       "ignored",
                       t);
  if (t == "debugfs" || t == "tracefs" || t == "securityfs" || t == "bpf" || t == "configfs" ||
      t == "pstore" || t == "efivarfs" || t == "binfmt_misc" || t == "fusectl" ||
      t == "mqueue" || t == "hugetlbfs" || t == "nsfs" || t == "pipefs" || t == "selinuxfs")
    return fmt::format("{}: a kernel interface whose files the model does not hold", t);
  return fmt::format("{}: not known to decide with the VFS's generic checks alone", t);
}

std::vector<SwapFile> ParseSwaps(std::string_view text) {
  std::vector<SwapFile> out;
  bool header = true;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (std::exchange(header, false) || line.empty()) continue;
    // The name, then white space (seq_pad()) and the type; a removed
    // name ends " (deleted)" (d_path()), its space not escaped.
    const size_t name_end = line.find_first_of(" \t");
    std::string_view type;
    if (name_end != std::string_view::npos) {
      type = line.substr(name_end);
      type.remove_prefix(std::min(type.find_first_not_of(" \t"), type.size()));
    }
    if (type.starts_with("partition")) continue;
    auto name = Unescape(line.substr(0, name_end == std::string_view::npos ? 0 : name_end));
    const bool named = type.starts_with("file") && name && !name->empty();
    out.push_back({named ? std::move(*name) : std::string()});
  }
  return out;
}

}  // namespace pathwarden::vfs
