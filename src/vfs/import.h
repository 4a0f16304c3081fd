// Importing a real directory tree of the host into the model (the /usr
// snapshot of the lookup and import benchmarks).

#ifndef PATHWARDEN_SRC_VFS_IMPORT_H_
#define PATHWARDEN_SRC_VFS_IMPORT_H_

#include <cstdint>
#include "pathwarden/result.h"
#include <string>

#include "src/vfs/world.h"

namespace pathwarden::vfs {

struct ImportStats {
  uint64_t entries = 0;      // objects imported (the top directory included)
  uint64_t hard_links = 0;   // names that joined an inode already imported
  uint64_t unreadable = 0;   // directories the importer could not list
};

// ImportHostTree()
//
// Copies the tree under `host_dir` (types, modes, owners, link counts,
// symlink bodies, hard links; not contents or ACLs) into directory
// `into` of `w`, without following symlinks or crossing into other
// filesystems' content in any special way. Writer only.
Result<ImportStats, std::string> ImportHostTree(World& w, const std::string& host_dir,
                                                       PathPos into);

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_IMPORT_H_
