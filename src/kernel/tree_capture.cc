// The final tree read back: a walk from the root through mounts, with the
// ACLs decoded from their xattrs. Linux: include/uapi/linux/posix_acl_xattr.h

#include "src/kernel/tree_capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "src/base/dir_names.h"
#include "src/base/tree_order.h"
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

// A limit against a runaway scenario: at most this many entries (a
// 100,000-deep chain is 100,001). There is no limit on the depth.
constexpr size_t kMaxEntries = 1000000;
// The directories of the first this many levels stay open, and the walk
// goes back to them by fchdir(): "..", from a child of the walk's root,
// would step into a mount stacked on "/" (the walk's root is what a
// path's "/" is, the directory under such mounts, but ".." follows them:
// Linux: fs/namei.c follow_dotdot() then step_into();
// tests/scenarios/regressions/mount_stacks_on_topmost.toml). Below a
// level the walk entered by openat(), which went to the topmost mount,
// ".." comes back to that mount.
constexpr size_t kKeptFds = 32;

// Closes a descriptor at the end of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The walk, iterative and relative to the directory being read: the
// working directory is that directory (fchdir()), each object is read by
// its one-component name (lstat, readlink, getxattr), a directory is
// entered by openat() of its name (crossing mounts as the walk does) and
// left by fchdir() to the parent's descriptor in the first kKeptFds
// levels, by chdir("..") below. Whole paths are never used: 100,000
// levels deep they are far past PATH_MAX (ENAMETOOLONG), and a descriptor
// per level would pass RLIMIT_NOFILE. Each ".." is checked to land on the
// directory the walk came from (device and inode), else the capture
// fails.
class Walker {
 public:
  std::string Walk() {
    struct stat st;
    if (lstat(".", &st) != 0) return fmt::format("lstat /: {}", ErrnoName(errno));
    if (std::string err = Read(".", st, 0, ""); !err.empty()) return err;
    std::string err = Enter(".", 0, st);
    while (err.empty() && !frames_.empty()) {
      Frame& top = frames_.back();
      if (top.next == top.names.size()) {
        frames_.pop_back();
        if (frames_.empty()) break;
        err = Leave();
        continue;
      }
      const std::string name = std::move(top.names[top.next++]);
      const uint32_t parent = top.index;
      if (entries_.size() >= kMaxEntries) {
        err = fmt::format("the tree is too large to capture (over {} entries, at {})", kMaxEntries,
                          PathOf(parent, name));
        break;
      }
      if (lstat(name.c_str(), &st) != 0) {
        err = fmt::format("lstat {}: {}", PathOf(parent, name), ErrnoName(errno));
        break;
      }
      const uint32_t self = static_cast<uint32_t>(entries_.size());
      err = Read(name, st, parent, name);
      if (err.empty() && S_ISDIR(st.st_mode)) err = Enter(name, self, st);
    }
    return err;
  }

  std::vector<TreeEntry> Take() { return std::move(entries_); }

 private:
  struct Frame {
    uint32_t index;  // the directory's entry
    dev_t dev;
    ino_t ino;
    std::vector<std::string> names;  // its children, read once
    size_t next = 0;
    std::shared_ptr<Fd> fd;  // the directory, kept open in the first kKeptFds frames
  };

  // The whole path of a child of entry `parent`, for messages only.
  std::string PathOf(uint32_t parent, const std::string& name) const {
    const std::string p = TreePath(entries_, parent);
    return p == "/" ? "/" + name : p + "/" + name;
  }

  // One entry for the object `name` (in the working directory) that
  // lstat() gave `st`.
  std::string Read(const std::string& name, const struct stat& st, uint32_t parent,
                   const std::string& entry_name) {
    const auto where = [&] { return entries_.empty() ? std::string("/") : PathOf(parent, name); };
    TreeEntry e;
    e.parent = parent;
    e.name = entry_name;
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
      ssize_t n = readlink(name.c_str(), buf, sizeof(buf));
      if (n < 0) return fmt::format("readlink {}: {}", where(), ErrnoName(errno));
      e.target.assign(buf, static_cast<size_t>(n));
    } else {
      auto acl = AclText(name, "system.posix_acl_access");
      auto def = AclText(name, "system.posix_acl_default");
      if (!acl || !def)
        return fmt::format("getxattr {}: {}", where(), ErrnoName(acl ? def.error() : acl.error()));
      e.acl = *acl;
      e.default_acl = *def;
    }
    if (std::string err = Xattrs(name, where, &e.xattrs); !err.empty()) return err;
    entries_.push_back(std::move(e));
    return "";
  }

  // Makes the directory `name` (entry `index`, lstat() gave `st`) the
  // working directory and pushes its children's names.
  std::string Enter(const std::string& name, uint32_t index, const struct stat& st) {
    const auto where = [&] { return TreePath(entries_, index); };
    Fd fd(openat(AT_FDCWD, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) return fmt::format("open {}: {}", where(), ErrnoName(errno));
    struct stat now;
    if (fstat(fd.get(), &now) != 0) return fmt::format("fstat {}: {}", where(), ErrnoName(errno));
    if (now.st_dev != st.st_dev || now.st_ino != st.st_ino)
      return fmt::format("{} changed while it was read", where());
    if (fchdir(fd.get()) != 0) return fmt::format("fchdir {}: {}", where(), ErrnoName(errno));
    Frame f{index, st.st_dev, st.st_ino, {}, 0, nullptr};
    if (frames_.size() < kKeptFds) {
      f.fd = std::make_shared<Fd>(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
      if (f.fd->get() < 0) return fmt::format("dup {}: {}", where(), ErrnoName(errno));
    }
    auto names = internal::ReadDirNames(fd.get());
    if (!names) return fmt::format("getdents64 {}: {}", where(), ErrnoName(names.error()));
    f.names = std::move(*names);
    frames_.push_back(std::move(f));
    return "";
  }

  // Back to the directory of the frame now on top: by its descriptor when
  // it has one, else by "..".
  std::string Leave() {
    const Frame& top = frames_.back();
    const auto where = [&] { return TreePath(entries_, top.index); };
    if (top.fd) {
      if (fchdir(top.fd->get()) != 0) return fmt::format("fchdir {}: {}", where(), ErrnoName(errno));
      return "";
    }
    if (chdir("..") != 0) return fmt::format("chdir {}: {}", where(), ErrnoName(errno));
    struct stat st;
    if (stat(".", &st) != 0) return fmt::format("stat {}: {}", where(), ErrnoName(errno));
    if (st.st_dev != top.dev || st.st_ino != top.ino)
      return fmt::format("\"..\" below {} is not where the walk came from", where());
    return "";
  }

  // Every attribute but the ACLs, as getxattr() reads it back.
  template <typename Where>
  std::string Xattrs(const std::string& name, const Where& where, std::string* out) {
    std::vector<char>& names = names_buf_;
    std::vector<char>& value = value_buf_;
    ssize_t n = llistxattr(name.c_str(), names.data(), names.size());
    if (n < 0) return fmt::format("llistxattr {}: {}", where(), ErrnoName(errno));
    std::vector<vfs::XattrRead> reads;
    for (ssize_t at = 0; at < n;) {
      std::string attr(names.data() + at);
      at += static_cast<ssize_t>(attr.size()) + 1;
      if (vfs::IsPosixAclName(attr)) continue;
      ssize_t v = lgetxattr(name.c_str(), attr.c_str(), value.data(), value.size());
      vfs::XattrRead r{attr, {}, {}};
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

  std::vector<TreeEntry> entries_;  // in the order found: parents first
  std::vector<Frame> frames_;       // the directories being read, the root first
  // The buffers of Xattrs(), kept: two 64 KiB buffers cleared per entry
  // would cost 13 GB of writes for 100,000 entries.
  std::vector<char> names_buf_ = std::vector<char>(65536);
  std::vector<char> value_buf_ = std::vector<char>(65536);
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
  // The walk moves the working directory: put it back after.
  Fd saved(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (saved.get() < 0) return Unexpected(fmt::format("open .: {}", ErrnoName(errno)));
  if (chdir(root.c_str()) != 0) return Unexpected(fmt::format("chdir {}: {}", root, ErrnoName(errno)));
  Walker w;
  std::string err = w.Walk();
  if (fchdir(saved.get()) != 0 && err.empty())
    err = fmt::format("fchdir back: {}", ErrnoName(errno));
  if (!err.empty()) return Unexpected(err);
  std::vector<TreeEntry> tree = w.Take();
  if (!internal::SortTreeByPath(&tree)) return Unexpected(std::string("the tree has an unreachable entry"));
  return tree;
}

}  // namespace pathwarden::kernel_internal
