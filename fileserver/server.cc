// pathwarden-fs: the FUSE low-level operations, each decided by the model
// for the caller, then performed on the backing directory as root with
// the owner, group, mode and ACLs Linux gives the caller's objects.
// Linux: fs/fuse/dir.c fuse_permission(), fuse_setattr(); fs/namei.c
// may_lookup(); fs/inode.c inode_init_owner(), mode_strip_sgid();
// fs/attr.c setattr_should_drop_sgid(); fs/inode.c should_remove_suid().

#define FUSE_USE_VERSION 34

#include "fileserver/server.h"

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

#include <fmt/format.h>

#include "fileserver/inodes.h"
#include "fileserver/proc_cred.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "src/perm/setid.h"
#include "src/policy/policy.h"

namespace pathwarden::fileserver {
namespace {

// __FMODE_EXEC: the open of an execve() (include/linux/fs.h), which FUSE
// passes in the OPEN request's flags.
constexpr uint64_t kFmodeExec = 0x20;
// The fd numbers the server gives the model's processes: the directory a
// two-path request's first path is relative to, and a file another
// process opened (ftruncate by a process that did not open it).
constexpr int kDirFd = 1 << 20;
constexpr int kBorrowedFd = (1 << 20) + 1;
constexpr int kFirstFileFd = (1 << 20) + 2;

std::string Join(const std::string& dir, const std::string& rel) {
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

Result<void, std::string> Server::Start() {
  bfd_ = open(o_.backing.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bfd_ < 0) return Unexpected(fmt::format("{}: {}", o_.backing, std::strerror(errno)));
  if (!o_.log.empty()) {
    log_ = std::fopen(o_.log.c_str(), "a");
    if (log_ == nullptr) return Unexpected(fmt::format("{}: {}", o_.log, std::strerror(errno)));
    std::setvbuf(log_, nullptr, _IOLBF, 0);
  }
  umask(0);
  decide_ = !o_.default_permissions || !o_.policies.empty();
  auto m = Model::FromHost();
  if (!m) return Unexpected(m.error());
  model_.emplace(std::move(*m));
  auto n = model_->Lookup(o_.backing, true);
  if (!n) return Unexpected(fmt::format("{}: the model cannot resolve it", o_.backing));
  backing_node_ = *n;
  template_ = model_->Spawn("pathwarden-fs", Cred::ForUser(0, 0));
  // The policies, their paths under the mount point moved to the backing
  // directory; a rule on an ancestor of the mount point covers all of it.
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return Unexpected(std::string("getcwd failed"));
  for (const std::string& file : o_.policies) {
    auto p = policy::LoadPolicy(file, cwd);
    if (!p) return Unexpected(p.error());
    std::map<std::string, policy::PathRule> moved;
    for (const policy::PathRule& r : p->paths) {
      std::string to;
      const std::string& mp = o_.mountpoint;
      if (r.path == mp || r.path.starts_with(mp + "/")) {
        to = o_.backing + r.path.substr(mp.size());
      } else if (r.path == "/" || mp.starts_with(r.path + "/")) {
        to = o_.backing;
      } else {
        continue;  // outside the mount: it decides nothing here
      }
      policy::PathRule& into = moved[to];
      into.path = to;
      into.access |= r.access;
      into.origins.insert(into.origins.end(), r.origins.begin(), r.origins.end());
    }
    p->paths.clear();
    for (auto& [path, rule] : moved) p->paths.push_back(std::move(rule));
    auto kind_of = [&](const std::string& path) {
      auto r = model_->Resolve(template_, path, true);
      if (!r) {
        const int err = r.error().err();
        return err == ENOENT || err == ENOTDIR ? policy::PathKind::kMissing
                                               : policy::PathKind::kDenied;
      }
      auto t = model_->TypeOf(*r);
      return t && *t == FileType::kDirectory ? policy::PathKind::kDirectory
                                             : policy::PathKind::kOther;
    };
    policy::HostLayer l = policy::BuildLayer(*p, model_->abi(), kind_of);
    for (const std::string& w : l.warnings)
      std::fprintf(stderr, "pathwarden-fs: %s: %s\n", file.c_str(), w.c_str());
    const Decision d = model_->Apply(template_, pathwarden::Restrict{l.ruleset});
    if (!d.allowed()) return Unexpected(fmt::format("{}: {}", file, d.ToText()));
  }
  anyone_p_ = ProcessFor(anyone_);
  return {};
}

void Server::Log(const std::string& line) {
  if (log_ != nullptr) std::fprintf(log_, "%s\n", line.c_str());
}

std::string CredKey(const Cred& c) {
  std::string k = fmt::format("{}.{}.{}.{}:{}.{}.{}.{}:{:x}:{:x}:{:o}:", c.ruid, c.euid, c.suid,
                              c.fsuid, c.rgid, c.egid, c.sgid, c.fsgid, c.cap_effective,
                              c.cap_permitted, c.umask);
  for (uint32_t g : c.groups()) k += fmt::format("{},", g);
  // The user namespace by what it is: its maps, and where the server
  // stands (ReadCred() reads a namespace other than the initial one anew
  // each time).
  if (c.userns)
    k += fmt::format(":{}:{}:{}:{}.{}", c.userns->Describe(), c.userns->reader_inside,
                     c.userns->overflow_shown, c.userns->overflow_uid, c.userns->overflow_gid);
  return k;
}

Process Server::ProcessFor(const Cred& c) {
  const std::string key = CredKey(c);
  auto it = processes_.find(key);
  if (it != processes_.end()) return it->second;
  Process p = model_->Spawn(fmt::format("uid {}", c.fsuid), c, template_);
  (void)model_->SetRoot(p, backing_node_);
  (void)model_->SetCwd(p, backing_node_);
  processes_.emplace(key, p);
  return p;
}

Result<Server::Caller, int> Server::CallerOf(fuse_req_t req, bool access, bool creates) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  // A caller whose credentials change while asked is read again; one
  // whose /proc cannot be read (it exited) is refused.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto c = ReadCred(ctx->pid);
    if (!c) {
      Log(fmt::format("refused: pid {}: {}", ctx->pid, c.error()));
      return Unexpected(EACCES);
    }
    Cred cred = *c;
    // access() asks with the real ids (access_override_creds()), which
    // the request carries; faccessat2(AT_EACCESS) with the fs ids.
    const bool ids_ok = cred.fsuid == ctx->uid && cred.fsgid == ctx->gid;
    const bool real_ok = cred.ruid == ctx->uid && cred.rgid == ctx->gid;
    if (ids_ok || real_ok) {
      if (!ids_ok && !access) {
        // A walk inside access() (access_override_creds()): the real ids,
        // and a non-root caller's effective capabilities cleared (a real
        // root's are its permitted ones).
        cred.fsuid = cred.ruid;
        cred.fsgid = cred.rgid;
        cred.cap_effective = cred.ruid == 0 ? cred.cap_permitted : 0;
      }
      if (creates) cred.umask = ctx->umask;
      if (!decide_) return Caller{cred, Process{}};
      // default_permissions: the kernel made the Unix checks; the model
      // asks the policy layers for root with every capability.
      if (o_.default_permissions) return Caller{cred, ProcessFor(Cred::ForUser(0, 0))};
      return Caller{cred, ProcessFor(cred)};
    }
  }
  Log(fmt::format("refused: pid {}: credentials changed while asked", ctx->pid));
  return Unexpected(EACCES);
}

Result<Server::Where, int> Server::WhereOf(fuse_ino_t ino) {
  const NodeEntry* e = nodes_.Get(ino);
  if (e == nullptr) return Unexpected(ESTALE);
  auto rel = nodes_.RelPath(ino);
  if (!rel) {
    // A name removed since: the model holds no position for it.
    return Unexpected(ESTALE);
  }
  return Where{*rel, ino == kRootId ? 0 : e->parent, e->name};
}

Result<Node, int> Server::ModelNode(const std::string& rel) {
  auto it = node_cache_.find(rel);
  if (it != node_cache_.end()) return it->second;
  auto n = model_->Lookup(Join(o_.backing, rel), false);
  if (!n) return Unexpected(EACCES);
  node_cache_.emplace(rel, *n);
  return *n;
}

int Server::Decide(const Caller& c, const std::string& cwd_rel, const Request& r, const char* op,
                   const std::string& what) {
  if (!decide_) return 0;
  auto cwd = ModelNode(cwd_rel);
  if (!cwd || !model_->SetCwd(c.p, *cwd)) {
    Log(fmt::format("refused: {} {}: the model has no {}", op, what, cwd_rel));
    return EACCES;
  }
  const Decision d =
      model_->Evaluate(c.p, r, log_ != nullptr ? Model::Detail::kReason : Model::Detail::kVerdictOnly);
  if (d.allowed()) return 0;
  if (d.unknown()) {
    Log(fmt::format("refused: {} {} by uid {}: unknown: {}", op, what, c.cred.fsuid,
                    d.reason().unknown_why));
    return EACCES;
  }
  if (log_ != nullptr)
    Log(fmt::format("denied: {} {} by uid {}: {} ({})", op, what, c.cred.fsuid,
                    std::strerror(d.err()), d.ToText()));
  return d.err();
}

int Server::DecideXattr(const Caller& c, const std::string& cwd_rel, const Request& r,
                        const char* op, const std::string& what) {
  if (!decide_) return 0;
  auto cwd = ModelNode(cwd_rel);
  if (!cwd || !model_->SetCwd(c.p, *cwd)) {
    Log(fmt::format("refused: {} {}: the model has no {}", op, what, cwd_rel));
    return EACCES;
  }
  const Decision d = model_->Evaluate(c.p, r, Model::Detail::kVerdictOnly);
  if (d.unknown() &&
      d.reason().unknown_why.find("does not hold the host's extended attributes") !=
          std::string::npos)
    return 0;
  return Decide(c, cwd_rel, r, op, what);
}

Result<Fd, int> Server::ModelFdOf(const Caller& c, const OpenFile& f, const std::string& rel) {
  if (c.p == f.opener) {
    if (f.model_fd < 0) return Unexpected(EACCES);
    return Fd{f.model_fd};
  }
  auto n = ModelNode(rel);
  if (!n) return Unexpected(EACCES);
  auto a = model_->Adopt(c.p, kBorrowedFd, *n, f.flags, f.opener);
  if (!a) return Unexpected(EACCES);
  return *a;
}

void Server::Changed(const std::string& rel) {
  // What the server remembers of the tree is forgotten at each change (a
  // rename moves every path below it).
  node_cache_.clear();
  searchable_.clear();
  if (!model_) return;
  auto r = model_->Revalidate(model_->Init(), Join(o_.backing, rel));
  if (!r) Log(fmt::format("revalidating {}: {}", rel, r.error()));
}

int Server::Fstatat(const std::string& rel, struct stat* st) const {
  return fstatat(bfd_, rel.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

void Server::ReplyEntry(fuse_req_t req, uint64_t parent, const std::string& name) {
  auto pw = WhereOf(parent);
  if (!pw) {
    fuse_reply_err(req, pw.error());
    return;
  }
  const std::string rel = pw->rel == "." ? name : pw->rel + "/" + name;
  fuse_entry_param e{};
  if (int err = Fstatat(rel, &e.attr)) {
    fuse_reply_err(req, err);
    return;
  }
  e.ino = nodes_.Child(parent, name, e.attr.st_ino);
  e.attr_timeout = 0;
  e.entry_timeout = 0;
  fuse_reply_entry(req, &e);
}

// The times a SETATTR sets, as utimensat() takes them: each given one
// now or as given, the other UTIME_OMIT.
void SetattrTimes(int to_set, const struct stat& attr, struct timespec ts[2]) {
  ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
  if (to_set & FUSE_SET_ATTR_ATIME) {
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) ts[0].tv_nsec = UTIME_NOW;
    else ts[0] = attr.st_atim;
  }
  if (to_set & FUSE_SET_ATTR_MTIME) {
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) ts[1].tv_nsec = UTIME_NOW;
    else ts[1] = attr.st_mtim;
  }
}

uint32_t Server::CreateMode(const Cred& c, uint32_t mode, const struct stat& parent_st) {
  return perm::InitOwner(c, mode, parent_st.st_mode, parent_st.st_gid).mode;
}

int Server::NewObject(const Caller& c, const std::string& rel, const struct stat& parent_st,
                      bool symlink) {
  struct stat st;
  if (int err = Fstatat(rel, &st)) return err;
  const perm::NewOwner owner =
      perm::InitOwner(c.cred, st.st_mode, parent_st.st_mode, parent_st.st_gid);
  const uid_t uid = owner.uid;
  const gid_t gid = owner.gid;
  if (st.st_uid != uid || st.st_gid != gid) {
    if (fchownat(bfd_, rel.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    // root's chown dropped setuid (and setgid with group exec): put back
    // the mode the creation gave.
    struct stat after;
    if (!symlink && Fstatat(rel, &after) == 0 && (after.st_mode & 07777) != (st.st_mode & 07777))
      if (fchmodat(bfd_, rel.c_str(), st.st_mode & 07777, 0) != 0) return errno;
  }
  return 0;
}

std::optional<uint32_t> Server::KillPrivMode(const Cred& c, const struct stat& st) {
  const uint32_t m = perm::KillSuidMode(c, st.st_mode, st.st_gid) & 07777;
  if (m == (st.st_mode & 07777)) return std::nullopt;
  return m;
}

bool Server::OpenForWriting(ino_t backing_ino) const {
  for (const auto& [fh, f] : files_)
    if (f.backing_ino == backing_ino && (f.flags & O_ACCMODE) != O_RDONLY) return true;
  return false;
}

void Server::KillPriv(const Cred& c, const std::string& rel, int fd) {
  struct stat st;
  if ((fd >= 0 ? fstat(fd, &st) : Fstatat(rel, &st)) != 0) return;
  const std::optional<uint32_t> kill = KillPrivMode(c, st);
  if (!kill) return;
  const mode_t m = *kill;
  if (fd >= 0) {
    (void)fchmod(fd, m);
  } else {
    (void)fchmodat(bfd_, rel.c_str(), m, 0);
  }
  if (!rel.empty()) Changed(rel);
}

// The operations.

bool Server::AnyoneMaySearch(const std::string& rel) {
  auto it = searchable_.find(rel);
  if (it != searchable_.end()) return it->second;
  struct stat st;
  bool anyone = Fstatat(rel, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0111) == 0111;
  if (anyone) {
    const std::string path = Join(o_.backing, rel);
    anyone = lgetxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) < 0 && errno == ENODATA;
  }
  searchable_.emplace(rel, anyone);
  return anyone;
}

void Server::Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  // A directory every class may search, with no ACL (the kernel's fast
  // search check): no caller's credentials change the answer, and
  // Landlock does not check a walk, so the model is asked for anyone.
  auto c = decide_ && AnyoneMaySearch(pw->rel) ? Result<Caller, int>(Caller{anyone_, anyone_p_})
                                              : Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  // may_lookup(): search permission on the parent, then the name.
  if (int err = Decide(*c, pw->rel, Lstat{.path = name}, "lookup", Join(pw->rel, name)))
    return (void)fuse_reply_err(req, err);
  ReplyEntry(req, parent, name);
}

void Server::Getattr(fuse_req_t req, fuse_ino_t ino) {
  // stat() checks nothing but the walk, which the lookups made.
  auto w = WhereOf(ino);
  struct stat st;
  if (!w) {
    // A name removed while a file is open on it: fstat() through the
    // file (the kernel asks for it to check permissions, too).
    if (w.error() == ESTALE && nodes_.Get(ino) != nullptr)
      for (const auto& [fh, f] : files_)
        if (f.node == ino) {
          if (fstat(f.fd, &st) != 0) return (void)fuse_reply_err(req, errno);
          return (void)fuse_reply_attr(req, &st, 0);
        }
    return (void)fuse_reply_err(req, w.error());
  }
  if (int err = Fstatat(w->rel, &st)) return (void)fuse_reply_err(req, err);
  fuse_reply_attr(req, &st, 0);
}

void Server::Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                     fuse_file_info* fi) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) {
    if (w.error() == ESTALE && nodes_.Get(ino) != nullptr)
      return SetattrRemoved(req, ino, *c, attr, to_set, fi);
    return (void)fuse_reply_err(req, w.error());
  }
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const std::string name = NameFor(*w);
  struct stat st;
  if (int err = Fstatat(w->rel, &st)) return (void)fuse_reply_err(req, err);
  const bool lnk = S_ISLNK(st.st_mode);
  // Each change decided before any is made (notify_change() makes one
  // setattr of them all).
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const Lchown r{.path = name,
                   .uid = (to_set & FUSE_SET_ATTR_UID) ? int64_t{attr->st_uid} : -1,
                   .gid = (to_set & FUSE_SET_ATTR_GID) ? int64_t{attr->st_gid} : -1};
    if (int err = Decide(*c, cwd, r, "chown", w->rel)) return (void)fuse_reply_err(req, err);
  }
  // The VFS's own kill of setuid and setgid before a write or with a
  // truncate (file_remove_privs(), do_truncate()) reaches the server as a
  // mode change like chmod's, even with FUSE_CAP_HANDLE_KILLPRIV on Linux
  // 6.18: it is told from chmod by being exactly what the caller's write
  // or truncate drops, with the size changed or the file open for writing
  // (docs/fileserver.md).
  const std::optional<uint32_t> kill = KillPrivMode(c->cred, st);
  const bool killpriv = (to_set & FUSE_SET_ATTR_MODE) && kill &&
                        (attr->st_mode & 07777) == *kill &&
                        !(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
                        ((to_set & FUSE_SET_ATTR_SIZE) || OpenForWriting(st.st_ino));
  if ((to_set & FUSE_SET_ATTR_MODE) && !killpriv) {
    if (int err = Decide(*c, cwd, Chmod{.path = name, .mode = attr->st_mode & 07777}, "chmod",
                         w->rel))
      return (void)fuse_reply_err(req, err);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int err = 0;
    if (fi != nullptr) {
      auto f = files_.find(fi->fh);
      if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
      if (decide_) {
        auto fd = ModelFdOf(*c, f->second, w->rel);
        if (!fd) return (void)fuse_reply_err(req, fd.error());
        err = Decide(*c, cwd, Ftruncate{.fd = *fd}, "ftruncate", w->rel);
      }
    } else {
      err = Decide(*c, cwd, Truncate{.path = name}, "truncate", w->rel);
    }
    if (err) return (void)fuse_reply_err(req, err);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    auto half = [&](int set, int now) {
      if (!(to_set & set)) return TimeSpec::kOmit;
      return (to_set & now) ? TimeSpec::kNow : TimeSpec::kSet;
    };
    std::optional<std::array<TimeSpec, 2>> times =
        std::array<TimeSpec, 2>{half(FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW),
                                half(FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW)};
    if ((*times)[0] == TimeSpec::kNow && (*times)[1] == TimeSpec::kNow) times = std::nullopt;
    const Utimensat r{.path = name, .times = times, .flags = AT_SYMLINK_NOFOLLOW};
    if (int err = Decide(*c, cwd, r, "utimensat", w->rel)) return (void)fuse_reply_err(req, err);
  }
  // Performed as root, then made what the caller's call makes.
  const char* rel = w->rel.c_str();
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : uid_t(-1);
    const gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : gid_t(-1);
    if (fchownat(bfd_, rel, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
      return (void)fuse_reply_err(req, errno);
    // setattr_should_drop_sgid() for the caller, on the old group: root
    // keeps a setgid without group exec that the caller loses.
    if (!lnk && perm::ChownKillsSgid(c->cred, st.st_mode, st.st_gid)) {
      struct stat now;
      if (Fstatat(w->rel, &now) == 0 && (now.st_mode & S_ISGID))
        (void)fchmodat(bfd_, rel, now.st_mode & 07777 & ~S_ISGID, 0);
    }
  }
  if (to_set & FUSE_SET_ATTR_MODE) {
    struct stat now;
    if (int err = Fstatat(w->rel, &now)) return (void)fuse_reply_err(req, err);
    uint32_t mode = attr->st_mode & 07777;
    // setattr_prepare(): a caller outside the group loses setgid.
    if (!killpriv) mode = perm::ModeSetBy(c->cred, mode, now.st_gid);
    if (fchmodat(bfd_, rel, mode, 0) != 0) return (void)fuse_reply_err(req, errno);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int r;
    if (fi != nullptr) {
      r = ftruncate(files_[fi->fh].fd, attr->st_size);
    } else {
      const int fd = openat(bfd_, rel, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      r = fd < 0 ? -1 : ftruncate(fd, attr->st_size);
      const int saved = errno;
      if (fd >= 0) close(fd);
      errno = saved;
    }
    if (r != 0) return (void)fuse_reply_err(req, errno);
    KillPriv(c->cred, w->rel, -1);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    SetattrTimes(to_set, *attr, ts);
    if (utimensat(bfd_, rel, ts, AT_SYMLINK_NOFOLLOW) != 0)
      return (void)fuse_reply_err(req, errno);
  }
  Changed(w->rel);
  struct stat out;
  if (int err = Fstatat(w->rel, &out)) return (void)fuse_reply_err(req, err);
  fuse_reply_attr(req, &out, 0);
}

void Server::SetattrRemoved(fuse_req_t req, fuse_ino_t ino, const Caller& c, struct stat* attr,
                            int to_set, fuse_file_info* fi) {
  // The open file the call goes through: the one FUSE names (ftruncate()
  // sets FATTR_FH), else one open on the node, the caller's own first
  // (fchmod(), fchown() and futimens() reach the server without the file:
  // Linux: fs/fuse/dir.c fuse_do_setattr() sets FATTR_FH only with
  // ATTR_FILE). None: the server cannot tell what was asked: ESTALE.
  const OpenFile* f = nullptr;
  if (fi != nullptr) {
    auto it = files_.find(fi->fh);
    if (it == files_.end()) return (void)fuse_reply_err(req, EBADF);
    f = &it->second;
  } else {
    for (const auto& [fh, of] : files_) {
      if (of.node != ino) continue;
      if (f == nullptr || (of.opener == c.p && f->opener != c.p)) f = &of;
    }
  }
  if (f == nullptr || f->node != ino) return (void)fuse_reply_err(req, ESTALE);
  const std::string what = fmt::format("node {} (removed)", ino);
  struct stat st;
  if (fstat(f->fd, &st) != 0) return (void)fuse_reply_err(req, errno);
  // The caller's fd of the file: the opener's own, or the opener's passed
  // to the caller (the model holds no name to adopt it by) and closed
  // after. Without one nothing is decided: refused.
  Fd fd{};
  bool sent = false;
  if (decide_) {
    if (f->model_fd < 0) {
      Log(fmt::format("refused: setattr {}: the model has no fd of it", what));
      return (void)fuse_reply_err(req, EACCES);
    }
    if (c.p == f->opener) {
      fd = Fd{f->model_fd};
    } else {
      const Decision d =
          model_->Apply(f->opener, SendFd{.fd = Fd{f->model_fd}, .target = c.p},
                        Model::Detail::kVerdictOnly);
      if (!d.allowed()) {
        Log(fmt::format("refused: setattr {}: the model could not pass the fd", what));
        return (void)fuse_reply_err(req, EACCES);
      }
      fd = d.fd();
      sent = true;
    }
  }
  struct Closer {
    Model* m;
    Process p;
    Fd fd;
    bool on;
    ~Closer() {
      if (on) (void)m->CloseFd(p, fd);
    }
  } closer{sent ? &*model_ : nullptr, c.p, fd, sent};
  // The requests, each decided before any change is made.
  std::vector<Request> asked;
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
    asked.push_back(Fchown{.fd = fd,
                           .uid = (to_set & FUSE_SET_ATTR_UID) ? int64_t{attr->st_uid} : -1,
                           .gid = (to_set & FUSE_SET_ATTR_GID) ? int64_t{attr->st_gid} : -1});
  // The VFS's setuid kill before a write through the file, told as in
  // Setattr().
  const std::optional<uint32_t> kill = KillPrivMode(c.cred, st);
  const bool killpriv = (to_set & FUSE_SET_ATTR_MODE) && kill &&
                        (attr->st_mode & 07777) == *kill &&
                        !(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
                        ((to_set & FUSE_SET_ATTR_SIZE) || OpenForWriting(st.st_ino));
  if ((to_set & FUSE_SET_ATTR_MODE) && !killpriv)
    asked.push_back(Fchmod{.fd = fd, .mode = attr->st_mode & 07777});
  if (to_set & FUSE_SET_ATTR_SIZE) asked.push_back(Ftruncate{.fd = fd});
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    auto half = [&](int set, int now) {
      if (!(to_set & set)) return TimeSpec::kOmit;
      return (to_set & now) ? TimeSpec::kNow : TimeSpec::kSet;
    };
    std::optional<std::array<TimeSpec, 2>> times =
        std::array<TimeSpec, 2>{half(FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW),
                                half(FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW)};
    if ((*times)[0] == TimeSpec::kNow && (*times)[1] == TimeSpec::kNow) times = std::nullopt;
    asked.push_back(Futimens{.fd = fd, .times = times});
  }
  for (const Request& r : asked)
    if (int err = Decide(c, ".", r, "setattr", what)) return (void)fuse_reply_err(req, err);
  // Performed as root through the server's fd, then made what the
  // caller's call makes (as in Setattr()).
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : uid_t(-1);
    const gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : gid_t(-1);
    if (fchown(f->fd, uid, gid) != 0) return (void)fuse_reply_err(req, errno);
    if (perm::ChownKillsSgid(c.cred, st.st_mode, st.st_gid)) {
      struct stat now;
      if (fstat(f->fd, &now) == 0 && (now.st_mode & S_ISGID))
        (void)fchmod(f->fd, now.st_mode & 07777 & ~S_ISGID);
    }
  }
  if (to_set & FUSE_SET_ATTR_MODE) {
    struct stat now;
    if (fstat(f->fd, &now) != 0) return (void)fuse_reply_err(req, errno);
    uint32_t mode = attr->st_mode & 07777;
    if (!killpriv) mode = perm::ModeSetBy(c.cred, mode, now.st_gid);
    if (fchmod(f->fd, mode) != 0) return (void)fuse_reply_err(req, errno);
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    // ftruncate() on the server's fd, whatever it was opened for: the
    // caller's fd's mode was checked (by the VFS, and by Ftruncate).
    if (ftruncate(f->fd, attr->st_size) != 0) return (void)fuse_reply_err(req, errno);
    KillPriv(c.cred, "", f->fd);
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    SetattrTimes(to_set, *attr, ts);
    if (futimens(f->fd, ts) != 0) return (void)fuse_reply_err(req, errno);
  }
  // The model's inode, which no name reaches to revalidate, made the same.
  if (decide_)
    for (const Request& r : asked)
      if (!model_->Apply(c.p, r, Model::Detail::kVerdictOnly).allowed())
        Log(fmt::format("setattr {}: the model did not follow", what));
  struct stat out;
  if (fstat(f->fd, &out) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_attr(req, &out, 0);
}

void Server::Readlink(fuse_req_t req, fuse_ino_t ino) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  if (int err = Decide(*c, cwd, pathwarden::Readlink{.path = NameFor(*w)}, "readlink", w->rel))
    return (void)fuse_reply_err(req, err);
  char buf[PATH_MAX + 1];
  const ssize_t n = readlinkat(bfd_, w->rel.c_str(), buf, PATH_MAX);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

void Server::Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const pathwarden::Mknod r{.path = name,
                            .type = mode & S_IFMT,
                            .mode = mode & 07777,
                            .rdev_major = major(rdev),
                            .rdev_minor = minor(rdev)};
  if (int err = Decide(*c, pw->rel, r, "mknod", rel)) return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  umask(c->cred.umask);
  const int rc = mknodat(bfd_, rel.c_str(), (mode & S_IFMT) | CreateMode(c->cred, mode, pst) ,
                         rdev);
  const int saved = errno;
  umask(0);
  if (rc != 0) return (void)fuse_reply_err(req, saved);
  if (int err = NewObject(*c, rel, pst, false)) Log(fmt::format("mknod {}: {}", rel, err));
  Changed(rel);
  ReplyEntry(req, parent, name);
}

void Server::Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  if (int err = Decide(*c, pw->rel, pathwarden::Mkdir{.path = name, .mode = mode & 07777},
                       "mkdir", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  umask(c->cred.umask);
  const int rc = mkdirat(bfd_, rel.c_str(), mode & 07777);
  const int saved = errno;
  umask(0);
  if (rc != 0) return (void)fuse_reply_err(req, saved);
  if (int err = NewObject(*c, rel, pst, false)) Log(fmt::format("mkdir {}: {}", rel, err));
  Changed(rel);
  ReplyEntry(req, parent, name);
}

void Server::Unlink(fuse_req_t req, fuse_ino_t parent, const char* name, bool dir) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const int err = dir ? Decide(*c, pw->rel, Rmdir{.path = name}, "rmdir", rel)
                      : Decide(*c, pw->rel, pathwarden::Unlink{.path = name}, "unlink", rel);
  if (err) return (void)fuse_reply_err(req, err);
  if (unlinkat(bfd_, rel.c_str(), dir ? AT_REMOVEDIR : 0) != 0)
    return (void)fuse_reply_err(req, errno);
  nodes_.Removed(parent, name);
  Changed(rel);
  fuse_reply_err(req, 0);
}

void Server::Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  if (int err = Decide(*c, pw->rel, pathwarden::Symlink{.target = target, .path = name},
                       "symlink", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  if (symlinkat(target, bfd_, rel.c_str()) != 0) return (void)fuse_reply_err(req, errno);
  if (int err = NewObject(*c, rel, pst, true)) Log(fmt::format("symlink {}: {}", rel, err));
  Changed(rel);
  ReplyEntry(req, parent, name);
}

void Server::Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                    const char* newname, unsigned flags) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto from = WhereOf(parent);
  auto to = WhereOf(newparent);
  if (!from || !to) return (void)fuse_reply_err(req, from ? to.error() : from.error());
  const std::string rel = Join(from->rel, name), newrel = Join(to->rel, newname);
  if (decide_) {
    auto dir = ModelNode(from->rel);
    if (!dir || !model_->Adopt(c->p, kDirFd, *dir, O_PATH)) return (void)fuse_reply_err(req, EACCES);
    const pathwarden::Rename r{.dirfd = Fd{kDirFd}, .oldpath = name, .newpath = newname,
                               .flags = flags};
    if (int err = Decide(*c, to->rel, r, "rename", rel + " " + newrel))
      return (void)fuse_reply_err(req, err);
  }
  if (renameat2(bfd_, rel.c_str(), bfd_, newrel.c_str(), flags) != 0)
    return (void)fuse_reply_err(req, errno);
  if (flags & RENAME_WHITEOUT) {
    // The whiteout left at the old name is the caller's new object
    // (shmem_whiteout(): made with the caller's credentials), not root's.
    struct stat pst;
    if (int err = Fstatat(from->rel, &pst); err == 0) {
      if (int e = NewObject(*c, rel, pst, false)) return (void)fuse_reply_err(req, e);
    } else {
      return (void)fuse_reply_err(req, err);
    }
  }
  nodes_.Moved(parent, name, newparent, newname, flags & RENAME_EXCHANGE);
  Changed(rel);
  Changed(newrel);
  fuse_reply_err(req, 0);
}

void Server::Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  auto c = Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  auto to = WhereOf(newparent);
  if (!w || !to) return (void)fuse_reply_err(req, w ? to.error() : w.error());
  if (w->parent == 0) return (void)fuse_reply_err(req, EPERM);  // the root: a directory
  const std::string newrel = Join(to->rel, newname);
  if (decide_) {
    // protected_hardlinks as it is now (Model::Revalidate() reads the
    // sysctls again): the VFS checks it too, with the current value.
    Changed(w->rel);
    auto dir = ModelNode(*nodes_.RelPath(w->parent));
    if (!dir || !model_->Adopt(c->p, kDirFd, *dir, O_PATH)) return (void)fuse_reply_err(req, EACCES);
    const pathwarden::Link r{.dirfd = Fd{kDirFd}, .oldpath = w->name, .newpath = newname};
    if (int err = Decide(*c, to->rel, r, "link", w->rel + " " + newrel))
      return (void)fuse_reply_err(req, err);
  }
  if (linkat(bfd_, w->rel.c_str(), bfd_, newrel.c_str(), 0) != 0)
    return (void)fuse_reply_err(req, errno);
  Changed(w->rel);
  Changed(newrel);
  ReplyEntry(req, newparent, newname);
}

void Server::Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, bool dir) {
  auto c = (fi->flags & O_TRUNC) ? CallerOf(req) : Asker(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const uint64_t flags = static_cast<uint32_t>(fi->flags) & ~(kFmodeExec | O_LARGEFILE);
  int err;
  if (fi->flags & kFmodeExec) {
    err = Decide(*c, cwd, ExecCheck{.path = NameFor(*w)}, "exec", w->rel);
  } else {
    err = Decide(*c, cwd, pathwarden::Open{.path = NameFor(*w), .flags = flags}, "open", w->rel);
  }
  if (err) return (void)fuse_reply_err(req, err);
  const int fd = openat(bfd_, w->rel.c_str(),
                        (dir ? O_RDONLY | O_DIRECTORY : (flags & ~(O_NOFOLLOW | O_NOCTTY))) |
                            O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return (void)fuse_reply_err(req, errno);
  const uint64_t fh = next_fh_++;
  if (dir) {
    dirs_[fh] = OpenDir{fd, {}, false};
  } else {
    struct stat fst;
    OpenFile f{fd, c->p, -1, flags, ino, fstat(fd, &fst) == 0 ? fst.st_ino : 0};
    if (decide_) {
      auto n = ModelNode(w->rel);
      const int num = next_model_fd_++;
      if (n && model_->Adopt(c->p, num, *n, flags)) f.model_fd = num;
    }
    files_[fh] = f;
    if (flags & O_TRUNC) KillPriv(c->cred, w->rel, fd);
  }
  fi->fh = fh;
  if (fuse_reply_open(req, fi) == -ENOENT) {
    // The caller was interrupted: nobody will release it.
    if (dir) {
      close(fd);
      dirs_.erase(fh);
    } else {
      Release(nullptr, fi);
    }
  }
}

void Server::Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                    fuse_file_info* fi) {
  auto c = CallerOf(req, false, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto pw = WhereOf(parent);
  if (!pw) return (void)fuse_reply_err(req, pw.error());
  const std::string rel = Join(pw->rel, name);
  const uint64_t flags = static_cast<uint32_t>(fi->flags) & ~(kFmodeExec | O_LARGEFILE);
  if (int err = Decide(*c, pw->rel,
                       pathwarden::Open{.path = name, .flags = flags | O_CREAT, .mode = mode & 07777},
                       "create", rel))
    return (void)fuse_reply_err(req, err);
  struct stat pst;
  if (int err = Fstatat(pw->rel, &pst)) return (void)fuse_reply_err(req, err);
  umask(c->cred.umask);
  const int fd = openat(bfd_, rel.c_str(),
                        (flags & ~(O_NOFOLLOW | O_NOCTTY | O_TRUNC)) | O_CREAT | O_EXCL |
                            O_CLOEXEC | O_NOFOLLOW,
                        CreateMode(c->cred, mode & 07777, pst));
  const int saved = errno;
  umask(0);
  if (fd < 0) return (void)fuse_reply_err(req, saved);
  if (int err = NewObject(*c, rel, pst, false)) Log(fmt::format("create {}: {}", rel, err));
  Changed(rel);
  fuse_entry_param e{};
  if (int err = Fstatat(rel, &e.attr)) {
    close(fd);
    return (void)fuse_reply_err(req, err);
  }
  e.ino = nodes_.Child(parent, name, e.attr.st_ino);
  const uint64_t fh = next_fh_++;
  OpenFile f{fd, c->p, -1, flags, e.ino, e.attr.st_ino};
  if (decide_) {
    auto n = ModelNode(rel);
    const int num = next_model_fd_++;
    if (n && model_->Adopt(c->p, num, *n, flags & ~O_TRUNC)) f.model_fd = num;
  }
  files_[fh] = f;
  fi->fh = fh;
  if (fuse_reply_create(req, &e, fi) == -ENOENT) Release(nullptr, fi);
}

void Server::Read(fuse_req_t req, size_t size, off_t off, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
  buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
  buf.buf[0].fd = f->second.fd;
  buf.buf[0].pos = off;
  fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void Server::Write(fuse_req_t req, const char* data, size_t size, off_t off, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  const ssize_t n = pwrite(f->second.fd, data, size, off);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  // With FUSE_CAP_HANDLE_KILLPRIV the server drops setuid and setgid on
  // write, as file_remove_privs() would for the writer.
  struct stat st;
  if (fstat(f->second.fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
    auto c = CallerOf(req);
    if (c) KillPriv(c->cred, nodes_.RelPath(f->second.node).value_or(""), f->second.fd);
  }
  fuse_reply_write(req, static_cast<size_t>(n));
}

void Server::Release(fuse_req_t req, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f != files_.end()) {
    close(f->second.fd);
    if (f->second.model_fd >= 0) (void)model_->CloseFd(f->second.opener, Fd{f->second.model_fd});
    files_.erase(f);
  }
  if (req != nullptr) fuse_reply_err(req, 0);
}

void Server::Readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  auto it = dirs_.find(fi->fh);
  if (it == dirs_.end()) return (void)fuse_reply_err(req, EBADF);
  OpenDir& d = it->second;
  if (!d.listed || off == 0) {
    d.entries.clear();
    const int fd = openat(d.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dp = fd < 0 ? nullptr : fdopendir(fd);
    if (dp == nullptr) {
      if (fd >= 0) close(fd);
      return (void)fuse_reply_err(req, errno);
    }
    while (dirent* de = readdir(dp)) {
      struct stat st{};
      st.st_ino = de->d_ino;
      st.st_mode = static_cast<mode_t>(DTTOIF(de->d_type));
      d.entries.emplace_back(de->d_name, st);
    }
    closedir(dp);
    d.listed = true;
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < d.entries.size(); ++i) {
    const size_t n = fuse_add_direntry(req, buf.data() + used, size - used,
                                       d.entries[i].first.c_str(), &d.entries[i].second,
                                       static_cast<off_t>(i + 1));
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Server::Releasedir(fuse_req_t req, fuse_file_info* fi) {
  auto it = dirs_.find(fi->fh);
  if (it != dirs_.end()) {
    close(it->second.fd);
    dirs_.erase(it);
  }
  fuse_reply_err(req, 0);
}

void Server::Statfs(fuse_req_t req) {
  struct statvfs s;
  if (fstatvfs(bfd_, &s) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_statfs(req, &s);
}

void Server::Access(fuse_req_t req, fuse_ino_t ino, int mask) {
  auto c = Asker(req, true);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  // access() runs with the real ids (access_override_creds()): the
  // request says which ids it carries; the fs ids are faccessat2's
  // AT_EACCESS (and chdir's MAY_CHDIR, sent as X_OK).
  const fuse_ctx* ctx = fuse_req_ctx(req);
  // With the same real and fs ids the request does not say which (the
  // capabilities differ): it is taken as chdir()'s (docs/fileserver.md).
  const bool real = (c->cred.ruid == ctx->uid && c->cred.rgid == ctx->gid) &&
                    !(c->cred.fsuid == ctx->uid && c->cred.fsgid == ctx->gid);
  const pathwarden::Access r{.path = NameFor(*w),
                             .mode = static_cast<uint32_t>(mask),
                             .flags = uint64_t{AT_SYMLINK_NOFOLLOW} | (real ? 0 : AT_EACCESS)};
  fuse_reply_err(req, Decide(*c, cwd, r, "access", w->rel));
}

void Server::Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                       fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, EBADF);
  if (decide_) {
    auto c = CallerOf(req);
    if (!c) return (void)fuse_reply_err(req, c.error());
    auto w = WhereOf(ino);
    if (!w) return (void)fuse_reply_err(req, w.error());
    auto fd = ModelFdOf(*c, f->second, w->rel);
    if (!fd) return (void)fuse_reply_err(req, fd.error());
    const pathwarden::Fallocate r{.fd = *fd,
                                  .mode = static_cast<uint32_t>(mode),
                                  .offset = static_cast<uint64_t>(off),
                                  .len = static_cast<uint64_t>(len)};
    if (int err = Decide(*c, w->parent == 0 ? "." : *nodes_.RelPath(w->parent), r, "fallocate",
                         w->rel))
      return (void)fuse_reply_err(req, err);
  }
  if (fallocate(f->second.fd, mode, off, len) != 0) return (void)fuse_reply_err(req, errno);
  fuse_reply_err(req, 0);
}

void Server::Fsync(fuse_req_t req, int datasync, fuse_file_info* fi) {
  auto f = files_.find(fi->fh);
  if (f == files_.end()) return (void)fuse_reply_err(req, 0);
  fuse_reply_err(req, (datasync ? fdatasync(f->second.fd) : fsync(f->second.fd)) == 0 ? 0 : errno);
}

void Server::Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const pathwarden::Getxattr r{.path = NameFor(*w), .name = name, .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(*c, cwd, r, "getxattr", w->rel)) return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, w->rel);
  std::vector<char> buf(size);
  const ssize_t n = lgetxattr(path.c_str(), name, size ? buf.data() : nullptr, size);
  if (n < 0) return (void)fuse_reply_err(req, errno);
  if (size == 0) return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void Server::Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value,
                      size_t size, int flags) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const pathwarden::Setxattr r{.path = NameFor(*w),
                               .name = name,
                               .value = std::string(value, size),
                               .xattr_flags = static_cast<uint32_t>(flags),
                               .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(*c, cwd, r, "setxattr", w->rel)) return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, w->rel);
  if (lsetxattr(path.c_str(), name, value, size, flags) != 0) return (void)fuse_reply_err(req, errno);
  // posix_acl_update_mode(): a caller outside the group loses setgid,
  // which root setting the ACL kept.
  struct stat st;
  if (std::strcmp(name, "system.posix_acl_access") == 0 && Fstatat(w->rel, &st) == 0) {
    const uint32_t mode = perm::ModeSetBy(c->cred, st.st_mode & 07777, st.st_gid);
    if (mode != (st.st_mode & 07777)) (void)fchmodat(bfd_, w->rel.c_str(), mode, 0);
  }
  Changed(w->rel);
  fuse_reply_err(req, 0);
}

void Server::Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const pathwarden::Listxattr r{.path = NameFor(*w), .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(*c, cwd, r, "listxattr", w->rel)) return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, w->rel);
  const ssize_t need = llistxattr(path.c_str(), nullptr, 0);
  if (need < 0) return (void)fuse_reply_err(req, errno);
  std::vector<char> all(static_cast<size_t>(need) + 1);
  const ssize_t n = llistxattr(path.c_str(), all.data(), all.size());
  if (n < 0) return (void)fuse_reply_err(req, errno);
  // simple_xattr_list(): trusted.* only for CAP_SYS_ADMIN, which root's
  // list on the backing directory shows.
  std::string out;
  for (size_t i = 0; i < static_cast<size_t>(n);) {
    const std::string one(all.data() + i);
    i += one.size() + 1;
    if (one.starts_with("trusted.") && !c->cred.Capable(kCapSysAdmin)) continue;
    out += one;
    out += '\0';
  }
  if (size == 0) return (void)fuse_reply_xattr(req, out.size());
  if (out.size() > size) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, out.data(), out.size());
}

void Server::Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  auto c = CallerOf(req);
  if (!c) return (void)fuse_reply_err(req, c.error());
  auto w = WhereOf(ino);
  if (!w) return (void)fuse_reply_err(req, w.error());
  const std::string cwd = w->parent == 0 ? "." : *nodes_.RelPath(w->parent);
  const pathwarden::Removexattr r{.path = NameFor(*w), .name = name, .flags = AT_SYMLINK_NOFOLLOW};
  if (int err = DecideXattr(*c, cwd, r, "removexattr", w->rel))
    return (void)fuse_reply_err(req, err);
  const std::string path = Join(o_.backing, w->rel);
  if (lremovexattr(path.c_str(), name) != 0) return (void)fuse_reply_err(req, errno);
  Changed(w->rel);
  fuse_reply_err(req, 0);
}

// The C callbacks.

Server& S(fuse_req_t req) { return *static_cast<Server*>(fuse_req_userdata(req)); }

void OpInit(void*, fuse_conn_info* conn) {
  conn->want |= FUSE_CAP_DONT_MASK | FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_HANDLE_KILLPRIV;
  conn->want &= ~(FUSE_CAP_POSIX_ACL | FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_READDIRPLUS |
                  FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_EXPORT_SUPPORT);
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.lookup = [](fuse_req_t r, fuse_ino_t p, const char* n) { S(r).Lookup(r, p, n); };
  ops.forget = [](fuse_req_t r, fuse_ino_t i, uint64_t n) {
    S(r).Forget(i, n);
    fuse_reply_none(r);
  };
  ops.forget_multi = [](fuse_req_t r, size_t count, fuse_forget_data* f) {
    for (size_t i = 0; i < count; ++i) S(r).Forget(f[i].ino, f[i].nlookup);
    fuse_reply_none(r);
  };
  ops.getattr = [](fuse_req_t r, fuse_ino_t i, fuse_file_info*) { S(r).Getattr(r, i); };
  ops.setattr = [](fuse_req_t r, fuse_ino_t i, struct stat* a, int s, fuse_file_info* fi) {
    S(r).Setattr(r, i, a, s, fi);
  };
  ops.readlink = [](fuse_req_t r, fuse_ino_t i) { S(r).Readlink(r, i); };
  ops.mknod = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m, dev_t d) {
    S(r).Mknod(r, p, n, m, d);
  };
  ops.mkdir = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m) { S(r).Mkdir(r, p, n, m); };
  ops.unlink = [](fuse_req_t r, fuse_ino_t p, const char* n) { S(r).Unlink(r, p, n, false); };
  ops.rmdir = [](fuse_req_t r, fuse_ino_t p, const char* n) { S(r).Unlink(r, p, n, true); };
  ops.symlink = [](fuse_req_t r, const char* t, fuse_ino_t p, const char* n) {
    S(r).Symlink(r, t, p, n);
  };
  ops.rename = [](fuse_req_t r, fuse_ino_t p, const char* n, fuse_ino_t np, const char* nn,
                  unsigned f) { S(r).Rename(r, p, n, np, nn, f); };
  ops.link = [](fuse_req_t r, fuse_ino_t i, fuse_ino_t np, const char* nn) {
    S(r).Link(r, i, np, nn);
  };
  ops.open = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) { S(r).Open(r, i, fi, false); };
  ops.create = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m, fuse_file_info* fi) {
    S(r).Create(r, p, n, m, fi);
  };
  ops.read = [](fuse_req_t r, fuse_ino_t, size_t s, off_t o, fuse_file_info* fi) {
    S(r).Read(r, s, o, fi);
  };
  ops.write = [](fuse_req_t r, fuse_ino_t, const char* b, size_t s, off_t o, fuse_file_info* fi) {
    S(r).Write(r, b, s, o, fi);
  };
  ops.flush = [](fuse_req_t r, fuse_ino_t, fuse_file_info*) { fuse_reply_err(r, 0); };
  ops.release = [](fuse_req_t r, fuse_ino_t, fuse_file_info* fi) { S(r).Release(r, fi); };
  ops.fsync = [](fuse_req_t r, fuse_ino_t, int d, fuse_file_info* fi) { S(r).Fsync(r, d, fi); };
  ops.opendir = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) { S(r).Open(r, i, fi, true); };
  ops.readdir = [](fuse_req_t r, fuse_ino_t i, size_t s, off_t o, fuse_file_info* fi) {
    S(r).Readdir(r, i, s, o, fi);
  };
  ops.releasedir = [](fuse_req_t r, fuse_ino_t, fuse_file_info* fi) { S(r).Releasedir(r, fi); };
  ops.fsyncdir = [](fuse_req_t r, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(r, 0); };
  ops.statfs = [](fuse_req_t r, fuse_ino_t) { S(r).Statfs(r); };
  ops.setxattr = [](fuse_req_t r, fuse_ino_t i, const char* n, const char* v, size_t s, int f) {
    S(r).Setxattr(r, i, n, v, s, f);
  };
  ops.getxattr = [](fuse_req_t r, fuse_ino_t i, const char* n, size_t s) {
    S(r).Getxattr(r, i, n, s);
  };
  ops.listxattr = [](fuse_req_t r, fuse_ino_t i, size_t s) { S(r).Listxattr(r, i, s); };
  ops.removexattr = [](fuse_req_t r, fuse_ino_t i, const char* n) { S(r).Removexattr(r, i, n); };
  ops.access = [](fuse_req_t r, fuse_ino_t i, int m) { S(r).Access(r, i, m); };
  ops.fallocate = [](fuse_req_t r, fuse_ino_t i, int m, off_t o, off_t l, fuse_file_info* fi) {
    S(r).Fallocate(r, i, m, o, l, fi);
  };
  return ops;
}();

std::string Canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf) == nullptr) return "";
  return buf;
}

}  // namespace

Result<Options, std::string> ParseOptions(int argc, char** argv) {
  Options o;
  std::vector<std::string> pos;
  const std::string usage =
      "usage: pathwarden-fs [--policy F]... [--log FILE] [-f] [-o OPTS] BACKING_DIR MOUNTPOINT";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> Result<std::string, std::string> {
      if (i + 1 >= argc) return Unexpected(fmt::format("{} needs a value\n{}", a, usage));
      return std::string(argv[++i]);
    };
    if (a == "--policy") {
      auto v = value();
      if (!v) return Unexpected(v.error());
      o.policies.push_back(*v);
    } else if (a == "--log") {
      auto v = value();
      if (!v) return Unexpected(v.error());
      o.log = *v;
    } else if (a == "-f") {
      o.foreground = true;
    } else if (a == "-o") {
      auto v = value();
      if (!v) return Unexpected(v.error());
      if (!o.fuse_options.empty()) o.fuse_options += ',';
      o.fuse_options += *v;
    } else if (a == "-h" || a == "--help") {
      return Unexpected(usage);
    } else if (a.starts_with("-")) {
      return Unexpected(fmt::format("unknown option {}\n{}", a, usage));
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) return Unexpected(usage);
  o.backing = Canonical(pos[0]);
  o.mountpoint = Canonical(pos[1]);
  if (o.backing.empty()) return Unexpected(fmt::format("{}: {}", pos[0], std::strerror(errno)));
  if (o.mountpoint.empty()) return Unexpected(fmt::format("{}: {}", pos[1], std::strerror(errno)));
  if (o.mountpoint == o.backing || o.mountpoint.starts_with(o.backing + "/") ||
      o.backing.starts_with(o.mountpoint + "/"))
    return Unexpected("the mount point and the backing directory must not contain each other");
  size_t start = 0;
  const std::string& opts = o.fuse_options;
  while (start <= opts.size()) {
    size_t end = opts.find(',', start);
    if (end == std::string::npos) end = opts.size();
    if (opts.substr(start, end - start) == "default_permissions") o.default_permissions = true;
    start = end + 1;
  }
  return o;
}

int Serve(const Options& o) {
  Server server(o);
  if (auto r = server.Start(); !r) {
    std::fprintf(stderr, "pathwarden-fs: %s\n", r.error().c_str());
    return 1;
  }
  // dev and suid as a local filesystem mounted by root has them (libfuse
  // defaults to nodev,nosuid); -o nodev,nosuid takes them away.
  std::string opts = "allow_other,dev,suid,fsname=pathwarden-fs,subtype=pathwarden";
  if (!o.fuse_options.empty()) opts += "," + o.fuse_options;
  std::vector<std::string> argv_s = {"pathwarden-fs", "-o", opts};
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse_session* se = fuse_session_new(&args, &kOps, sizeof(kOps), &server);
  fuse_opt_free_args(&args);  // the session keeps what it parsed
  if (se == nullptr) return 1;
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, o.mountpoint.c_str()) == 0) {
      if (fuse_daemonize(o.foreground ? 1 : 0) == 0) rc = fuse_session_loop(se) == 0 ? 0 : 1;
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}

}  // namespace pathwarden::fileserver
