// The engine: building a scenario's world, processes, files, dispatch.

#include "src/engine/engine.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/base/check.h"
#include "src/landlock/landlock.h"
#include "src/landlock/memo.h"
#include "src/ops/common.h"
#include "src/ops/ops.h"

namespace pathwarden {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

namespace {

// What FindProcess() compares: a name's internal::NameKey().
uint64_t ProcessKey(std::string_view name) {
  return internal::NameKey(internal::HeadOf(name), name.size());
}

const StepSpec& EmptyStep() {
  static const StepSpec kEmpty;
  return kEmpty;
}

uint32_t MntFlags(uint32_t node_flags, bool with_ro) {
  uint32_t f = 0;
  if (with_ro && (node_flags & kMountRdonly)) f |= vfs::kMntReadonly;
  if (node_flags & kMountNoexec) f |= vfs::kMntNoexec;
  if (node_flags & kMountNosuid) f |= vfs::kMntNosuid;
  if (node_flags & kMountNodev) f |= vfs::kMntNodev;
  if (node_flags & kMountNosymfollow) f |= vfs::kMntNosymfollow;
  return f;
}

}  // namespace

walk::Start OpCtx::StartForDirfd() const {
  walk::Start s;
  s.has_dirfd = true;
  const OpenFile* f = Fd(st.dirfd);
  if (f == nullptr) {
    s.bad_fd = true;
  } else {
    s.pos = f->path;
  }
  return s;
}

OpenFile* OpCtx::Fd(std::string_view name) const {
  auto it = p.fds.find(name);
  return it == p.fds.end() ? nullptr : it->second.get();
}

Engine::Engine(const EngineOptions& options) : options_(options) {
  landlock_ = std::make_unique<landlock::Landlock>(world_, options_);
}

Engine::~Engine() {
  // Files and processes first: releasing them touches the world, and
  // their domains release Landlock objects.
  for (auto& p : procs_) p->fds.clear();
  procs_.clear();
  proc_keys_.clear();
}

int Engine::FindProcess(std::string_view name) const {
  // Names are short: for most, equal keys are equal names, and the keys
  // lie side by side. A longer name is compared out of line, so that this
  // stays a leaf.
  if (name.size() > 7) return FindProcessLong(name);
  const uint64_t key = ProcessKey(name);
  const uint64_t* keys = proc_keys_.data();
  for (size_t i = 0, n = proc_keys_.size(); i < n; ++i)
    if (keys[i] == key) return static_cast<int>(i);
  return -1;
}

int Engine::FindProcessLong(std::string_view name) const {
  const uint64_t key = ProcessKey(name);
  for (size_t i = 0; i < proc_keys_.size(); ++i)
    if (proc_keys_[i] == key && procs_[i]->name == name) return static_cast<int>(i);
  return -1;
}

walk::WalkEnv Engine::WalkEnvFor(const Process& p, Explainer* ex) {
  walk::WalkEnv env;
  env.w = &world_;
  env.cred = &p.cred;
  env.root = p.root;
  env.cwd = p.cwd;
  env.fast_search = options_.fast_search;
  env.plain_components = options_.plain_components;
  env.protected_symlinks = sysctl_[0];
  env.stats = &stats_;
  env.ex = ex;
  return env;
}

std::shared_ptr<OpenFile> Engine::NewFile(const Process& p, PathPos path, uint32_t f_mode,
                                          uint32_t f_flags, bool attach) {
  auto* f = new OpenFile;
  f->path = path;
  f->inode = world_.inode_of(path.dentry);
  f->f_mode = f_mode;
  f->f_flags = f_flags;
  f->opener = p.index;
  f->cred_epoch = p.cred_epoch;
  if (!attach) return std::shared_ptr<OpenFile>(f);
  vfs::World::WriteGuard g(world_);
  if (!world_.AddOpenCounts(f->inode, (f_mode & kFmodeRead) ? 1 : 0,
                            (f_mode & kFmodeWrite) ? 1 : 0)) {
    delete f;
    return nullptr;
  }
  world_.GetPath(path);
  return std::shared_ptr<OpenFile>(f, [this](OpenFile* of) {
    vfs::World::WriteGuard guard(world_);
    world_.AddOpenCounts(of->inode, (of->f_mode & kFmodeRead) ? -1 : 0,
                         (of->f_mode & kFmodeWrite) ? -1 : 0);
    world_.PutPath(of->path);
    delete of;
  });
}

void Engine::InstallFd(Process& p, const std::string& name, std::shared_ptr<OpenFile> f) {
  p.fds[name] = std::move(f);
}

void Engine::CloseFd(Process& p, const std::string& name) { p.fds.erase(name); }

void Engine::SetCwd(Process& p, PathPos pos) {
  vfs::World::WriteGuard g(world_);
  world_.GetPath(pos);
  if (p.cwd.dentry != vfs::kNone) world_.PutPath(p.cwd);
  p.cwd = pos;
}

void Engine::SetRoot(Process& p, PathPos pos) {
  vfs::World::WriteGuard g(world_);
  world_.GetPath(pos);
  if (p.root.dentry != vfs::kNone) world_.PutPath(p.root);
  p.root = pos;
}

Result<void, std::string> Engine::Build(const Scenario& s) {
  vfs::World::WriteGuard g(world_);
  sysctl_ = s.sysctl;
  abi_ = s.abi;
  // The implicit root process: uid 0, every capability, cwd and root "/".
  auto root = std::make_unique<Process>();
  root->name = "root";
  root->index = 0;
  root->cred = Cred::ForUser(0, 0);
  proc_keys_.push_back(ProcessKey(root->name));
  procs_.push_back(std::move(root));
  SetRoot(*procs_[0], world_.root());
  SetCwd(*procs_[0], world_.root());
  procs_[0]->listen_domain = nullptr;

  for (const NodeSpec& n : s.nodes)
    if (auto r = BuildNode(s, n); !r) return r;

  // Attributes, then mount flags, once the whole tree is built.
  Cred builder = Cred::ForUser(0, 0);
  builder.umask = 0;
  OpCtx ctx{*this, world_, *procs_[0], EmptyStep(), nullptr, WalkEnvFor(*procs_[0], nullptr),
            true, &builder};
  ctx.env.cred = &builder;
  for (const NodeSpec& n : s.nodes) {
    if (!n.attrs) continue;
    PathPos at;
    if (walk::FilenameLookup(ctx.env, walk::Start{}, n.path, 0, &at) == 0) {
      uint32_t set = 0;
      if (n.attrs & kAttrImmutable) set |= vfs::kInodeImmutable;
      if (n.attrs & kAttrAppend) set |= vfs::kInodeAppend;
      world_.SetFlags(world_.inode_of(at.dentry), set, 0);
    }
  }
  for (const NodeSpec& n : s.nodes) {
    if ((n.type != NodeType::kTmpfs && n.type != NodeType::kBind) || !n.mount_flags) continue;
    PathPos at;
    if (walk::FilenameLookup(ctx.env, walk::Start{}, n.path, walk::kLookupFollow, &at) != 0)
      continue;
    if (n.type == NodeType::kTmpfs) {
      if (n.mount_flags & kMountRdonly) {
        // MS_REMOUNT|MS_RDONLY: the superblock and the mount.
        const vfs::SbId sb = world_.mount(at.mnt).sb;
        world_.SetSbFlags(sb, world_.sb(sb).flags | vfs::kSbReadonly);
        world_.SetMountFlags(at.mnt, MntFlags(n.mount_flags, true));
      }
    } else {
      // MS_BIND|MS_REMOUNT sets the mount's flags to exactly these.
      world_.SetMountFlags(at.mnt, MntFlags(n.mount_flags, true));
    }
  }
  for (const ProcessSpec& ps : s.processes)
    if (auto r = StartProcess(s, ps); !r) return r;
  return {};
}

Result<void, std::string> Engine::BuildNode(const Scenario& s, const NodeSpec& n) {
  Cred builder = Cred::ForUser(0, 0);
  builder.umask = 0;
  Process& root = *procs_[0];
  OpCtx ctx{*this, world_, root, EmptyStep(), nullptr, WalkEnvFor(root, nullptr), true, &builder};
  ctx.env.cred = &builder;
  auto fail = [&](std::string msg) {
    return Unexpected(fmt::format("{}: {}", s.Where(n.loc), msg));
  };
  // Sets owner, mode and ACLs as chown, chmod and setfacl would, in that
  // order.
  auto set_attrs = [&](InodeId ino) {
    const uint32_t type = world_.inode(ino).mode & S_IFMT;
    world_.SetOwner(ino, n.uid, n.gid);
    if (type == S_IFLNK) return;
    const uint32_t mode = n.EffectiveMode();
    ops::SetMode(ctx, ino, type | mode);
    if (n.acl) {
      PosixAcl a = PosixAcl::FromMode(mode);
      a.Modify(*n.acl);
      uint32_t m = type | mode;
      const bool equiv = a.EquivMode(&m);
      if (a.IsMinimal() || equiv) {
        ops::SetMode(ctx, ino, m);
      } else {
        world_.SetModeAndAcl(ino, m, world_.InternAcl(a));
      }
    }
    if (n.default_acl) {
      PosixAcl d = PosixAcl::FromMode(mode);
      d.Modify(*n.default_acl);
      world_.SetDefaultAcl(ino, world_.InternAcl(d));
    }
  };
  auto mkdir_plain = [&](std::string_view path) -> Result<PathPos, std::string> {
    ops::Created c;
    if (int err = ops::FilenameCreate(ctx, path, walk::Start{}, true, &c))
      return Unexpected(fmt::format("cannot create \"{}\": {}", path, ErrnoName(err)));
    DentryId d = ops::CreateObject(ctx, c.parent, c.name, S_IFDIR | 0755, 0);
    InodeId ino = world_.inode_of(d);
    world_.SetOwner(ino, 0, 0);
    ops::SetMode(ctx, ino, S_IFDIR | 0755);
    return PathPos{c.parent.mnt, d};
  };

  if (n.path == "/") {
    set_attrs(world_.inode_of(world_.root().dentry));
    return {};
  }
  // Missing parents, as mkdir -p would make them.
  for (size_t i = 1; i < n.path.size(); ++i) {
    if (n.path[i] != '/') continue;
    std::string_view prefix(n.path.data(), i);
    // Each prefix is looked at without following it: a symlink among the
    // parents is an error, as is any other non-directory.
    PathPos at;
    int err = walk::FilenameLookup(ctx.env, walk::Start{}, prefix, 0, &at);
    if (err == ENOENT) {
      auto made = mkdir_plain(prefix);
      if (!made) return fail(made.error());
    } else if (err != 0) {
      return fail(fmt::format("parent \"{}\" cannot be reached: {}", prefix, ErrnoName(err)));
    } else if (S_ISLNK(world_.inode_at(at.dentry).mode)) {
      return fail(fmt::format("parent \"{}\" is a symlink", prefix));
    } else if (!S_ISDIR(world_.inode_at(at.dentry).mode)) {
      return fail(fmt::format("parent \"{}\" is not a directory", prefix));
    }
  }
  PathPos existing;
  const int lerr = walk::FilenameLookup(ctx.env, walk::Start{}, n.path, 0, &existing);
  if (lerr != 0 && lerr != ENOENT)
    return fail(fmt::format("\"{}\" cannot be reached: {}", n.path, ErrnoName(lerr)));
  const bool exists = lerr == 0;
  const bool exists_dir = exists && S_ISDIR(world_.inode_at(existing.dentry).mode);

  switch (n.type) {
    case NodeType::kDir:
      if (exists) {
        if (!exists_dir) return fail(fmt::format("\"{}\" already exists and is not a directory", n.path));
        set_attrs(world_.inode_of(existing.dentry));
        return {};
      }
      break;
    case NodeType::kTmpfs:
    case NodeType::kBind:
      if (exists && n.type == NodeType::kTmpfs && !exists_dir)
        return fail(fmt::format("\"{}\" already exists and is not a directory", n.path));
      break;
    default:
      if (exists) return fail(fmt::format("\"{}\" already exists", n.path));
      break;
  }

  if (n.type == NodeType::kTmpfs || n.type == NodeType::kBind) {
    PathPos src;
    bool src_dir = true;
    if (n.type == NodeType::kBind) {
      if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, n.source, walk::kLookupFollow, &src))
        return fail(fmt::format("bind source \"{}\" cannot be reached: {}", n.source, ErrnoName(err)));
      src_dir = S_ISDIR(world_.inode_at(src.dentry).mode);
    }
    if (!exists) {
      if (src_dir) {
        auto made = mkdir_plain(n.path);
        if (!made) return fail(made.error());
      } else {
        ops::Created c;
        if (int err = ops::FilenameCreate(ctx, n.path, walk::Start{}, false, &c))
          return fail(fmt::format("cannot create \"{}\": {}", n.path, ErrnoName(err)));
        DentryId d = ops::CreateObject(ctx, c.parent, c.name, S_IFREG | 0644, 0);
        world_.SetOwner(world_.inode_of(d), 0, 0);
        ops::SetMode(ctx, world_.inode_of(d), S_IFREG | 0644);
      }
    }
    PathPos mp;
    if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, n.path, walk::kLookupFollow, &mp))
      return fail(fmt::format("mount point \"{}\" cannot be reached: {}", n.path, ErrnoName(err)));
    // As mount(2) does: on top of whatever is mounted there already.
    walk::TraverseMounts(world_, &mp);
    if (n.type == NodeType::kTmpfs) {
      const vfs::SbId sb = world_.NewSuperblock(n.EffectiveMode(), n.uid, n.gid);
      world_.Attach(mp, sb, world_.sb(sb).root, MntFlags(n.mount_flags, false));
      set_attrs(world_.inode_of(world_.sb(sb).root));
    } else {
      if (S_ISDIR(world_.inode_at(mp.dentry).mode) != src_dir)
        return fail(fmt::format("bind of \"{}\" on \"{}\": one is a directory, the other not",
                                n.source, n.path));
      const vfs::Mount& sm = world_.mount(src.mnt);
      world_.Attach(mp, sm.sb, src.dentry, sm.flags);
    }
    return {};
  }

  ops::Created c;
  if (int err = ops::FilenameCreate(ctx, n.path, walk::Start{}, n.type == NodeType::kDir, &c))
    return fail(fmt::format("cannot create \"{}\": {}", n.path, ErrnoName(err)));
  const uint32_t type = FileTypeBits(n.type);
  uint32_t rdev = 0;
  if (n.type == NodeType::kChar || n.type == NodeType::kBlock)
    rdev = static_cast<uint32_t>(makedev(n.rdev_major, n.rdev_minor));
  const std::string& data = n.type == NodeType::kSymlink ? n.target : n.content;
  const uint32_t create_mode = type == S_IFLNK ? (S_IFLNK | 0777) : (type | n.EffectiveMode());
  DentryId d = ops::CreateObject(ctx, c.parent, c.name, create_mode, rdev, data);
  set_attrs(world_.inode_of(d));
  return {};
}

Result<void, std::string> Engine::StartProcess(const Scenario& s, const ProcessSpec& ps) {
  auto p = std::make_unique<Process>();
  p->name = ps.name;
  p->index = static_cast<int>(procs_.size());
  const Process* parent = ps.parent.empty() ? procs_[0].get()
                                            : procs_[FindProcess(ps.parent)].get();
  p->parent = ps.parent.empty() ? -1 : parent->index;
  // Until the process takes its own credentials it acts as its launcher:
  // root, or the parent it is forked from.
  p->cred = parent->cred;
  p->domain = parent->domain;
  Process& proc = *p;
  proc_keys_.push_back(ProcessKey(p->name));
  procs_.push_back(std::move(p));
  SetRoot(proc, parent->root);
  SetCwd(proc, parent->cwd);
  auto fail = [&](const SourceLoc& loc, std::string msg) {
    return Unexpected(fmt::format("{}: {}", s.Where(loc), msg));
  };
  Explainer ex;
  if (ps.cwd) {
    StepSpec chdir;
    chdir.op = Op::kChdir;
    chdir.path = *ps.cwd;
    OpCtx ctx{*this, world_, proc, chdir, &ex, WalkEnvFor(proc, &ex), true};
    if (int err = ops::DoChdir(ctx))
      return fail(ps.loc, fmt::format("cwd \"{}\" cannot be entered: {} ({})", *ps.cwd,
                                      ErrnoName(err), ex.Line()));
  }
  // Resolve every starting rule as the launcher, from the new cwd.
  std::vector<std::vector<PathPos>> targets;
  for (const LayerSpec& l : ps.layers) {
    targets.emplace_back();
    for (const RuleSpec& r : l.rules) {
      PathPos at;
      if (!r.is_port) {
        walk::WalkEnv env = WalkEnvFor(proc, &ex);
        if (int err = walk::FilenameLookup(env, walk::Start{}, r.path,
                                           r.nofollow ? 0 : walk::kLookupFollow, &at))
          return fail(r.loc, fmt::format("rule path \"{}\" does not resolve: {} ({})", r.path,
                                         ErrnoName(err), ex.Line()));
      }
      targets.back().push_back(at);
    }
  }
  if (ps.parent.empty()) {
    proc.cred = Cred::ForUser(ps.uid, ps.gid);
    proc.cred.SetGroups(ps.groups);
    proc.cred.cap_effective = proc.cred.cap_permitted = ps.EffectiveCaps();
    proc.cred.umask = 022;
  }
  if (ps.umask) proc.cred.umask = *ps.umask;
  for (size_t li = 0; li < ps.layers.size(); ++li) {
    const LayerSpec& l = ps.layers[li];
    landlock::Ruleset rs;
    std::string why;
    if (int err = landlock_->CreateRuleset(abi_, l, &rs, &why))
      return fail(l.loc, fmt::format("the kernel refuses this layer: {} ({})", ErrnoName(err), why));
    for (size_t ri = 0; ri < l.rules.size(); ++ri) {
      const RuleSpec& r = l.rules[ri];
      const int err = r.is_port ? landlock_->AddPortRule(rs, r, &why)
                                : landlock_->AddPathRule(rs, r, targets[li][ri], &why);
      if (err)
        return fail(r.loc, fmt::format("the kernel refuses this rule: {} ({})", ErrnoName(err), why));
    }
    if (int err = landlock_->Restrict(proc, rs, &why))
      return fail(l.loc, fmt::format("the kernel refuses this layer: {} ({})", ErrnoName(err), why));
  }
  proc.listen_domain = proc.domain;
  return {};
}

int Engine::Step(const StepSpec& st, Explainer* ex) {
  const int idx = FindProcess(st.as);
  if (idx < 0) return ESRCH;
  Process& p = *procs_[idx];
  vfs::World::WriteGuard g(world_);
  OpCtx ctx{*this, world_, p, st, ex, WalkEnvFor(p, ex), true};
  return Dispatch(ctx);
}

int Engine::Evaluate(const StepSpec& st, Explainer* ex, EngineStats* stats) const {
  const int idx = FindProcess(st.as);
  if (idx < 0) return ESRCH;
  // A dry run writes nothing shared: casting away const is for the
  // operations' common signature.
  Engine& self = const_cast<Engine&>(*this);
  Process& p = *self.procs_[idx];
  auto run = [&] {
    EngineStats local;
    OpCtx ctx{self, self.world_, p, st, ex, self.WalkEnvFor(p, ex), false};
    ctx.env.stats = &local;
    const int err = self.Dispatch(ctx);
    return std::pair{err, local};
  };
  auto count = [&](const EngineStats& local) {
    if (!stats) return;
    stats->components += local.components;
    stats->fast_components += local.fast_components;
  };
  // Optimistic reads, validated by the sequence counter; a reader that
  // keeps racing a busy writer falls back to holding writers off.
  constexpr int kOptimisticTries = 3;
  for (int attempt = 0; attempt < kOptimisticTries; ++attempt) {
    // What a torn read makes of a "cannot happen" check counts only
    // once the sequence check says the reads were consistent.
    internal::SpeculativeReads speculative;
    const uint64_t start = world_.seq().ReadBegin();
    const auto [err, local] = run();
    if (!world_.seq().ReadRetry(start)) {
      speculative.Confirm();
      count(local);
      return err;
    }
    // Raced a write: what this thread memoized may mix two states.
    landlock::MemoClearThread();
    if (ex) ex->Clear();
  }
  vfs::World::ReadLock lock(world_);
  const auto [err, local] = run();
  count(local);
  return err;
}

int Engine::Dispatch(OpCtx& ctx) {
  const StepSpec& st = ctx.st;
  switch (st.op) {
    case Op::kOpen: return ops::DoOpen(ctx);
    case Op::kClose: return ops::DoClose(ctx);
    case Op::kStat: return ops::DoStat(ctx, false);
    case Op::kLstat: return ops::DoStat(ctx, true);
    case Op::kAccess: return ops::DoAccess(ctx);
    case Op::kMkdir: return ops::DoMkdir(ctx);
    case Op::kMknod: return ops::DoMknod(ctx);
    case Op::kSymlink: return ops::DoSymlink(ctx);
    case Op::kLink: return ops::DoLink(ctx);
    case Op::kUnlink: return ops::DoUnlink(ctx);
    case Op::kRmdir: return ops::DoRmdir(ctx);
    case Op::kRename: return ops::DoRename(ctx);
    case Op::kTruncate: return ops::DoTruncate(ctx);
    case Op::kFtruncate: return ops::DoFtruncate(ctx);
    case Op::kChmod: return ops::DoChmod(ctx);
    case Op::kChown: return ops::DoChown(ctx, false);
    case Op::kLchown: return ops::DoChown(ctx, true);
    case Op::kReadlink: return ops::DoReadlink(ctx);
    case Op::kChdir: return ops::DoChdir(ctx);
    case Op::kExecCheck: return ops::DoExecCheck(ctx);
    case Op::kIoctl: return ops::DoIoctl(ctx);
    case Op::kBindTcp: return ops::DoBindTcp(ctx);
    case Op::kConnectTcp: return ops::DoConnectTcp(ctx);
    case Op::kSignal: return ops::DoSignal(ctx);
    case Op::kConnectAbstract: return ops::DoConnectAbstract(ctx);
    case Op::kSendFd: return ops::DoSendFd(ctx);
    case Op::kMountTmpfs: return ops::DoMountTmpfs(ctx);
    case Op::kBindMount: return ops::DoBindMount(ctx);
    case Op::kUmount: return ops::DoUmount(ctx);
    case Op::kRestrict: return ops::DoRestrict(ctx);
    case Op::kUtimensat: return ops::DoUtimensat(ctx);
    case Op::kChroot: return ops::DoChroot(ctx);
    case Op::kFchdir: return ops::DoFchdir(ctx);
  }
  // An operation the engine does not know: fail closed.
  return internal::FailClosed("Dispatch: unknown operation");
}

std::vector<TreeEntry> Engine::Snapshot() const {
  const vfs::World& w = world_;
  // Children of every directory dentry, found in one pass.
  std::unordered_map<DentryId, std::vector<DentryId>> children;
  for (DentryId d = 1; d < w.dentry_end(); ++d) {
    const vfs::Dentry& de = w.dentry(d);
    if ((de.flags & vfs::kDentryHashed) && de.parent != d) children[de.parent].push_back(d);
  }
  std::vector<TreeEntry> out;
  struct Item {
    PathPos pos;
    std::string path;
  };
  std::vector<Item> stack{{w.root(), "/"}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const InodeId ino = w.inode_of(it.pos.dentry);
    const vfs::Inode& i = w.inode(ino);
    TreeEntry e;
    e.path = it.path;
    const uint32_t type = i.mode & S_IFMT;
    e.type = NodeTypeName(NodeTypeOf(type));
    e.mode = i.mode & 07777;
    e.uid = i.uid;
    e.gid = i.gid;
    e.nlink = i.nlink;
    if (type == S_IFREG) e.size = w.str(i.data).size();
    if (type == S_IFLNK) e.target = std::string(w.str(i.data));
    if (type == S_IFCHR || type == S_IFBLK) {
      e.rdev_major = major(i.rdev);
      e.rdev_minor = minor(i.rdev);
    }
    if (const PosixAcl* a = w.acl(i.acl); a && i.acl != vfs::kNone) e.acl = a->ToText();
    if (const PosixAcl* a = w.acl(i.default_acl); a && i.default_acl != vfs::kNone)
      e.default_acl = a->ToText();
    out.push_back(std::move(e));
    if (type != S_IFDIR) continue;
    auto c = children.find(it.pos.dentry);
    if (c == children.end()) continue;
    for (DentryId d : c->second) {
      PathPos child{it.pos.mnt, d};
      walk::TraverseMounts(w, &child);
      std::string p = it.path == "/" ? "/" : it.path + "/";
      p += w.str(w.dentry(d).name);
      stack.push_back({child, std::move(p)});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace pathwarden
