// `pathwarden map`: for every path under a directory, what an identity
// under policy layers may do there — each right the answer to one query
// (`explain` gives the same), printed as a tree where rights change.

#ifndef PATHWARDEN_SRC_QUERY_MAP_H_
#define PATHWARDEN_SRC_QUERY_MAP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pathwarden/decision.h"
#include "pathwarden/result.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::query {

// Right
//
// What map shows, each the verdict of one query on the path:
//   read      open PATH O_RDONLY                 (not directories)
//   list      open PATH O_RDONLY|O_DIRECTORY     (directories)
//   write     open PATH O_WRONLY                 (regular files)
//   execute   exec_check PATH                    (regular files)
//   search    chdir PATH                         (directories)
//   truncate  truncate PATH                      (regular files)
//   remove    unlink PATH, or rmdir PATH for a directory
//   rename    rename PATH PATH~pw (a new name in its directory)
//   create_*  in a directory: open DIR/~pw O_CREAT (file), mkdir, symlink,
//             mknod fifo, mknod socket
enum class Right : uint8_t {
  kRead,
  kList,
  kWrite,
  kExecute,
  kSearch,
  kTruncate,
  kRemove,
  kRename,
  kCreateFile,
  kCreateDir,
  kCreateSymlink,
  kCreateFifo,
  kCreateSocket,
};
inline constexpr int kNumRights = 13;
std::string_view RightName(Right r);

// The query that decides `r` on `path` (of type `mode`, S_IF*), or
// nullopt when the right does not apply to that type.
std::optional<Query> QueryFor(Right r, const std::string& path, uint32_t mode);

// PathRights
//
// One path: which rights apply, which are allowed, and the verdict of
// each (for its source).
struct PathRights {
  std::string path;
  uint32_t mode = 0;  // S_IF* | permission bits
  int depth = 0;
  uint32_t applies = 0;  // bit per Right
  uint32_t allowed = 0;
  uint32_t unknown = 0;
  std::vector<Decision> decisions;  // per Right (default Decision when it does not apply)
};

struct MapOptions {
  std::string dir;
  int depth = -1;  // -1: all
  std::string only;  // "", "writable", "executable", "readable"
  bool json = false;
  bool colour = false;
};

// Walk()
//
// Every path under `dir` (itself included), depth first in name order,
// mounts crossed, with each right decided; `emit` is told each path.
// Errors: `dir` does not resolve to a directory the model can read.
Result<void, std::string> MapTree(Session& s, const MapOptions& o,
                                  const std::function<void(const PathRights&)>& emit);

// Source()
//
// Why a right came out as it did, short: "other r-x", "ACL user:1000",
// "CAP_DAC_OVERRIDE", "read-only mount", "Landlock layer 2 (policy.toml)",
// "rule /srv (policy.toml:4)".
std::string Source(const Session& s, const Decision& d);

// RunMap()
//
// The whole command: the tree (or JSON lines), then the summary. `diff`
// (when not null) is a second session to compare against: only paths
// and rights that differ are shown. `unix_alone` (when not null) is the
// same identity without the layers, for the summary's "what the policy
// takes away". Returns 0, 3 when any path was unknown, 2 with
// *out_error for a bad directory.
int RunMap(Session& s, Session* diff, Session* unix_alone, const MapOptions& o,
           std::string* out_error);

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_MAP_H_
