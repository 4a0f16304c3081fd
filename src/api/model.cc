// The public Model: the builder, processes, and asking, over the engine.

#include "pathwarden/model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <variant>

#include <fmt/format.h>

#include "pathwarden/tree.h"
#include "src/api/model_impl.h"
#include "src/base/check.h"
#include "src/landlock/domain.h"
#include "src/landlock/landlock.h"
#include "src/ops/common.h"
#include "src/security/hooks.h"
#include "src/vfs/backend.h"

namespace pathwarden {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

namespace {

uint32_t MntFlags(uint32_t flags, bool with_ro) {
  uint32_t f = 0;
  if (with_ro && (flags & kMountRdonly)) f |= vfs::kMntReadonly;
  if (flags & kMountNoexec) f |= vfs::kMntNoexec;
  if (flags & kMountNosuid) f |= vfs::kMntNosuid;
  if (flags & kMountNodev) f |= vfs::kMntNodev;
  if (flags & kMountNosymfollow) f |= vfs::kMntNosymfollow;
  return f;
}

uint32_t TypeBits(FileType t) {
  switch (t) {
    case FileType::kRegular:
      return S_IFREG;
    case FileType::kDirectory:
      return S_IFDIR;
    case FileType::kSymlink:
      return S_IFLNK;
    case FileType::kFifo:
      return S_IFIFO;
    case FileType::kSocket:
      return S_IFSOCK;
    case FileType::kChar:
      return S_IFCHR;
    case FileType::kBlock:
      return S_IFBLK;
  }
  return S_IFREG;
}

// The builder's own credentials: root, every capability, umask 0.
const Cred& BuilderCred() {
  static const Cred kBuilder = [] {
    Cred c = Cred::ForUser(0, 0);
    c.umask = 0;
    return c;
  }();
  return kBuilder;
}

const OpArgs& NoArgs() {
  static const OpArgs kNone;
  return kNone;
}

Node NodeAt(const vfs::World& w, PathPos p) { return Node{p.mnt, p.dentry, w.inode_of(p.dentry)}; }

}  // namespace

Model NewModel(const EngineOptions& options, int abi) {
  Model m(std::make_unique<Model::Impl>(options));
  m.Start(abi);
  if (options.prefix_memo) SetPrefixMemo(m, true);
  return m;
}

Model::Model(int abi) : impl_(std::make_unique<Impl>(EngineOptions{})) { Start(abi); }

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

void Model::Start(int abi) {
  impl_->engine.tasks().set_abi(abi);
  impl_->engine.tasks().set_kernel_rules(RunningKernelRules());
  vfs::World::WriteGuard g(impl_->engine.world());
  Task& root = impl_->engine.tasks().NewTask("root", nullptr);
  root.listen_domain = nullptr;
}

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Node Model::Root() const {
  const vfs::World& w = impl_->engine.world();
  return NodeAt(w, w.root());
}

Result<Node, int> Model::Lookup(std::string_view path, bool follow) const {
  Engine& e = impl_->engine;
  walk::WalkEnv env = e.WalkEnvFor(e.tasks().task(0), nullptr);
  env.cred = &BuilderCred();
  PathPos at;
  int err;
  vfs::Pending last;
  // A host model fills what the walk stops for, then walks again.
  while ((err = walk::FilenameLookup(env, walk::Start{}, path,
                                     follow ? walk::kLookupFollow : 0, &at)) == vfs::kErrNeedFill) {
    if (e.Fill(&last)) return Unexpected(-1);
  }
  if (err == vfs::kErrUnknown) return Unexpected(-1);
  if (err) return Unexpected(err);
  return NodeAt(e.world(), at);
}

namespace {

// Whether `attrs` names only ids Linux accepts in an ACL (no kAclNoId,
// (uid_t)-1: EINVAL, as setfacl gets).
bool AclIdsValid(const NodeAttrs& attrs) {
  for (const auto* list : {&attrs.acl, &attrs.default_acl}) {
    if (!*list) continue;
    for (const AclEntry& e : **list)
      if ((e.tag == AclTag::kUser || e.tag == AclTag::kGroup) && e.id == kAclNoId) return false;
  }
  return true;
}

// Sets owner, mode and ACLs as chown, chmod and setfacl would, in that
// order.
void SetAttrsOf(OpCtx& ctx, InodeId ino, const NodeAttrs& attrs) {
  vfs::World& w = ctx.w;
  const uint32_t type = w.inode(ino).mode & S_IFMT;
  w.SetOwner(ino, attrs.uid, attrs.gid);
  if (type == S_IFLNK) return;
  const uint32_t mode = attrs.mode ? *attrs.mode : (type == S_IFDIR ? 0755u : 0644u);
  ops::SetMode(ctx, ino, type | mode);
  if (attrs.acl) {
    PosixAcl a = PosixAcl::FromMode(mode);
    a.Modify(*attrs.acl);
    uint32_t m = type | mode;
    const bool equiv = a.EquivMode(&m);
    if (a.IsMinimal() || equiv) {
      ops::SetMode(ctx, ino, m);
    } else {
      w.SetModeAndAcl(ino, m, w.InternAcl(a));
    }
  }
  if (attrs.default_acl) {
    PosixAcl d = PosixAcl::FromMode(mode);
    d.Modify(*attrs.default_acl);
    w.SetDefaultAcl(ino, w.InternAcl(d));
  }
}

}  // namespace

Result<Node, int> Model::Mkdir(Node dir, std::string_view name, const NodeAttrs& attrs) {
  NodeKind kind;
  kind.type = FileType::kDirectory;
  return Create(dir, name, kind, attrs);
}

Result<Node, int> Model::Create(Node dir, std::string_view name, const NodeKind& kind,
                                const NodeAttrs& attrs) {
  Engine& e = impl_->engine;
  vfs::World& w = e.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({dir.mount, dir.dentry}, dir.inode)) return Unexpected(ESTALE);
  if (!S_ISDIR(w.inode(dir.inode).mode)) return Unexpected(ENOTDIR);
  if (name.empty() || name == "." || name == ".." || name.find('/') != name.npos)
    return Unexpected(EINVAL);
  if (walk::NameTooLong(name.size())) return Unexpected(ENAMETOOLONG);
  if (!AclIdsValid(attrs)) return Unexpected(EINVAL);
  if (w.inode(dir.inode).flags & vfs::kInodeDead) return Unexpected(ENOENT);
  // A host directory is asked whether it has the name.
  if (w.Lookup(dir.dentry, name) == vfs::kNone && !w.KnownAbsent(dir.dentry, name)) {
    if (w.backend() == nullptr || !w.backend()->Lookup(w, {dir.mount, dir.dentry}, name))
      return Unexpected(-1);
    if (w.Lookup(dir.dentry, name) == vfs::kNone && !w.KnownAbsent(dir.dentry, name))
      return Unexpected(-1);
  }
  if (w.Lookup(dir.dentry, name) != vfs::kNone) return Unexpected(EEXIST);
  OpCtx ctx = e.Context(e.tasks().task(0), NoArgs(), nullptr, &BuilderCred());
  const uint32_t type = TypeBits(kind.type);
  uint32_t rdev = 0;
  if (type == S_IFCHR || type == S_IFBLK)
    rdev = static_cast<uint32_t>(makedev(kind.rdev_major, kind.rdev_minor));
  const uint32_t perm = attrs.mode ? *attrs.mode : (type == S_IFDIR ? 0755u : 0644u);
  const uint32_t create_mode = type == S_IFLNK ? (S_IFLNK | 0777) : (type | perm);
  const std::string_view data = type == S_IFLNK ? kind.target : kind.content;
  const DentryId d = ops::CreateObject(ctx, {dir.mount, dir.dentry}, name, create_mode, rdev, data);
  const InodeId ino = w.inode_of(d);
  SetAttrsOf(ctx, ino, attrs);
  return Node{dir.mount, d, ino};
}

Result<void, int> Model::SetAttrs(Node n, const NodeAttrs& attrs) {
  Engine& e = impl_->engine;
  vfs::World& w = e.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({n.mount, n.dentry}, n.inode)) return Unexpected(ESTALE);
  if (!AclIdsValid(attrs)) return Unexpected(EINVAL);
  OpCtx ctx = e.Context(e.tasks().task(0), NoArgs(), nullptr, &BuilderCred());
  SetAttrsOf(ctx, n.inode, attrs);
  return {};
}

Result<void, int> Model::SetInodeFlags(Node n, uint32_t attrs) {
  vfs::World& w = impl_->engine.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({n.mount, n.dentry}, n.inode)) return Unexpected(ESTALE);
  uint32_t set = 0;
  if (attrs & kAttrImmutable) set |= vfs::kInodeImmutable;
  if (attrs & kAttrAppend) set |= vfs::kInodeAppend;
  w.SetFlags(n.inode, set, (vfs::kInodeImmutable | vfs::kInodeAppend) & ~set);
  return {};
}

Result<Node, int> Model::MountTmpfs(Node at, const NodeAttrs& root_attrs, uint32_t flags) {
  Engine& e = impl_->engine;
  vfs::World& w = e.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({at.mount, at.dentry}, at.inode)) return Unexpected(ESTALE);
  PathPos mp{at.mount, at.dentry};
  // As mount(2) does: on top of whatever is mounted there already.
  walk::TraverseMounts(w, &mp);
  if (!S_ISDIR(w.inode_at(mp.dentry).mode)) return Unexpected(ENOTDIR);
  if (!AclIdsValid(root_attrs)) return Unexpected(EINVAL);
  if (w.nr_mounts() >= w.mount_max()) return Unexpected(ENOSPC);  // count_mounts()
  const uint32_t mode = root_attrs.mode ? *root_attrs.mode : 0755u;
  const vfs::SbId sb = w.NewSuperblock(mode, root_attrs.uid, root_attrs.gid);
  const vfs::MountId m = w.Attach(mp, sb, w.sb(sb).root, MntFlags(flags, false));
  OpCtx ctx = e.Context(e.tasks().task(0), NoArgs(), nullptr, &BuilderCred());
  const DentryId root = w.sb(sb).root;
  SetAttrsOf(ctx, w.inode_of(root), root_attrs);
  return Node{m, root, w.inode_of(root)};
}

Result<Node, int> Model::BindMount(Node source, Node at) {
  vfs::World& w = impl_->engine.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({at.mount, at.dentry}, at.inode) ||
      !w.IsCurrent({source.mount, source.dentry}, source.inode))
    return Unexpected(ESTALE);
  PathPos mp{at.mount, at.dentry};
  walk::TraverseMounts(w, &mp);
  if (S_ISDIR(w.inode_at(mp.dentry).mode) != S_ISDIR(w.inode(source.inode).mode))
    return Unexpected(ENOTDIR);
  if (w.nr_mounts() >= w.mount_max()) return Unexpected(ENOSPC);  // count_mounts()
  const vfs::Mount& sm = w.mount(source.mount);
  const vfs::MountId m = w.Attach(mp, sm.sb, source.dentry, sm.flags);
  return Node{m, source.dentry, source.inode};
}

Result<void, int> Model::Remount(Node mount_root, uint32_t flags, bool superblock) {
  vfs::World& w = impl_->engine.world();
  vfs::World::WriteGuard g(w);
  if (!w.IsCurrent({mount_root.mount, mount_root.dentry}, mount_root.inode))
    return Unexpected(ESTALE);
  if (w.mount(mount_root.mount).root != mount_root.dentry) return Unexpected(EINVAL);
  if (superblock && (flags & kMountRdonly)) {
    const vfs::SbId sb = w.mount(mount_root.mount).sb;
    w.SetSbFlags(sb, w.sb(sb).flags | vfs::kSbReadonly);
  }
  w.SetMountFlags(mount_root.mount, MntFlags(flags, true));
  return {};
}

Result<FileType, int> Model::TypeOf(Node n) const {
  const vfs::World& w = impl_->engine.world();
  if (!w.IsCurrent({n.mount, n.dentry}, n.inode)) return Unexpected(ESTALE);
  switch (w.inode(n.inode).mode & S_IFMT) {
    case S_IFDIR: return FileType::kDirectory;
    case S_IFLNK: return FileType::kSymlink;
    case S_IFIFO: return FileType::kFifo;
    case S_IFSOCK: return FileType::kSocket;
    case S_IFCHR: return FileType::kChar;
    case S_IFBLK: return FileType::kBlock;
    default: return FileType::kRegular;
  }
}

std::string Model::PathOf(Node n) const {
  return impl_->engine.world().PathOf({n.mount, n.dentry});
}

void Model::SetSysctls(const Sysctls& s) { impl_->engine.tasks().set_sysctl(s); }

Sysctls Model::sysctls() const { return impl_->engine.tasks().sysctl(); }

int Model::abi() const { return impl_->engine.tasks().abi(); }

void Model::SetKernelRules(const KernelRules& k) { impl_->engine.tasks().set_kernel_rules(k); }

KernelRules Model::kernel_rules() const { return impl_->engine.tasks().kernel_rules(); }

Process Model::Init() const { return Process{0}; }

bool Model::Has(Process p) const {
  return p.index >= 0 && p.index < impl_->engine.tasks().count();
}

namespace {

// The task behind a handle the caller promised is this model's.
const Task& TaskOf(const Engine& e, Process p) {
  if (p.index < 0 || p.index >= e.tasks().count()) internal::ResultMisuse();
  return e.tasks().task(p.index);
}

}  // namespace

Process Model::Spawn(std::string name, const Cred& cred, Process parent) {
  Process p = Fork(parent, std::move(name));
  (void)SetCred(p, cred);
  return p;
}

Process Model::Fork(Process parent, std::string name) {
  TaskTable& t = impl_->engine.tasks();
  const Task* from = parent.valid() && parent.index < t.count() ? &t.task(parent.index) : nullptr;
  if (!from) from = &t.task(0);
  vfs::World::WriteGuard g(impl_->engine.world());
  Task& task = t.NewTask(std::move(name), from);
  // A process listens from the moment it exists.
  task.listen_domain = task.domain;
  return Process{task.index};
}

Result<void, int> Model::SetCred(Process p, const Cred& cred) {
  if (!Has(p)) return Unexpected(ESRCH);
  Task& t = impl_->engine.tasks().task(p.index);
  t.cred = cred;
  if (t.cred.InInitialUserNs() && impl_->reader_userns) t.cred.userns = impl_->reader_userns;
  ++t.cred_epoch;
  if (!t.cred.InInitialUserNs()) impl_->special |= Impl::kUserNs;
  return {};
}

Result<void, int> Model::SetControllingTty(Process p, std::optional<bool> has) {
  if (!Has(p)) return Unexpected(ESRCH);
  impl_->engine.tasks().task(p.index).ctty =
      !has ? Task::Ctty::kUnknown : *has ? Task::Ctty::kSome : Task::Ctty::kNone;
  return {};
}

const Cred& Model::cred(Process p) const { return TaskOf(impl_->engine, p).cred; }

std::string_view Model::name(Process p) const { return TaskOf(impl_->engine, p).name; }

int Model::layers(Process p) const {
  const Task& t = TaskOf(impl_->engine, p);
  return t.domain ? static_cast<int>(t.domain->num_layers()) : 0;
}

Result<void, int> Model::Listen(Process p) {
  if (!Has(p)) return Unexpected(ESRCH);
  Task& t = impl_->engine.tasks().task(p.index);
  t.listen_domain = t.domain;
  return {};
}

namespace {
Decision Decide(Engine& e, int err, Explainer& ex, int new_fd);
}  // namespace

Result<Node, Decision> Model::Resolve(Process p, std::string_view path, bool follow) const {
  if (!Has(p)) return Unexpected(Decision(Verdict::kDenied, ESRCH));
  Engine& e = impl_->engine;
  Explainer ex;
  walk::WalkEnv env = e.WalkEnvFor(e.tasks().task(p.index), &ex);
  PathPos at;
  int err;
  vfs::Pending last;
  while ((err = walk::FilenameLookup(env, walk::Start{}, path,
                                     follow ? walk::kLookupFollow : 0, &at)) == vfs::kErrNeedFill) {
    ex.Clear();
    if ((err = e.Fill(&last))) break;
  }
  if (err || internal::failed_check.what != nullptr) return Unexpected(Decide(e, err, ex, -1));
  return NodeAt(e.world(), at);
}

Result<void, int> Model::NameFd(Process p, Fd fd, std::string name) {
  if (!Has(p)) return Unexpected(ESRCH);
  impl_->engine.tasks().task(p.index).fd_names[fd.num] = std::move(name);
  return {};
}

namespace {

// The directory a builder call puts a process in, or why not.
Result<PathPos, int> DirectoryAt(const vfs::World& w, Node dir) {
  const PathPos pos{dir.mount, dir.dentry};
  if (!w.IsCurrent(pos, dir.inode)) return Unexpected(ESTALE);
  if (!S_ISDIR(w.inode(dir.inode).mode)) return Unexpected(ENOTDIR);
  return pos;
}

// Sets process `p`'s cwd or root (`set`: TaskTable::SetCwd or SetRoot)
// to directory `dir`, as the one writer.
Result<void, int> SetDirectory(Engine& e, Process p, Node dir,
                               void (TaskTable::*set)(Task&, vfs::PathPos)) {
  return e.AsWriter([&]() -> Result<void, int> {
    auto pos = DirectoryAt(e.world(), dir);
    if (!pos) return Unexpected(pos.error());
    (e.tasks().*set)(e.tasks().task(p.index), *pos);
    return {};
  });
}

}  // namespace

Result<void, int> Model::SetCwd(Process p, Node dir) {
  if (!Has(p)) return Unexpected(ESRCH);
  return SetDirectory(impl_->engine, p, dir, &TaskTable::SetCwd);
}

Result<void, int> Model::SetRoot(Process p, Node dir) {
  if (!Has(p)) return Unexpected(ESRCH);
  return SetDirectory(impl_->engine, p, dir, &TaskTable::SetRoot);
}

Result<void, int> Model::CloseFd(Process p, Fd fd) {
  if (!Has(p)) return Unexpected(ESRCH);
  Engine& e = impl_->engine;
  const bool closed = e.AsWriter([&] { return e.tasks().CloseFd(e.tasks().task(p.index), fd.num); });
  if (!closed) return Unexpected(EBADF);
  return {};
}

Result<Fd, int> Model::Adopt(Process p, int num, Node n, uint64_t flags, Process opened_by) {
  if (!Has(p)) return Unexpected(ESRCH);
  if (opened_by.valid() && !Has(opened_by)) return Unexpected(ESRCH);
  if (num < 0) return Unexpected(EBADF);
  Engine& e = impl_->engine;
  return e.AsWriter([&]() -> Result<Fd, int> {
    vfs::World& w = e.world();
    const PathPos pos{n.mount, n.dentry};
    if (!w.IsCurrent(pos, n.inode)) return Unexpected(ESTALE);
    TaskTable& t = e.tasks();
    Task& task = t.task(p.index);
    uint32_t f_mode = kFmodePath;
    if (!(flags & O_PATH)) {
      switch (flags & O_ACCMODE) {
        case O_RDONLY: f_mode = kFmodeRead; break;
        case O_WRONLY: f_mode = kFmodeWrite; break;
        case O_RDWR: f_mode = kFmodeRead | kFmodeWrite; break;
        default: f_mode = 0; break;
      }
    }
    auto file = t.NewFile(task, pos, f_mode, static_cast<uint32_t>(flags), true);
    if (!file) return Unexpected(ENFILE);
    // An O_PATH file is not opened (do_o_path()): no hook, nothing frozen.
    if (!(flags & O_PATH)) {
      Task& opener = opened_by.valid() ? t.task(opened_by.index) : task;
      OpCtx ctx = e.Context(opener, NoArgs(), nullptr);
      if (security::FileOpen(ctx, *file) != 0) return Unexpected(EACCES);
    }
    t.CloseFd(task, num);
    task.fds[num] = std::move(file);
    return Fd{num};
  });
}

namespace {

// An unknown verdict always carries its reason, whatever the detail asked:
// "unknown" alone would leave the caller nothing to act on.
[[gnu::cold, gnu::noinline]] Decision DecideUnknown(Engine& e, Reason reason) {
  reason.unknown_why = e.ResolveUnknown();
  reason.stage = Stage::kNone;
  reason.text = "unknown: " + reason.unknown_why;
  return Decision(Verdict::kUnknown, -1, std::move(reason));
}

// A check failed closed in the evaluation `ex` explained: a denial with
// the site's errno and "internal error: <what>", whatever the code after
// the check made of it (never an allow, nor an unknown).
[[gnu::cold, gnu::noinline]] Decision DecideFailedClosed(Explainer& ex) {
  const internal::FailedCheck f = internal::failed_check;
  return Decision(Verdict::kDenied, f.denial, FailedClosedReason(ex.Take(), f.what));
}

Decision Decide(Engine& e, int err, Explainer& ex, int new_fd) {
  if (internal::failed_check.what != nullptr) [[unlikely]] return DecideFailedClosed(ex);
  if (err == vfs::kErrUnknown || err == vfs::kErrNeedFill) [[unlikely]]
    return DecideUnknown(e, ex.Take());
  return Decision(err == 0 ? Verdict::kAllowed : Verdict::kDenied, err, ex.Take(), Fd{new_fd});
}

Decision DecideQuiet(Engine& e, int err, int new_fd) {
  // Both internal codes, in one compare: they are the only results above
  // MAX_ERRNO.
  static_assert(vfs::kErrUnknown > vfs::kErrNeedFill && vfs::kErrNeedFill > 4095);
  if (err >= vfs::kErrNeedFill) [[unlikely]]
    return DecideUnknown(e, Reason{});
  return Decision(err == 0 ? Verdict::kAllowed : Verdict::kDenied, err, Fd{new_fd});
}

}  // namespace

namespace {

// The explained evaluation, out of line: its Explainer would otherwise
// weigh on the frame of every verdict-only call.
// kMemo: with the prefix memo.
template <bool kMemo = false>
[[gnu::noinline]] Decision EvaluateExplained(Engine& e, Process p, const Request& request,
                                             bool trace) {
  OpArgs args;
  ArgsOf(request, &args);
  Explainer ex;
  ex.set_trace(trace);
  const int err = kMemo ? e.EvaluateWithPrefixMemo(p.index, args, &ex) : e.Evaluate(p.index, args, &ex);
  return Decide(e, err, ex, -1);
}

}  // namespace

namespace {

// kRevalidate: what the request's paths walk through is checked against
// the host first.
[[gnu::noinline]] std::optional<Decision> RevalidateFor(Model::Impl& impl, Process p,
                                                        const Request& request, bool sysctls) {
  OpArgs args;
  ArgsOf(request, &args);
  auto r = RevalidatePaths(impl, p.index, args.dirfd, sysctls, {args.path, args.path2});
  if (r) return std::nullopt;
  Reason reason;
  reason.unknown_why = "revalidating against the host: " + r.error();
  reason.text = "unknown: " + reason.unknown_why;
  return Decision(Verdict::kUnknown, -1, std::move(reason));
}

bool Revalidates(const Model::Impl& impl) { return impl.special & Model::Impl::kRevalidates; }

// An evaluation that stopped for a fill goes on; an unknown answer is
// one.
[[gnu::noinline]] Decision DecideFilling(Engine& e, Process p, const OpArgs& args, int err) {
  if (err == vfs::kErrNeedFill) err = e.EvaluateFilling(p.index, args, nullptr, nullptr);
  return DecideQuiet(e, err, -1);
}

}  // namespace

namespace {

// kRevalidate: the paths checked against the host, the request evaluated,
// and when a check the protected_* sysctls decide was reached, the
// sysctls read again (and the request evaluated again if they changed).
[[gnu::noinline]] Decision EvaluateRevalidating(const Model& m, Model::Impl& impl, Process p,
                                                const Request& request, Model::Detail detail) {
  if (auto failed = RevalidateFor(impl, p, request, false)) return *failed;
  walk::tls_sysctl_decided = false;
  Decision d = m.EvaluateAsIs(p, request, detail);
  if (!walk::tls_sysctl_decided) return d;
  auto changed = RefreshSysctls(impl);
  if (!changed) {
    Reason reason;
    reason.unknown_why = "revalidating against the host: " + changed.error();
    reason.text = "unknown: " + reason.unknown_why;
    return Decision(Verdict::kUnknown, -1, std::move(reason));
  }
  return *changed ? m.EvaluateAsIs(p, request, detail) : d;
}

}  // namespace

namespace {

// Model::EvaluateAsIs(), and with kMemo the same with the prefix memo.
template <bool kMemo>
[[gnu::always_inline]] inline Decision EvaluateAsIsT(Engine& e, Process p, const Request& request,
                                                     Model::Detail detail) {
  if (detail != Model::Detail::kVerdictOnly)
    return EvaluateExplained<kMemo>(e, p, request, detail == Model::Detail::kTrace);
  OpArgs args;
  ArgsOf(request, &args);
  // The result is tested anyway: a fill waits behind that test.
  const int err =
      kMemo ? e.EvaluateOrStopWithPrefixMemo(p.index, args) : e.EvaluateOrStop(p.index, args);
  if (err >= vfs::kErrNeedFill) [[unlikely]] return DecideFilling(e, p, args, err);
  return Decision(err == 0 ? Verdict::kAllowed : Verdict::kDenied, err, Fd{-1});
}

// A model that revalidates, or uses the prefix memo.
Decision EvaluateSpecialPlain(const Model& m, Model::Impl& impl, Process p,
                              const Request& request, Model::Detail detail) {
  if (Revalidates(impl) && m.Has(p)) return EvaluateRevalidating(m, impl, p, request, detail);
  if (impl.special & Model::Impl::kPrefixMemo)
    return EvaluateAsIsT<true>(impl.engine, p, request, detail);
  return m.EvaluateAsIs(p, request, detail);
}

}  // namespace

namespace {

Decision UnknownInUserNs(std::string why) {
  Reason reason;
  reason.unknown_why = "user namespace: " + std::move(why);
  reason.text = "unknown: " + reason.unknown_why;
  return Decision(Verdict::kUnknown, -1, std::move(reason));
}

// The gid a chown-family request names (-1: kept), or none.
std::optional<int64_t> ChownGid(const Request& r) {
  if (const auto* c = std::get_if<Chown>(&r)) return c->gid;
  if (const auto* c = std::get_if<Lchown>(&r)) return c->gid;
  if (const auto* c = std::get_if<Fchown>(&r)) return c->gid;
  return std::nullopt;
}

// A process in a user namespace other than the initial one. The ops apply
// the namespace's rules (Cred::CapableWrtInode(), CapableInitial(),
// CapableOver(), chown's unmapped ids); what the model cannot know about
// it (UserNamespace::lenient: an overflow id that may stand for a mapped
// owner, a capability over a namespace the model does not hold) is asked
// both ways, and the answer stands only when both agree -- capabilities
// only grant, so what the kernel decides lies between. A chown to the
// overflow gid is unknown when the process's unmapped groups show as it
// too (the reader inside).
// Linux: kernel/capability.c capable_wrt_inode_uidgid(), ns_capable()
[[gnu::noinline]] Decision EvaluateInUserNs(const Model& m, Model::Impl& impl, Process p,
                                            const Request& request, Model::Detail detail) {
  const Cred& cred = m.cred(p);
  const UserNamespace& ns = *cred.userns;
  if (const auto gid = ChownGid(request)) {
    if (*gid != -1 && static_cast<uint32_t>(*gid) == ns.overflow_gid && ns.reader_inside &&
        cred.InGroup(ns.overflow_gid))
      return UnknownInUserNs(fmt::format(
          "gid {} is the overflow id, which the process's unmapped groups show as too: whether "
          "it is in that group is not known",
          *gid));
  }
  const Decision strict = EvaluateSpecialPlain(m, impl, p, request, detail);
  if (strict.unknown()) return strict;
  Cred lenient = cred;
  auto lenient_ns = std::make_shared<UserNamespace>(ns);
  lenient_ns->lenient = true;
  lenient.userns = std::move(lenient_ns);
  Engine& e = impl.engine;
  OpArgs args;
  ArgsOf(request, &args);
  Explainer ex;
  const int err = e.EvaluateAs(p.index, args, detail == Model::Detail::kVerdictOnly ? nullptr : &ex,
                               lenient);
  const Decision other = Decide(e, err, ex, -1);
  if (other.unknown()) return other;
  if (strict.verdict() == other.verdict() && strict.err() == other.err()) return strict;
  return UnknownInUserNs(fmt::format(
      "the answer depends on what the model cannot see from here ({}): an owner shown as the "
      "overflow id, or a capability over a namespace it does not hold. Where that grants: {}; "
      "where not: {}",
      ns.Describe(), other.ToText(), strict.ToText()));
}

// The security modules as they apply to `p`: its own reading
// (ReadSecurityModulesOf(): another process's labels), or its nearest
// forebear's, else the model's.
const SecurityModules* ModulesOf(const Model::Impl& impl, Process p) {
  const TaskTable& tasks = impl.engine.tasks();
  for (int i = p.index; i >= 0 && i < tasks.count(); i = tasks.task(i).parent) {
    auto it = impl.process_lsms.find(i);
    if (it != impl.process_lsms.end()) return it->second.get();
  }
  return impl.lsms.get();
}

// A model that revalidates, uses the prefix memo, holds a process of
// another user namespace, or has a security module that could refuse.
[[gnu::noinline]] Decision EvaluateSpecial(const Model& m, Model::Impl& impl, Process p,
                                           const Request& request, Model::Detail detail) {
  perm::tls_fuse_met = false;
  Decision d = (impl.special & Model::Impl::kUserNs) && m.Has(p) && !m.cred(p).InInitialUserNs()
                   ? EvaluateInUserNs(m, impl, p, request, detail)
                   : EvaluateSpecialPlain(m, impl, p, request, detail);
  // FUSE: what the kernel's checks let through goes to the server, which
  // answers last and may refuse (a policy of its own, a remote user's
  // rights); the model knows its checks, not the server's.
  // Linux: fs/fuse/dir.c, file.c (each operation a request to the server).
  if ((impl.special & Model::Impl::kFuse) && perm::tls_fuse_met && d.allowed()) {
    Reason r = d.reason();
    r.unknown_why = fmt::format(
        "the kernel's checks allow it ({}); a FUSE server then answers, whose own refusals the "
        "host does not show",
        r.text.empty() ? "as far as they go" : r.text);
    r.text = "unknown: " + r.unknown_why;
    d = Decision(Verdict::kUnknown, -1, std::move(r));
  }
  if (impl.special & Model::Impl::kLsm)
    if (const SecurityModules* lsms = ModulesOf(impl, p))
      return UnknownWhereModulesMayRefuse(*lsms, OpOf(request), std::move(d));
  return d;
}

}  // namespace

const SecurityModules* Model::security_modules(Process p) const {
  return Has(p) ? ModulesOf(*impl_, p) : impl_->lsms.get();
}

void SetPrefixMemo(Model& m, bool on) {
  Model::Impl& impl = m.impl();
  impl.special = on ? impl.special | Model::Impl::kPrefixMemo
                    : impl.special & ~Model::Impl::kPrefixMemo;
}

Decision Model::Evaluate(Process p, const Request& request, Detail detail) const {
  if (impl_->special) [[unlikely]] return EvaluateSpecial(*this, *impl_, p, request, detail);
  return EvaluateAsIs(p, request, detail);
}

Decision Model::EvaluateAsIs(Process p, const Request& request, Detail detail) const {
  return EvaluateAsIsT<false>(impl_->engine, p, request, detail);
}

Decision Model::Apply(Process p, const Request& request, Detail detail) {
  if (Revalidates(*impl_) && Has(p)) [[unlikely]] {
    if (auto failed = RevalidateFor(*impl_, p, request, true)) return *failed;
  }
  const OpArgs args = ArgsOf(request);
  int new_fd = -1;
  if (detail == Detail::kVerdictOnly) {
    const int err = impl_->engine.Apply(p.index, args, nullptr, &new_fd);
    return DecideQuiet(impl_->engine, err, new_fd);
  }
  Explainer ex;
  ex.set_trace(detail == Detail::kTrace);
  const int err = impl_->engine.Apply(p.index, args, &ex, &new_fd);
  return Decide(impl_->engine, err, ex, new_fd);
}

std::vector<TreeEntry> Model::Snapshot() const { return impl_->engine.Snapshot(); }

}  // namespace pathwarden
