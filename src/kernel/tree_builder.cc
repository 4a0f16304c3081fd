// The scenario's [[node]] tree built with root's credentials, by the rules
// the engine builds its own tree with (docs/scenario-spec.md, [[node]]).

#include "pathwarden/uapi.h"
#include "src/kernel/tree_builder.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/acl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "src/scenario/names.h"

namespace pathwarden::kernel_internal {
namespace {


std::string_view TypeName(mode_t m) {
  switch (m & S_IFMT) {
    case S_IFDIR: return "directory";
    case S_IFREG: return "regular file";
    case S_IFLNK: return "symlink";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "character device";
    case S_IFBLK: return "block device";
  }
  return "special file";
}

// MS_* for the model's mount flags.
unsigned long MsFlags(uint32_t f) {
  return static_cast<unsigned long>(
      scenario_internal::LinuxFlags(scenario_internal::MountFlagBits(), f));
}

class TreeBuilder {
 public:
  explicit TreeBuilder(const Scenario& s) : s_(s) {}

  std::string Build() {
    umask(0);
    for (const NodeSpec& n : s_.nodes) {
      if (std::string e = MakeNode(n); !e.empty()) return e;
    }
    // Inode flags and read-only mounts last, so that they bind no node.
    for (const NodeSpec& n : s_.nodes) {
      if (std::string e = SetInodeFlags(n); !e.empty()) return e;
    }
    for (const NodeSpec& n : s_.nodes) {
      if (std::string e = RemountWithFlags(n); !e.empty()) return e;
    }
    return "";
  }

 private:
  std::string FileError(const NodeSpec& n, std::string_view text) const {
    return fmt::format("{}: {}", s_.Where(n.loc), text);
  }
  std::string Internal(const NodeSpec& n, std::string_view what, int err) const {
    return fmt::format("{}: internal: {}: {}", s_.Where(n.loc), what, ErrnoName(err));
  }

  // A directory made for the tree (a missing parent, a mount point):
  // exactly 0755 0:0 after mkdir, whatever a setgid parent or a default
  // ACL gave it (an inherited ACL stays, its mask following the mode).
  std::string MakeRootDir(const NodeSpec& n, const std::string& dir) {
    if (mkdir(dir.c_str(), 0755) != 0) return Internal(n, fmt::format("mkdir {}", dir), errno);
    if (chown(dir.c_str(), 0, 0) != 0) return Internal(n, fmt::format("chown {}", dir), errno);
    if (chmod(dir.c_str(), 0755) != 0) return Internal(n, fmt::format("chmod {}", dir), errno);
    return "";
  }

  // Missing ancestors become 0755 0:0 directories; an ancestor of any
  // other type (a symlink too: it is not followed) is the file's fault.
  std::string MakeParents(const NodeSpec& n) {
    for (size_t slash = n.path.find('/', 1); slash != std::string::npos;
         slash = n.path.find('/', slash + 1)) {
      std::string dir = n.path.substr(0, slash);
      struct stat st;
      if (lstat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode))
          return FileError(n, fmt::format("parent \"{}\" is a {}, not a directory",
                                          dir, TypeName(st.st_mode)));
        continue;
      }
      if (errno != ENOENT) return Internal(n, fmt::format("lstat {}", dir), errno);
      if (std::string e = MakeRootDir(n, dir); !e.empty()) return e;
    }
    return "";
  }

  std::string MakeNode(const NodeSpec& n) {
    const char* path = n.path.c_str();
    if (n.path != "/") {
      if (std::string e = MakeParents(n); !e.empty()) return e;
    }
    struct stat st;
    const bool exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT) return Internal(n, "lstat", errno);
    const uint32_t mode = n.EffectiveMode();
    auto exists_error = [&] {
      return FileError(n, fmt::format("\"{}\" already exists (a {})", n.path,
                                      TypeName(st.st_mode)));
    };
    switch (n.type) {
      case NodeType::kDir:
        if (exists && !S_ISDIR(st.st_mode)) return exists_error();
        if (!exists && mkdir(path, mode & 07777) != 0) return Internal(n, "mkdir", errno);
        break;
      case NodeType::kTmpfs: {
        if (exists && !S_ISDIR(st.st_mode)) return exists_error();
        if (!exists) {
          if (std::string e = MakeRootDir(n, n.path); !e.empty()) return e;
        }
        std::string options = fmt::format("mode={:o},uid={},gid={}", mode, n.uid, n.gid);
        // `ro` waits for the end of the build: it binds the superblock.
        unsigned long flags = MsFlags(n.mount_flags & ~kMountRdonly);
        if (mount("tmpfs", path, "tmpfs", flags, options.c_str()) != 0)
          return Internal(n, "mount tmpfs", errno);
        break;
      }
      case NodeType::kBind:
        return MakeBind(n, exists);
      case NodeType::kFile: {
        if (exists) return exists_error();
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
        if (fd < 0) return Internal(n, "create", errno);
        ssize_t w = write(fd, n.content.data(), n.content.size());
        int err = errno;
        close(fd);
        if (w != static_cast<ssize_t>(n.content.size()))
          return Internal(n, "write content", w < 0 ? err : EIO);
        break;
      }
      case NodeType::kFifo:
      case NodeType::kSocket:
      case NodeType::kChar:
      case NodeType::kBlock: {
        if (exists) return exists_error();
        if (mknod(path, FileTypeBits(n.type) | (mode & 0777),
                  makedev(n.rdev_major, n.rdev_minor)) != 0)
          return Internal(n, "mknod", errno);
        break;
      }
      case NodeType::kSymlink:
        if (exists) return exists_error();
        if (symlink(n.target.c_str(), path) != 0) return Internal(n, "symlink", errno);
        if (lchown(path, n.uid, n.gid) != 0) return Internal(n, "lchown", errno);
        return "";
    }
    return SetOwnerModeAcls(n);
  }

  std::string MakeBind(const NodeSpec& n, bool exists) {
    const char* path = n.path.c_str();
    if (!exists) {
      struct stat src;
      if (stat(n.source.c_str(), &src) != 0)
        return FileError(n, fmt::format("bind source \"{}\" does not resolve: {}",
                                        n.source, ErrnoName(errno)));
      if (S_ISDIR(src.st_mode)) {
        if (std::string e = MakeRootDir(n, n.path); !e.empty()) return e;
      } else {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return Internal(n, "create mount point", errno);
        const bool ok = fchown(fd, 0, 0) == 0 && fchmod(fd, 0644) == 0;
        const int err = errno;
        close(fd);
        if (!ok) return Internal(n, "chown/chmod mount point", err);
      }
    }
    if (mount(n.source.c_str(), path, nullptr, MS_BIND, nullptr) != 0)
      return FileError(n, fmt::format("bind mount of \"{}\" on \"{}\" fails: {}",
                                      n.source, n.path, ErrnoName(errno)));
    return "";
  }

  // chown first: it clears setuid (and setgid), which chmod then sets.
  std::string SetOwnerModeAcls(const NodeSpec& n) {
    const char* path = n.path.c_str();
    const uint32_t mode = n.EffectiveMode();
    if (lchown(path, n.uid, n.gid) != 0) return Internal(n, "chown", errno);
    if (chmod(path, mode) != 0) return Internal(n, "chmod", errno);
    if (n.acl) {
      PosixAcl a = PosixAcl::FromMode(mode);
      a.Modify(*n.acl);
      if (a.IsMinimal()) {
        uint32_t m = mode;
        a.EquivMode(&m);
        if (chmod(path, m) != 0) return Internal(n, "chmod", errno);
      } else if (std::string e = SetAcl(n, ACL_TYPE_ACCESS, a); !e.empty()) {
        return e;
      }
    }
    if (n.default_acl) {
      PosixAcl d = PosixAcl::FromMode(mode);
      d.Modify(*n.default_acl);
      if (std::string e = SetAcl(n, ACL_TYPE_DEFAULT, d); !e.empty()) return e;
    }
    return "";
  }

  std::string SetAcl(const NodeSpec& n, acl_type_t type, const PosixAcl& a) {
    std::string text = a.ToText();
    acl_t acl = acl_from_text(text.c_str());
    if (acl == nullptr) return Internal(n, fmt::format("acl_from_text \"{}\"", text), errno);
    int r = acl_set_file(n.path.c_str(), type, acl);
    int err = errno;
    acl_free(acl);
    if (r != 0) return Internal(n, fmt::format("acl_set_file \"{}\"", text), err);
    return "";
  }

  std::string SetInodeFlags(const NodeSpec& n) {
    if (n.attrs == 0) return "";
    int fd = open(n.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Internal(n, "open for FS_IOC_SETFLAGS", errno);
    int flags = 0;
    int r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
    if (r == 0) {
      flags |= static_cast<int>(scenario_internal::LinuxFlags(scenario_internal::AttrBits(), n.attrs));
      r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
    }
    int err = errno;
    close(fd);
    if (r != 0) return Internal(n, "FS_IOC_SETFLAGS", err);
    return "";
  }

  std::string RemountWithFlags(const NodeSpec& n) {
    const char* path = n.path.c_str();
    if (n.type == NodeType::kTmpfs && (n.mount_flags & kMountRdonly)) {
      // Without MS_BIND a remount reconfigures the superblock; the other
      // flags are repeated so the mount keeps them.
      if (mount(nullptr, path, nullptr, MS_REMOUNT | MsFlags(n.mount_flags), nullptr) != 0)
        return Internal(n, "remount tmpfs read-only", errno);
    } else if (n.type == NodeType::kBind && n.mount_flags != 0) {
      if (mount(nullptr, path, nullptr, MS_BIND | MS_REMOUNT | MsFlags(n.mount_flags),
                nullptr) != 0)
        return Internal(n, "remount bind with flags", errno);
    }
    return "";
  }

  const Scenario& s_;
};

}  // namespace

std::string BuildTree(const Scenario& s) { return TreeBuilder(s).Build(); }


}  // namespace pathwarden::kernel_internal
