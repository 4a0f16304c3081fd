// The engine: one operation as one task, for the writer and for readers.

#include "src/engine/engine.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "src/base/check.h"
#include "src/base/tree_order.h"
#include "src/landlock/landlock.h"
#include "src/landlock/memo.h"
#include "src/ops/ops.h"
#include "src/vfs/backend.h"
#include "src/vfs/xattr.h"

namespace pathwarden {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

Engine::Engine(const EngineOptions& options)
    : options_(options),
      landlock_(std::make_unique<landlock::Landlock>(world_, options_)),
      tasks_(world_) {
  tasks_.set_landlock(landlock_.get(), landlock_.get());
}

Engine::~Engine() = default;

walk::WalkEnv Engine::WalkEnvFor(const Task& p, Explainer* ex) {
  walk::WalkEnv env;
  env.w = &world_;
  env.cred = &p.cred;
  env.root = p.root;
  env.cwd = p.cwd;
  env.fast_search = options_.fast_search;
  env.plain_components = options_.plain_components;
  env.protected_symlinks = tasks_.sysctl().protected_symlinks;
  env.stats = &stats_;
  env.ex = ex;
  return env;
}

OpCtx Engine::Context(Task& p, const OpArgs& args, Explainer* ex, const Cred* cred_override) {
  OpCtx ctx{tasks_, world_, p, args, ex, WalkEnvFor(p, ex), true, cred_override};
  if (cred_override) ctx.env.cred = cred_override;
  return ctx;
}

int Engine::Apply(int task, const OpArgs& args, Explainer* ex, int* new_fd) {
  if (new_fd) *new_fd = -1;
  if (task < 0 || task >= tasks_.count()) return ESRCH;
  if (world_.backend() == nullptr) return ApplyOnce(task, args, ex, new_fd);
  // A backend fills on demand: an application that stopped for a fill
  // changed nothing (every lookup comes before every change), so it runs
  // again once the object is filled.
  vfs::Pending last;
  for (;;) {
    int err;
    {
      std::lock_guard<std::mutex> lock(writer_mutex_);
      err = ApplyOnce(task, args, ex, new_fd);
    }
    if (err != vfs::kErrNeedFill) return err;
    if (int unknown = Fill(&last)) return unknown;
    if (ex) ex->Clear();
  }
}

int Engine::ApplyOnce(int task, const OpArgs& args, Explainer* ex, int* new_fd) {
  Task& p = tasks_.task(task);
  vfs::World::WriteGuard g(world_);
  OpCtx ctx{tasks_, world_, p, args, ex, WalkEnvFor(p, ex), true};
  if (ex && ex->tracing()) ctx.env.plain_components = false;  // the general code reports
  const int err = Dispatch(ctx);
  if (new_fd) *new_fd = ctx.new_fd;
  return err;
}

int Engine::Fill(vfs::Pending* last) {
  const vfs::Pending want = vfs::PendingFill();
  if (want.kind == last->kind && want.dir == last->dir && want.name == last->name)
    return vfs::Unknown(fmt::format("filling {}{}{} made no progress", world_.DisplayPathOf(want.dir, world_.root()),
                                    want.name.empty() ? "" : "/", want.name));
  *last = want;
  std::lock_guard<std::mutex> lock(writer_mutex_);
  vfs::World::WriteGuard g(world_);
  vfs::Backend* b = world_.backend();
  if (b == nullptr) return vfs::Unknown("an evaluation asked for a fill, and no backend fills");
  // The directory may have changed since the reader saw it (a writer ran
  // in between): fill only a live, still incomplete directory, and let
  // the next evaluation find out what it needs now.
  const vfs::DentryId d = want.dir.dentry;
  if (d == vfs::kNone || d >= world_.dentry_end() || world_.dentry(d).inode == vfs::kNone)
    return 0;
  const vfs::Inode& dir = world_.inode_at(d);
  if (!S_ISDIR(dir.mode) || !(dir.flags & vfs::kInodeIncomplete)) {
    last->kind = vfs::Pending::Kind::kNothing;
    return 0;
  }
  Result<void, std::string> r = want.kind == vfs::Pending::Kind::kList
                                    ? b->List(world_, want.dir)
                                    : b->Lookup(world_, want.dir, want.name);
  if (!r) return vfs::Unknown(r.error());
  return 0;
}

std::string Engine::ResolveUnknown() {
  vfs::Pending& p = vfs::PendingFill();
  if (!p.why.empty() || p.opaque == vfs::kNone) return p.why;
  std::lock_guard<std::mutex> lock(writer_mutex_);
  // The inode may be gone since: say so rather than guess at another's.
  const vfs::InodeId ino = p.opaque;
  if (world_.inode(ino).mode == 0) return "what decided has changed since; ask again";
  p.why = vfs::UnknownWhy(world_, ino);
  return p.why;
}

[[gnu::noinline]] int Engine::EvaluateFilling(int task, const OpArgs& args, Explainer* ex,
                                              EngineStats* stats) {
  vfs::Pending last;
  for (;;) {
    if (int unknown = Fill(&last)) return unknown;
    if (ex) ex->Clear();
    const int err = (!ex && !stats) ? EvaluateT<true, false>(task, args, nullptr, nullptr)
                                    : EvaluateT<false, false>(task, args, ex, stats);
    if (err != vfs::kErrNeedFill) return err;
  }
}

template <bool kQuiet, bool kFills, bool kMemo>
int Engine::EvaluateT(int task, const OpArgs& args, Explainer* ex, EngineStats* stats) {
  const int err = EvaluateOnce<kQuiet, kMemo>(task, args, ex, stats);
  if constexpr (kFills) {
    if (err == vfs::kErrNeedFill) [[unlikely]] return EvaluateFilling(task, args, ex, stats);
  }
  return err;
}

namespace {

// The prefix memo's read section on this thread, for one evaluation (its
// attempts set it); none once it returns.
struct PrefixMemoSection {
  ~PrefixMemoSection() { walk::tls_prefix_memo_seq = 1; }
};

}  // namespace

template <bool kQuiet, bool kMemo, bool kCred>
[[gnu::always_inline]] inline int Engine::EvaluateOnce(int task, const OpArgs& args,
                                                       Explainer* ex, EngineStats* stats,
                                                       const Cred* cred) {
  // The task's root, cwd and credentials are the caller's to keep still
  // (see the header): one context serves every attempt.
  OpCtx ctx{tasks_, world_, tasks_.task(task), args, ex, WalkEnvFor(tasks_.task(task), ex), false};
  if constexpr (kCred) {
    ctx.cred_override = cred;
    ctx.env.cred = cred;
  } else {
    (void)cred;
  }
  [[maybe_unused]] std::conditional_t<kMemo, PrefixMemoSection, char> memo_section{};
  if constexpr (kMemo) {
    if (ctx.env.fast_search) ctx.env.fast_search = walk::kFastSearchPrefixMemo;
  }
  // Counted per attempt, kept only for the one that stands.
  EngineStats local;
  if constexpr (kQuiet) {
    ctx.env.stats = nullptr;
  } else {
    if (ex && ex->tracing()) ctx.env.plain_components = false;  // the general code reports
    ctx.env.stats = stats ? &local : nullptr;
  }
  auto count = [&] {
    if (kQuiet || !stats) return;
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
    if constexpr (kMemo) walk::tls_prefix_memo_seq = start;
    if constexpr (!kQuiet) local = EngineStats{};
    const int err = Dispatch(ctx);
    if (!world_.seq().ReadRetry(start)) {
      count();
      return speculative.Confirm(err);
    }
    // Raced a write: what this thread memoized may mix two states.
    landlock::MemoClearThread();
    vfs::World::ClearDisplayCache();
    if (!kQuiet && ex) ex->Clear();
  }
  vfs::World::ReadLock lock(world_);
  // Writers held off: the count stands still, and is even.
  if constexpr (kMemo) walk::tls_prefix_memo_seq = world_.seq().Current();
  if constexpr (!kQuiet) local = EngineStats{};
  const int err = Dispatch(ctx);
  count();
  return err;
}

int Engine::Evaluate(int task, const OpArgs& args, Explainer* ex, EngineStats* stats) {
  if (static_cast<unsigned>(task) >= static_cast<unsigned>(tasks_.count())) return ESRCH;
  // Nothing to explain or count: the evaluation without either.
  if (!ex && !stats) return EvaluateT<true>(task, args, nullptr, nullptr);
  return EvaluateT<false>(task, args, ex, stats);
}

int Engine::EvaluateOrStop(int task, const OpArgs& args) {
  if (static_cast<unsigned>(task) >= static_cast<unsigned>(tasks_.count())) return ESRCH;
  return EvaluateT<true, false>(task, args, nullptr, nullptr);
}

int Engine::EvaluateWithPrefixMemo(int task, const OpArgs& args, Explainer* ex,
                                   EngineStats* stats) {
  if (static_cast<unsigned>(task) >= static_cast<unsigned>(tasks_.count())) return ESRCH;
  if (!ex && !stats) return EvaluateT<true, true, true>(task, args, nullptr, nullptr);
  return EvaluateT<false, true, true>(task, args, ex, stats);
}

int Engine::EvaluateAs(int task, const OpArgs& args, Explainer* ex, const Cred& cred) {
  if (static_cast<unsigned>(task) >= static_cast<unsigned>(tasks_.count())) return ESRCH;
  vfs::Pending last;
  for (;;) {
    const int err = EvaluateOnce<false, false, true>(task, args, ex, nullptr, &cred);
    if (err != vfs::kErrNeedFill) return err;
    if (int unknown = Fill(&last)) return unknown;
    if (ex) ex->Clear();
  }
}

int Engine::EvaluateOrStopWithPrefixMemo(int task, const OpArgs& args) {
  if (static_cast<unsigned>(task) >= static_cast<unsigned>(tasks_.count())) return ESRCH;
  return EvaluateT<true, false, true>(task, args, nullptr, nullptr);
}

namespace {

using OpFn = int (*)(OpCtx&);

// Each request type's op (ops::Do<R>()), at the index of its Op.
template <size_t... I>
constexpr std::array<OpFn, sizeof...(I)> MakeDispatchTable(std::index_sequence<I...>) {
  std::array<OpFn, sizeof...(I)> table{};
  ((table[static_cast<size_t>(std::variant_alternative_t<I, Request>::kOp)] =
        &ops::Do<std::variant_alternative_t<I, Request>>),
   ...);
  return table;
}
constexpr auto kDispatch =
    MakeDispatchTable(std::make_index_sequence<std::variant_size_v<Request>>());

constexpr bool EveryOpDispatched() {
  for (OpFn f : kDispatch)
    if (!f) return false;
  return true;
}
static_assert(EveryOpDispatched(), "two request types share an Op, or the enum has a gap");

}  // namespace

int Engine::Dispatch(OpCtx& ctx) {
  const auto op = static_cast<size_t>(ctx.a.op);
  if (op < kDispatch.size()) return kDispatch[op](ctx);
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
  // Entries with their parent's index and their name, never a whole path
  // (a deep tree's paths add up to its entries times its depth); put in
  // path order at the end.
  std::vector<TreeEntry> out;
  struct Item {
    PathPos pos;
    uint32_t parent;
    std::string_view name;
  };
  std::vector<Item> stack{{w.root(), 0, {}}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const InodeId ino = w.inode_of(it.pos.dentry);
    const vfs::Inode& i = w.inode(ino);
    const uint32_t self = static_cast<uint32_t>(out.size());
    TreeEntry e;
    e.parent = it.parent;
    e.name = std::string(it.name);
    const uint32_t type = i.mode & S_IFMT;
    e.type = std::string(TypeName(type));
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
    e.xattrs = vfs::SnapshotXattrs(w.xattrs(ino));
    out.push_back(std::move(e));
    if (type != S_IFDIR) continue;
    auto c = children.find(it.pos.dentry);
    if (c == children.end()) continue;
    for (DentryId d : c->second) {
      PathPos child{it.pos.mnt, d};
      walk::TraverseMounts(w, &child);
      stack.push_back({child, self, w.str(w.dentry(d).name)});
    }
  }
  // Every entry was reached from the root, so the order takes them all.
  (void)internal::SortTreeByPath(&out);
  return out;
}

}  // namespace pathwarden
