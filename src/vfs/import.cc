// Importing a host directory tree into the model.

#include "src/vfs/import.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace pathwarden::vfs {
namespace {

struct DevIno {
  dev_t dev;
  ino_t ino;
  bool operator==(const DevIno&) const = default;
};
struct DevInoHash {
  size_t operator()(const DevIno& k) const {
    return std::hash<uint64_t>()(k.ino * 0x9e3779b97f4a7c15ULL ^ k.dev);
  }
};

}  // namespace

Result<ImportStats, std::string> ImportHostTree(World& w, const std::string& host_dir,
                                                       PathPos into) {
  World::WriteGuard g(w);
  ImportStats stats;
  const int top = open(host_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) return Unexpected(fmt::format("{}: {}", host_dir, std::strerror(errno)));
  const SbId sb = w.inode(w.inode_of(into.dentry)).sb;
  std::unordered_map<DevIno, InodeId, DevInoHash> seen;
  close(top);
  // Directories still to read, by path: holding an fd for each would
  // exhaust the fd table on wide trees.
  struct Pending {
    std::string path;
    DentryId dentry;
  };
  std::vector<Pending> stack{{host_dir, into.dentry}};
  ++stats.entries;
  std::vector<char> link(4096);
  while (!stack.empty()) {
    Pending dir = std::move(stack.back());
    stack.pop_back();
    const int dfd = open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* d = dfd >= 0 ? fdopendir(dfd) : nullptr;
    if (d == nullptr) {
      if (dfd >= 0) close(dfd);
      ++stats.unreadable;
      continue;
    }
    while (dirent* e = readdir(d)) {
      const char* name = e->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      struct stat st;
      if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        auto it = seen.find({st.st_dev, st.st_ino});
        if (it != seen.end() && st.st_nlink > 1) {
          w.Link(dir.dentry, name, it->second);
          ++stats.hard_links;
          ++stats.entries;
          continue;
        }
      }
      const InodeId ino = w.NewInode(sb, st.st_mode, st.st_uid, st.st_gid,
                                     static_cast<uint32_t>(st.st_rdev));
      w.SetNlink(ino, static_cast<uint32_t>(st.st_nlink));
      if (S_ISLNK(st.st_mode)) {
        const ssize_t n = readlinkat(dfd, name, link.data(), link.size());
        if (n > 0) w.SetData(ino, w.Intern(std::string_view(link.data(), n)));
      } else if (st.st_nlink > 1 && !S_ISDIR(st.st_mode)) {
        seen.emplace(DevIno{st.st_dev, st.st_ino}, ino);
      }
      const DentryId child = w.Link(dir.dentry, name, ino);
      ++stats.entries;
      if (S_ISDIR(st.st_mode)) stack.push_back({dir.path + "/" + name, child});
    }
    closedir(d);
  }
  return stats;
}

}  // namespace pathwarden::vfs
