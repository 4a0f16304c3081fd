// `pathwarden map`: for every path under a directory, what an identity
// under policy layers may do there — each right the answer to one query
// (`explain` gives the same), printed as a tree where rights change from
// the parent (docs/commands.md, "map").

#ifndef PATHWARDEN_SRC_QUERY_MAP_H_
#define PATHWARDEN_SRC_QUERY_MAP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/decision.h"
#include "pathwarden/result.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::query {

// Right
//
// What map shows, each the verdict of one query on the path (NEW is
// "~pw-new", a name the queries assume absent: in the directory itself
// for create_*, beside the path for rename and link -- "~pw-new~" for the
// entry "~pw-new" itself; where one exists, create_* and link are
// EEXIST, denied):
//   read      open PATH O_RDONLY                 (not directories)
//   list      open PATH O_RDONLY|O_DIRECTORY     (directories)
//   write     open PATH O_WRONLY                 (regular files)
//   execute   exec_check PATH                    (regular files)
//   search    chdir PATH                         (directories)
//   truncate  truncate PATH                      (regular files)
//   remove    unlink PATH, or rmdir PATH for a directory: allowed when it
//             succeeds, and for a directory also when it fails with
//             ENOTEMPTY -- Linux makes every permission check (Landlock's
//             security_path_rmdir(), may_delete()) before the
//             filesystem's emptiness check, so ENOTEMPTY means "allowed
//             once empty" (PathRights::once_empty)
//   rename    rename PATH DIR/NEW   (out of its name, within DIR)
//   link      link PATH DIR/NEW     (a hard link out; not directories:
//             Linux refuses those with EPERM whoever asks)
//   create_*  in a directory: open PATH/NEW O_WRONLY|O_CREAT|O_EXCL
//             (file), mkdir, symlink, mknod fifo, mknod socket
// A right whose query names a path of PATH_MAX (4096) bytes or more is
// not asked: Linux refuses such a path (ENAMETOOLONG) whatever the
// rights, and only a call relative to a directory reaches the object, so
// the right is unknown (PathRights::unasked).
enum class Right : uint8_t {
  kRead,
  kList,
  kWrite,
  kExecute,
  kSearch,
  kTruncate,
  kRemove,
  kRename,
  kLink,
  kCreateFile,
  kCreateDir,
  kCreateSymlink,
  kCreateFifo,
  kCreateSocket,
};
inline constexpr int kNumRights = 14;
std::string_view RightName(Right r);

// The name the queries use for what they would create.
inline constexpr std::string_view kNewName = "~pw-new";

// QueryFor()
//
// The query that decides `r` on `path` (of type `mode`, S_IF*), or
// nullopt when the right does not apply to that type.
std::optional<Query> QueryFor(Right r, const std::string& path, uint32_t mode);

// RightVerdict
//
// One right decided: allowed, unknown (never both), and why it was not
// asked or is allowed despite the errno.
struct RightVerdict {
  bool allowed = false;
  bool unknown = false;
  bool unasked = false;     // a path of its query is PATH_MAX or longer
  bool once_empty = false;  // remove of a directory: ENOTEMPTY now
};

// Decide()
//
// Right `r` on `path` (type `mode`) for `s`, verdict only; nullopt when
// it does not apply.
std::optional<RightVerdict> Decide(Session& s, Right r, const std::string& path, uint32_t mode);

// Why a right is not asked (Right, above).
inline constexpr std::string_view kUnaskedWhy =
    "path longer than PATH_MAX: reachable only relative to a directory";

// PathRights
//
// One path: which rights apply, which are allowed, which unknown (bits
// per Right).
struct PathRights {
  std::string path;
  uint32_t mode = 0;  // S_IF* | permission bits; 0 when pathwarden could not read it
  int depth = 0;
  uint32_t applies = 0;
  uint32_t allowed = 0;
  uint32_t unknown = 0;
  uint32_t unasked = 0;     // of `unknown`: not asked (kUnaskedWhy)
  uint32_t once_empty = 0;  // of `allowed`: remove of a directory that is not empty now
  // Why the entry itself is unknown when it could not be read (its
  // rights are then unknown and `mode` 0), or its entries could not be
  // listed (a directory); "" otherwise.
  std::string note;
  // A directory: what most of its entries that are not directories may
  // do (ties: the first in name order), and that entry's name; `files`
  // false when it has none (or they were not listed).
  bool files = false;
  uint32_t files_allowed = 0, files_unknown = 0;
  uint32_t files_mode = 0;
  std::string files_example;
};

struct MapOptions {
  std::string dir;
  int depth = -1;  // -1: all
  std::string only;  // "", "writable", "executable", "readable"
  bool json = false;
  bool colour = false;
};

// MapStats
//
// What a walk met besides the entries it emitted: entries gone between
// the listing and their stat (not emitted, each named in `gone`).
struct MapStats {
  uint64_t vanished = 0;
  std::vector<std::string> gone;  // the first few, for a note
};

// MapTree()
//
// Every path under `dir` (itself included), depth first in name order,
// mounts crossed, with each right decided; `emit` is told each path. The
// host is read relative to each directory (openat(), fstatat(), never a
// path longer than a name), so entries deeper than PATH_MAX are emitted
// too, their rights unknown (Right, above); an explicit stack and a
// bounded number of descriptors, whatever the depth (src/query/dir_walk.h).
// A directory is emitted after its entries are decided (for `files`),
// before any of them. Not entered: a directory whose listing the model
// cannot decide for a reason other than PATH_MAX (procfs, a directory
// pathwarden may not read), and one at `o.depth`.
// Errors: `dir` does not resolve to a directory; the tree changed under
// the walk so that it could not go back up (a directory moved).
Result<void, std::string> MapTree(Session& s, const MapOptions& o,
                                  const std::function<void(const PathRights&)>& emit,
                                  MapStats* stats = nullptr);

// Source()
//
// Why right `r` of `p` came out as it did, in a few words, as `s`
// decides it now: for an allowed right, every check that granted it
// ("owner 0 on the parent; Landlock layer 1 (web.toml) rule /srv
// (web.toml:4)"), with "allowed once empty: rmdir is ENOTEMPTY now" for
// a non-empty directory's remove; for a denied right, the check that
// refused ("Landlock layer 2 (web.toml): no rule grants fs.write_file",
// "other on the parent refuses wx", "read-only mount: ..."); for an
// unknown one, why. The policy file:line of a rule is explain's
// (OriginOf()). Plain text: names may hold any byte (the caller escapes).
std::string Source(Session& s, const PathRights& p, Right r);

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
