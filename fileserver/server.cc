// pathwarden-fs: the FUSE low-level operations, each decided by the model
// for the caller, then performed on the backing directory as root with
// the owner, group, mode and ACLs Linux gives the caller's objects. This
// file: starting, callers and their processes, deciding, the owner and
// mode of new objects, and the FUSE glue (the state is server_impl.h;
// the operations attrs.cc, names.cc and files.cc).
// Linux: fs/fuse/dir.c fuse_permission(), fuse_setattr(); fs/namei.c
// may_lookup(); fs/inode.c inode_init_owner(), mode_strip_sgid();
// fs/attr.c setattr_should_drop_sgid(); fs/inode.c should_remove_suid().

#include "fileserver/server.h"

#include <fmt/format.h>

#include "fileserver/server_impl.h"
#include "src/perm/setid.h"

namespace pathwarden::fileserver {

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
  // The kernel refuses writing a running program among the served files
  // itself (ETXTBSY on its FUSE inode, before the server is asked), and
  // its security modules check the FUSE inode before the server is asked
  // too: the server's answer is Unix's and Landlock's alone.
  HostOptions host;
  host.running_programs = false;
  host.lsm.read = false;
  auto m = Model::FromHost(host);
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
    policy::HostLayer l = policy::BuildLayerOn(*p, *model_, template_);
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

namespace {

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

}  // namespace

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

// (Never a directory's mode: mkdir makes its own, and the kernel adds a
// setgid parent's S_ISGID to it.)
uint32_t Server::CreateMode(const Cred& c, uint32_t mode, const struct stat& parent_st) {
  return perm::InitOwner(c, mode, parent_st.st_mode, {parent_st.st_uid, parent_st.st_gid}).mode;
}

int Server::NewObject(const Caller& c, const std::string& rel, const struct stat& parent_st,
                      bool symlink) {
  struct stat st;
  if (int err = Fstatat(rel, &st)) return err;
  const perm::NewOwner owner =
      perm::InitOwner(c.cred, st.st_mode, parent_st.st_mode, {parent_st.st_uid, parent_st.st_gid});
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
  const uint32_t m = perm::KillSuidMode(c, st.st_mode, {st.st_uid, st.st_gid}) & 07777;
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

namespace {

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
      "usage: pathwarden-fs [--policy F]... [--log FILE] [--no-allow-other] [-f] [-o OPTS] "
      "BACKING_DIR MOUNTPOINT";
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
    } else if (a == "--no-allow-other") {
      o.allow_other = false;
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
  // Without allow_other the kernel admits only the mounter's processes
  // (its real uid and gid: fuse_allow_current_process()).
  std::string opts = std::string(o.allow_other ? "allow_other," : "") +
                     "dev,suid,fsname=pathwarden-fs,subtype=pathwarden";
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
