// pathwarden-fs's server: the state it keeps (the model, the callers'
// processes, the open files and directories, the inode table) and its
// FUSE operations, defined by concern: server.cc (callers, decisions,
// start, the FUSE glue), attrs.cc (attributes and xattrs), names.cc
// (lookups, creating, removing, renaming, linking), files.cc (opening,
// reading, writing, directories, fallocate).

#ifndef PATHWARDEN_FILESERVER_SERVER_IMPL_H_
#define PATHWARDEN_FILESERVER_SERVER_IMPL_H_

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 34
#endif

#include <dirent.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>


#include "fileserver/inodes.h"
#include "fileserver/proc_cred.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "src/policy/policy.h"

#include "fileserver/server.h"

namespace pathwarden::fileserver {

// __FMODE_EXEC: the open of an execve() (include/linux/fs.h), which FUSE
// passes in the OPEN request's flags.
inline constexpr uint64_t kFmodeExec = 0x20;
// The fd numbers the server gives the model's processes: the directory a
// two-path request's first path is relative to, and a file another
// process opened (ftruncate by a process that did not open it).
inline constexpr int kDirFd = 1 << 20;
inline constexpr int kBorrowedFd = (1 << 20) + 1;
inline constexpr int kFirstFileFd = (1 << 20) + 2;

inline std::string Join(const std::string& dir, const std::string& rel) {
  return rel == "." ? dir : dir + "/" + rel;
}

// An open file of the server: the backing fd, and the model's record of
// the open (the opener's process and fd, whose Landlock rights were
// frozen when it opened).
struct OpenFile {
  int fd = -1;
  Process opener;
  int model_fd = -1;
  uint64_t flags = 0;
  uint64_t node = 0;
  ino_t backing_ino = 0;
};

struct OpenDir {
  int fd = -1;
  std::vector<std::pair<std::string, struct stat>> entries;
  bool listed = false;
};

class Server {
 public:
  explicit Server(const Options& o) : o_(o) {}

  Result<void, std::string> Start();

  // The FUSE operations.
  void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
  void Forget(fuse_ino_t ino, uint64_t n) { nodes_.Forget(ino, n); }
  void Getattr(fuse_req_t req, fuse_ino_t ino);
  void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
               fuse_file_info* fi);
  void Readlink(fuse_req_t req, fuse_ino_t ino);
  void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
  void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
  void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name, bool dir);
  void Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name);
  void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned flags);
  void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
  void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, bool dir);
  void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi);
  void Read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi);
  void Write(fuse_req_t req, const char* buf, size_t size, off_t off, fuse_file_info* fi);
  void Release(fuse_req_t req, fuse_file_info* fi);
  void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
  void Releasedir(fuse_req_t req, fuse_file_info* fi);
  void Statfs(fuse_req_t req);
  void Access(fuse_req_t req, fuse_ino_t ino, int mask);
  void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                 fuse_file_info* fi);
  void Fsync(fuse_req_t req, int datasync, fuse_file_info* fi);
  void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
  void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags);
  void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
  void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

 private:
  // Whether every class may search directory `rel` and it has no ACL.
  // Remembered until the server changes something.
  bool AnyoneMaySearch(const std::string& rel);

  // The caller: its credentials (/proc/TID/status, the FUSE context's
  // umask) and its model process.
  struct Caller {
    Cred cred;
    Process p;
  };
  Result<Caller, int> CallerOf(fuse_req_t req, bool access = false, bool creates = false);
  // Asker()
  //
  // The caller for a request whose performing needs no credentials: none
  // read when nothing is decided (default_permissions without a policy).
  Result<Caller, int> Asker(fuse_req_t req, bool access = false) {
    if (!decide_) return Caller{anyone_, Process{}};
    return CallerOf(req, access);
  }
  Process ProcessFor(const Cred& c);

  // Where a request acts: the node's relative path, or its parent's node
  // and its name (the root: none).
  struct Where {
    std::string rel;
    uint64_t parent = 0;
    std::string name;
  };
  Result<Where, int> WhereOf(fuse_ino_t ino);
  // The directory a request on `w` starts from: its parent's relative
  // path ("." at the root).
  std::string CwdOf(const Where& w) { return w.parent == 0 ? "." : *nodes_.RelPath(w.parent); }
  // An inode's request by its caller (CallerOf() with no credentials
  // of its own asked): who, where, and from which directory.
  struct Target {
    Caller c;
    Where w;
    std::string cwd;
  };
  Result<Target, int> TargetOf(fuse_req_t req, fuse_ino_t ino) {
    auto c = CallerOf(req);
    if (!c) return Unexpected(c.error());
    auto w = WhereOf(ino);
    if (!w) return Unexpected(w.error());
    std::string cwd = CwdOf(*w);
    return Target{std::move(*c), std::move(*w), std::move(cwd)};
  }
  Result<Node, int> ModelNode(const std::string& rel);

  // Decide()
  //
  // `r` asked by `p` with its working directory at `cwd_rel` (the
  // parent the request's relative path starts from): 0 or the errno.
  int Decide(const Caller& c, const std::string& cwd_rel, const Request& r, const char* op,
             const std::string& what);
  // DecideXattr()
  //
  // Decide() for an xattr request: a host model holds no attribute
  // values but the ACLs, and answers unknown for what only the values
  // decide (ENODATA, EEXIST, ERANGE) once every permission check passed;
  // that part is the backing filesystem's answer.
  int DecideXattr(const Caller& c, const std::string& cwd_rel, const Request& r, const char* op,
                  const std::string& what);
  // The fd of open file `f` in the caller's model process (the opener's,
  // or `f` borrowed by another process), for a request through it.
  Result<Fd, int> ModelFdOf(const Caller& c, const OpenFile& f, const std::string& rel);
  // SetattrRemoved()
  //
  // Setattr() of a node whose name was removed while a file is open on
  // it (fchmod(), fchown(), futimens(), ftruncate() through that file):
  // decided as the fd requests on the caller's fd of the open file, and
  // performed through the server's own fd of it.
  void SetattrRemoved(fuse_req_t req, fuse_ino_t ino, const Caller& c, struct stat* attr,
                      int to_set, fuse_file_info* fi);
  // The path a request names for the node at `w` from the caller's
  // working directory (its parent), "/" for the root.
  static std::string NameFor(const Where& w) { return w.parent == 0 ? "/" : w.name; }

  // Changed()
  //
  // The backing directory changed at `rel` (and what the walk there
  // passes): the model reads it again.
  void Changed(const std::string& rel);

  int Fstatat(const std::string& rel, struct stat* st) const;
  void ReplyEntry(fuse_req_t req, uint64_t parent, const std::string& name);
  // NewObject()
  //
  // The object just created at `rel` by root gets the caller's owner and
  // the group Linux gives it (the parent's when setgid); the mode root's
  // creation gave it (umask or default ACL applied by the kernel) is
  // kept through the chown.
  int NewObject(const Caller& c, const std::string& rel, const struct stat& parent_st,
                bool symlink);
  // UnderUmask()
  //
  // `make()`, a call creating on the backing tree, run under the
  // caller's umask as the kernel creates for it (the server's own is 0):
  // its result, with its errno.
  template <class Make>
  static auto UnderUmask(const Caller& c, Make make) {
    umask(c.cred.umask);
    const auto r = make();
    const int saved = errno;
    umask(0);
    errno = saved;
    return r;
  }
  // ReplyMade()
  //
  // After `what` (mknod, mkdir) made `name` in `parent` at `rel`: the new
  // object's owner (NewObject()), the model told, the entry replied.
  void ReplyMade(fuse_req_t req, const Caller& c, fuse_ino_t parent, const char* name,
                 const std::string& rel, const struct stat& parent_st, const char* what);
  // Mode strip of a creation: mode_strip_sgid() for the caller.
  static uint32_t CreateMode(const Cred& c, uint32_t mode, const struct stat& parent_st);
  // setattr_should_drop_suidgid() for the caller: the mode a write or
  // truncate leaves (setuid gone; setgid with group exec, or for a
  // caller outside the group), nullopt when nothing changes.
  static std::optional<uint32_t> KillPrivMode(const Cred& c, const struct stat& st);
  // Whether some file open on the server writes the backing inode.
  bool OpenForWriting(ino_t backing_ino) const;
  // The kill made for the caller on `fd`/`rel`: write, truncate.
  void KillPriv(const Cred& c, const std::string& rel, int fd);

  void Log(const std::string& line);

  Options o_;
  std::optional<Model> model_;
  Process template_;
  Cred anyone_ = Cred::ForUser(65534, 65534);  // a caller without privilege
  Process anyone_p_;
  Node backing_node_;
  std::unordered_map<std::string, Process> processes_;
  // The model's node of a relative path, and whether anyone may search
  // it, until the next change (Changed()).
  std::unordered_map<std::string, Node> node_cache_;
  std::unordered_map<std::string, bool> searchable_;
  Inodes nodes_;
  int bfd_ = -1;
  FILE* log_ = nullptr;
  std::unordered_map<uint64_t, OpenFile> files_;
  std::unordered_map<uint64_t, OpenDir> dirs_;
  uint64_t next_fh_ = 1;
  int next_model_fd_ = kFirstFileFd;
  bool decide_ = true;  // false: default_permissions and no policy
};

}  // namespace pathwarden::fileserver

#endif  // PATHWARDEN_FILESERVER_SERVER_IMPL_H_
