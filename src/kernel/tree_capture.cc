// The final tree read back: a walk from the root through mounts, with the
// ACLs decoded from their xattrs. Linux: include/uapi/linux/posix_acl_xattr.h

#include "src/kernel/tree_capture.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "src/kernel/tree_builder.h"
#include "src/vfs/xattr.h"

namespace pathwarden::kernel_internal {
namespace {

// The on-disk ACL: a version word, then {tag, perm, id} per entry.
constexpr uint32_t kAclXattrVersion = 2;
struct AclXattrEntry {
  uint16_t tag;
  uint16_t perm;
  uint32_t id;
};

// Walk limits against a bind mount loop or a runaway scenario.
constexpr size_t kMaxEntries = 200000;
constexpr int kMaxDepth = 256;

class Walker {
 public:
  explicit Walker(std::string root) : root_(std::move(root)) {
    if (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  std::string Walk(const std::string& path, int depth) {
    std::string real = Real(path);
    struct stat st;
    if (lstat(real.c_str(), &st) != 0) return fmt::format("lstat {}: {}", path, ErrnoName(errno));
    if (entries_.size() >= kMaxEntries || depth > kMaxDepth)
      return fmt::format("the tree is too large to capture (at {})", path);
    TreeEntry e;
    e.path = path;
    e.type = NodeTypeName(NodeTypeOf(st.st_mode));
    e.mode = st.st_mode & 07777;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.nlink = static_cast<uint32_t>(st.st_nlink);
    if (S_ISREG(st.st_mode)) e.size = static_cast<uint64_t>(st.st_size);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      e.rdev_major = major(st.st_rdev);
      e.rdev_minor = minor(st.st_rdev);
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      ssize_t n = readlink(real.c_str(), buf, sizeof(buf));
      if (n < 0) return fmt::format("readlink {}: {}", path, ErrnoName(errno));
      e.target.assign(buf, static_cast<size_t>(n));
    } else {
      auto acl = AclText(real, "system.posix_acl_access");
      auto def = AclText(real, "system.posix_acl_default");
      if (!acl || !def)
        return fmt::format("getxattr {}: {}", path, ErrnoName(acl ? def.error() : acl.error()));
      e.acl = *acl;
      e.default_acl = *def;
    }
    if (std::string err = Xattrs(real, path, &e.xattrs); !err.empty()) return err;
    entries_.push_back(std::move(e));
    if (!S_ISDIR(st.st_mode)) return "";
    DIR* dir = opendir(real.c_str());
    if (dir == nullptr) return fmt::format("opendir {}: {}", path, ErrnoName(errno));
    std::vector<std::string> names;
    while (dirent* d = readdir(dir)) {
      if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0)
        names.emplace_back(d->d_name);
    }
    closedir(dir);
    for (const std::string& name : names) {
      std::string child = path == "/" ? "/" + name : path + "/" + name;
      if (std::string err = Walk(child, depth + 1); !err.empty()) return err;
    }
    return "";
  }

  std::vector<TreeEntry> Take() {
    std::sort(entries_.begin(), entries_.end(),
              [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
    return std::move(entries_);
  }

 private:
  std::string Real(const std::string& path) const {
    if (root_ == "/") return path;
    return path == "/" ? root_ : root_ + path;
  }

  // Every attribute but the ACLs, as getxattr() reads it back.
  static std::string Xattrs(const std::string& real, const std::string& path, std::string* out) {
    std::vector<char> names(65536);
    ssize_t n = llistxattr(real.c_str(), names.data(), names.size());
    if (n < 0) return fmt::format("llistxattr {}: {}", path, ErrnoName(errno));
    std::vector<vfs::XattrRead> reads;
    std::vector<char> value(65536);
    for (ssize_t at = 0; at < n;) {
      std::string name(names.data() + at);
      at += static_cast<ssize_t>(name.size()) + 1;
      if (vfs::IsPosixAclName(name)) continue;
      ssize_t v = lgetxattr(real.c_str(), name.c_str(), value.data(), value.size());
      vfs::XattrRead r{name, {}, {}};
      if (v < 0) {
        r.err = std::string(ErrnoName(errno));
      } else {
        r.value.assign(value.data(), static_cast<size_t>(v));
      }
      reads.push_back(std::move(r));
    }
    *out = vfs::XattrsText(std::move(reads));
    return "";
  }

  std::string root_;
  std::vector<TreeEntry> entries_;
};

}  // namespace

Result<std::string, int> AclText(const std::string& path, const char* name) {
  std::vector<char> bytes(sizeof(uint32_t) + 32 * sizeof(AclXattrEntry));
  ssize_t n = lgetxattr(path.c_str(), name, bytes.data(), bytes.size());
  if (n < 0 && errno == ERANGE) {
    n = lgetxattr(path.c_str(), name, nullptr, 0);
    if (n > 0) {
      bytes.resize(static_cast<size_t>(n));
      n = lgetxattr(path.c_str(), name, bytes.data(), bytes.size());
    }
  }
  if (n < 0) {
    if (errno == ENODATA || errno == EOPNOTSUPP) return std::string();
    return Unexpected(errno);
  }
  const char* buf = bytes.data();
  uint32_t version = 0;
  if (n < static_cast<ssize_t>(sizeof(version))) return Unexpected(EINVAL);
  std::memcpy(&version, buf, sizeof(version));
  size_t count = (static_cast<size_t>(n) - sizeof(version)) / sizeof(AclXattrEntry);
  if (version != kAclXattrVersion) return Unexpected(EINVAL);
  std::vector<AclEntry> entries;
  for (size_t i = 0; i < count; ++i) {
    AclXattrEntry x;
    std::memcpy(&x, buf + sizeof(version) + i * sizeof(x), sizeof(x));
    AclTag tag = static_cast<AclTag>(x.tag);
    bool named = tag == AclTag::kUser || tag == AclTag::kGroup;
    entries.push_back({tag, static_cast<uint8_t>(x.perm & 7), named ? x.id : 0});
  }
  // Every stored ACL has the three base entries, and a mask whenever it has
  // named ones, so Modify() only replaces and never recomputes the mask.
  PosixAcl acl = PosixAcl::FromMode(0);
  acl.Modify(entries);
  return acl.ToText();
}

Result<std::vector<TreeEntry>, std::string> CaptureTree(const std::string& root) {
  Walker w(root);
  if (std::string err = w.Walk("/", 0); !err.empty()) return Unexpected(err);
  return w.Take();
}

}  // namespace pathwarden::kernel_internal
