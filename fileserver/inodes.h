// The FUSE node ids of pathwarden-fs: one per name the kernel looked up
// (a parent node and a name), so that every request names the position
// it acts on -- the directory searched, the name in it -- as the kernel's
// dentry does, and a hard link's two names are two nodes (Landlock and
// the sticky rules decide by position, not by inode).

#ifndef PATHWARDEN_FILESERVER_INODES_H_
#define PATHWARDEN_FILESERVER_INODES_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace pathwarden::fileserver {

inline constexpr uint64_t kRootId = 1;  // FUSE_ROOT_ID

// NodeEntry
//
// A node: its parent and name (parent 0: the root, or a name removed
// since: an orphan, reachable only by the files open on it), the backing
// inode it named when looked up, and the kernel's lookup count.
struct NodeEntry {
  uint64_t parent = 0;
  std::string name;
  ino_t backing_ino = 0;
  uint64_t nlookup = 0;
  bool orphan = false;
};

// Inodes
//
// The node table. Not thread-safe: the server runs one request at a time.
class Inodes {
 public:
  Inodes();

  // Get()
  //
  // The node `id`, or nullptr when the kernel names one the table does
  // not hold (the request fails closed: ESTALE).
  const NodeEntry* Get(uint64_t id) const;

  // RelPath()
  //
  // The node's path relative to the backing directory ("." for the
  // root), or nullopt for an orphan.
  std::optional<std::string> RelPath(uint64_t id) const;

  // Child()
  //
  // The node of `name` in `parent` for backing inode `ino`: the one the
  // table has when it still names that inode, else a new one (the old
  // becomes an orphan). Counts one lookup.
  uint64_t Child(uint64_t parent, const std::string& name, ino_t ino);

  // Forget()
  //
  // The kernel dropped `n` lookups of `id`; the node goes at zero.
  void Forget(uint64_t id, uint64_t n);

  // Removed()
  //
  // `name` in `parent` is gone (unlink, rmdir): its node becomes an orphan.
  void Removed(uint64_t parent, const std::string& name);

  // Moved()
  //
  // rename(): `name` in `parent` is now `newname` in `newparent` (what
  // was there an orphan); with `exchange`, the two swap.
  void Moved(uint64_t parent, const std::string& name, uint64_t newparent,
             const std::string& newname, bool exchange);

 private:
  using Key = std::pair<uint64_t, std::string>;
  std::unordered_map<uint64_t, NodeEntry> nodes_;
  std::map<Key, uint64_t> names_;
  uint64_t next_ = kRootId + 1;
};

}  // namespace pathwarden::fileserver

#endif  // PATHWARDEN_FILESERVER_INODES_H_
