// The path walk.
// Linux: fs/namei.c @6.18 (link_path_walk, walk_component, step_into,
// pick_link, may_follow_link, handle_dots, follow_dotdot, lookup_last,
// path_lookupat, path_parentat)
//
// Over 800 lines, on purpose: the walk's entry points (LinkPathWalk(),
// the path_lookupat() and path_parentat() analogues) and its fast
// strategy (the register loop over plain components, PlainComponents(),
// with the prefix memo and the memo's runs) inline their always_inline
// helpers (CheckNameInline(), PathInitInline(), StepIntoInline(),
// TakeComponent()) within this one translation unit. The build has no
// link-time optimisation, and the fs.h stat's instruction bound
// (docs/performance.md) is counted on this code: split, they would be
// calls again on every lookup.

#include "src/walk/namei.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "src/perm/permission.h"
#include "src/vfs/backend.h"

namespace pathwarden::walk {
namespace {

using vfs::DentryId;
using vfs::PathPos;
using vfs::World;

// "." and "..", by their name keys (internal::NameKey()): the general
// code classifies the last component by them, and the register loop hands
// both off.
inline constexpr uint64_t kDotKey = '.' | 1ull << 56;
inline constexpr uint64_t kDotDotKey = '.' | '.' << 8 | 2ull << 56;

LastType Classify(uint64_t key) {
  if (key == kDotKey) return LastType::kDot;
  if (key == kDotDotKey) return LastType::kDotDot;
  return LastType::kNorm;
}

// may_lookup(): MAY_EXEC on the directory being walked, before the next
// component is even parsed. The fast search check skips the call for
// directories everyone may search: it cannot change the answer.
[[gnu::noinline]] int MayLookupSlow(Nameidata& nd, vfs::InodeId ino) {
  const World& w = *nd.env.w;
  perm::PermCheck pc = perm::GenericPermission(w, *nd.env.cred, ino, perm::kMayExec);
  if (Explainer* ex = nd.env.ex; ex && (pc.err || ex->tracing())) {
    if (pc.err)
      ex->Fail(Stage::kWalk,
               "no search permission on " + DescribeCheck(w, *nd.env.cred, nd.path, nd.root, pc));
    ex->Component({VerdictOf(w, nd.path, w.DisplayPathOf(nd.path, nd.root), pc), false});
  }
  return pc.err;
}

// A directory the fast search check let through, in a trace.
[[gnu::noinline]] void TraceFastSearch(Nameidata& nd) {
  const World& w = *nd.env.w;
  PermVerdict v;
  v.path = w.DisplayPathOf(nd.path, nd.root);
  v.want = perm::kMayExec;
  v.granted = true;
  v.decided_by = PermClass::kFastSearch;
  FillObject(w, nd.path, &v);
  nd.env.ex->Component({std::move(v), true});
}

[[gnu::always_inline]] inline int MayLookup(Nameidata& nd) {
  const World& w = *nd.env.w;
  const bool fast = nd.env.fast_search && kSearchableByAll.Passes(w.dentry(nd.path.dentry).flags);
  if (EngineStats* st = nd.env.stats) {
    ++st->components;
    st->fast_components += fast;
  }
  if (fast && nd.env.ex && nd.env.ex->tracing()) [[unlikely]]
    TraceFastSearch(nd);
  return fast ? 0 : MayLookupSlow(nd, w.inode_of(nd.path.dentry));
}

// may_follow_link(): protected_symlinks, for trailing symlinks only.
int MayFollowLink(Nameidata& nd, vfs::InodeId link) {
  const World& w = *nd.env.w;
  const uint32_t link_uid = w.inode(link).uid;
  // Read from inside a user namespace, the overflow uid may stand for
  // several owners (perm::OverflowUidAmbiguous()).
  const bool ambiguous = perm::OverflowUidAmbiguous(*nd.env.cred, link_uid);
  if (link_uid == nd.env.cred->fsuid && !ambiguous) return 0;
  if ((nd.dir_mode() & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH)) return 0;
  if (nd.dir_uid() == link_uid && !ambiguous) return 0;
  tls_sysctl_decided = true;
  if (!nd.env.protected_symlinks) return 0;
  if (ambiguous && (link_uid == nd.env.cred->fsuid || nd.dir_uid() == link_uid))
    return vfs::Unknown(fmt::format(
        "protected_symlinks: the symlink \"{}\" in a sticky world-writable directory is owned "
        "by {}, the overflow uid of the user namespace this is read from, as is {}: whether "
        "they are one owner is not known",
        nd.last, link_uid, link_uid == nd.env.cred->fsuid ? "the asker" : "the directory"));
  if (nd.env.ex)
    nd.env.ex->Fail(
        Stage::kProtected,
        fmt::format("protected_symlinks: the symlink \"{}\" (owner {}) is in a "
                    "sticky world-writable directory owned by {} and uid {} "
                    "owns neither",
                    nd.last, link_uid, nd.dir_uid(), nd.env.cred->fsuid));
  return EACCES;
}

// pick_link(): count, protected_symlinks, nosymfollow, then the body.
int PickLink(Nameidata& nd, PathPos link_pos, int wflags, Link* link) {
  const World& w = *nd.env.w;
  if (nd.total_link_count++ >= kMaxSymlinks) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kWalk,
                      fmt::format("more than {} symlinks followed (at {})",
                                  kMaxSymlinks, w.DisplayPathOf(link_pos, nd.root)));
    return ELOOP;
  }
  vfs::InodeId ino = w.inode_of(link_pos.dentry);
  // A symlink the model does not hold: its owner (protected_symlinks) and
  // its body may not be what the asker would meet (/proc/self names the
  // asking task).
  if (w.inode(ino).flags & vfs::kInodeOpaque) [[unlikely]]
    return vfs::UnknownAt(ino);
  if (wflags & kWalkTrailing) {
    if (int err = MayFollowLink(nd, ino)) return err;
  }
  if (w.mount(link_pos.mnt).flags & vfs::kMntNosymfollow) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kMount,
                      fmt::format("{} is on a nosymfollow mount",
                                  w.DisplayPathOf(link_pos, nd.root)));
    return ELOOP;
  }
  std::string_view body = w.str(w.inode(ino).data);
  if (!body.empty() && body[0] == '/') {
    nd.path = nd.root;  // nd_jump_root(): no mount traversal
    while (!body.empty() && body[0] == '/') body.remove_prefix(1);
    if (body.empty()) return 0;  // a pure jump
  }
  if (body.empty()) return 0;
  link->follow = true;
  link->body = body;
  return 0;
}

// follow_dotdot(): stay at the process root; from a mount root, climb to
// the mountpoint (skipping mountpoints that are themselves mount roots);
// then the dentry parent, which must still be under the mount's root.
int FollowDotdot(Nameidata& nd, DentryId* parent) {
  const World& w = *nd.env.w;
  if (nd.path == nd.root) {
    *parent = nd.path.dentry;
    return 0;
  }
  if (nd.path.dentry == w.mount(nd.path.mnt).root) {
    vfs::MountId m = nd.path.mnt;
    bool found = false;
    for (uint32_t guard = 0; guard < 1u << 20; ++guard) {
      const vfs::Mount& mt = w.mount(m);
      if (mt.parent == vfs::kNone) break;
      DentryId mp = mt.mountpoint;
      m = mt.parent;
      if (nd.root.dentry == mp && nd.root.mnt == m) break;
      if (mp != w.mount(m).root) {
        nd.path = {m, mp};
        found = true;
        break;
      }
    }
    if (!found) {
      *parent = nd.path.dentry;  // in_root
      return 0;
    }
  }
  DentryId p = w.dentry(nd.path.dentry).parent;
  // path_connected(): a bind mount of a subtree must not be escaped.
  const vfs::Mount& mt = w.mount(nd.path.mnt);
  if (mt.root != w.sb(mt.sb).root && !w.IsDescendant(p, mt.root)) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kWalk,
                      fmt::format("\"..\" of {} leaves its bind mount",
                                  w.DisplayPathOf(nd.path, nd.root)));
    return ENOENT;
  }
  *parent = p;
  return 0;
}

}  // namespace

namespace {

[[gnu::always_inline]] inline int CheckNameInline(const WalkEnv& env, std::string_view name,
                                                  bool allow_empty);
[[gnu::always_inline]] inline int PathInitInline(Nameidata& nd, const Start& start,
                                                 std::string_view name);

}  // namespace

int CheckName(const WalkEnv& env, std::string_view name, bool allow_empty) {
  return CheckNameInline(env, name, allow_empty);
}

namespace {

[[gnu::noinline, gnu::cold]] int CheckNameFailed(const WalkEnv& env, std::string_view name) {
  if (name.size() >= kPathMax) {
    if (env.ex)
      env.ex->Fail(Stage::kArgs,
                   fmt::format("the path is {} bytes; PATH_MAX is 4096 with "
                               "the NUL",
                               name.size()));
    return ENAMETOOLONG;
  }
  if (env.ex) env.ex->Fail(Stage::kArgs, "the path is empty");
  return ENOENT;
}

int CheckNameInline(const WalkEnv& env, std::string_view name, bool allow_empty) {
  if (name.size() >= kPathMax || (name.empty() && !allow_empty)) [[unlikely]]
    return CheckNameFailed(env, name);
  return 0;
}

}  // namespace

void TraverseMountsSlow(const World& w, PathPos* p) {
  for (uint32_t guard = 0; guard < 1u << 20; ++guard) {
    if (kNotMounted.Passes(w.dentry(p->dentry).flags)) return;
    vfs::MountId m = w.LookupMount(p->mnt, p->dentry);
    if (m == vfs::kNone) return;
    *p = {m, w.mount(m).root};
  }
}

int PathInit(Nameidata& nd, const Start& start, std::string_view name) {
  return PathInitInline(nd, start, name);
}

namespace {

int PathInitInline(Nameidata& nd, const Start& start, std::string_view name) {
  if (!name.empty() && name[0] == '/') {
    nd.path = nd.root;
    return 0;
  }
  if (!start.has_dirfd) {
    nd.path = nd.env.cwd;
    return 0;
  }
  if (start.bad_fd) {
    if (nd.env.ex) nd.env.ex->Fail(Stage::kFd, "the dirfd is not an open file");
    return EBADF;
  }
  if (!name.empty() && !CanLookup(*nd.env.w, start.pos.dentry)) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kWalk,
                      fmt::format("the dirfd {} is not a directory",
                                  nd.env.w->DisplayPathOf(start.pos, nd.root)));
    return ENOTDIR;
  }
  nd.path = start.pos;
  return 0;
}

}  // namespace

namespace {

// LookupChild()'s failures, explained.
[[gnu::noinline, gnu::cold]] DentryId LookupChildFailed(const Nameidata& nd, int* err) {
  const World& w = *nd.env.w;
  if (!kNotDeadDir.Passes(w.dentry(nd.path.dentry).flags)) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kVfs, fmt::format("{} was removed: nothing can be looked up in it",
                                               w.DisplayPathOf(nd.path, nd.root)));
    *err = ENOENT;
  } else if (NameTooLong(nd.last.size())) {
    if (nd.env.ex)
      nd.env.ex->Fail(Stage::kWalk, fmt::format("a component of {} bytes exceeds NAME_MAX "
                                                "(255) in {}",
                                                nd.last.size(), w.DisplayPathOf(nd.path, nd.root)));
    *err = ENAMETOOLONG;
  } else if (int miss = vfs::Absent(w, nd.path, nd.last)) {
    // Not known to be absent: the backend is asked, or cannot say.
    *err = miss;
  } else {
    if (nd.env.ex) {
      std::string dir_path = w.DisplayPathOf(nd.path, nd.root);
      nd.env.ex->Fail(Stage::kWalk, fmt::format("{}{}{} does not exist", dir_path,
                                                dir_path == "/" ? "" : "/", nd.last));
    }
    *err = ENOENT;
  }
  return vfs::kNone;
}

// lookup_fast(): a removed directory holds nothing, an overlong name is
// refused, then the dentry hash.
[[gnu::always_inline]] inline DentryId LookupChildInline(const Nameidata& nd, int* err) {
  const World& w = *nd.env.w;
  if (!kNotDeadDir.Passes(w.dentry(nd.path.dentry).flags) || NameTooLong(nd.last.size()))
    return LookupChildFailed(nd, err);
  const DentryId d = w.Lookup(nd.path.dentry, nd.last, nd.last_hash, nd.last_head);
  return d != vfs::kNone ? d : LookupChildFailed(nd, err);
}

[[gnu::always_inline]] inline int StepIntoInline(Nameidata& nd, int wflags, DentryId child,
                                                 Link* link) {
  const World& w = *nd.env.w;
  PathPos p{nd.path.mnt, child};
  uint32_t flags = w.dentry(child).flags;
  if (!kNotMounted.Passes(flags)) {
    TraverseMountsSlow(w, &p);
    flags = w.dentry(p.dentry).flags;
  }
  if (kNotSymlink.Passes(flags) ||
      ((wflags & kWalkTrailing) && !(nd.flags & kLookupFollow)) || (wflags & kWalkNofollow)) {
    nd.path = p;
    return 0;
  }
  return PickLink(nd, p, wflags, link);
}

[[gnu::always_inline]] inline int WalkComponentInline(Nameidata& nd, int wflags, Link* link) {
  if (nd.last_type != LastType::kNorm) return HandleDots(nd, nd.last_type);
  int err = 0;
  const DentryId d = LookupChildInline(nd, &err);
  if (d == vfs::kNone) return err;
  return StepIntoInline(nd, wflags, d, link);
}

}  // namespace

int StepInto(Nameidata& nd, int wflags, DentryId child, Link* link) {
  return StepIntoInline(nd, wflags, child, link);
}

int HandleDots(Nameidata& nd, LastType type) {
  if (type != LastType::kDotDot) return 0;
  DentryId parent = vfs::kNone;
  if (int err = FollowDotdot(nd, &parent)) return err;
  Link unused;
  return StepInto(nd, kWalkNofollow, parent, &unused);
}

namespace {

// The register loop
//
// The common case of link_path_walk(), apart from the general code: plain
// names, in directories the process may search, naming hashed directories
// with nothing mounted on them -- and, for path_lookupat(), the last
// component too when it ends the name: a plain name without trailing
// slashes, found, with nothing mounted on it, not a symlink the walk would
// follow, a directory if one is required. It steps over as many such
// components as follow one another and stops before anything else: the
// general code takes the component there, with every check and its
// explanation. It decides nothing the general code would not, and a
// component it hands off has not been asked about.
//
// may_lookup() is here too, so that the fast search check is measured
// against the permission call alone: with the check, a directory anyone
// may search needs no call; without it, every directory is asked
// generic_permission(), and a refusal stops the loop for the general code
// to refuse and explain.

// The acceptance rules, from the walk's rules (namei.h)
//
// StepRuleOf(): what the general code requires of the dentry it steps onto
// to do nothing but move there, walking with `lookup_flags` -- nothing
// mounted on it, not a symlink if it would follow one, a directory if one
// is required. A component with more after it is stepped onto as with
// LOOKUP_FOLLOW | LOOKUP_DIRECTORY (link_path_walk() follows every symlink
// on the way and requires a directory), which is kInnerRule.
constexpr FlagRule StepRuleOf(uint32_t lookup_flags) {
  FlagRule r = kNotMounted;
  if (lookup_flags & kLookupFollow) r = r & kNotSymlink;
  if (lookup_flags & kLookupDirectory) r = r & kIsDirectory;
  return r;
}
inline constexpr FlagRule kInnerRule = StepRuleOf(kLookupFollow | kLookupDirectory);

// StepRule(): StepRuleOf() by a table of the four, a load where a walk
// starts rather than a computation (four instructions a lookup).
static_assert(kLookupFollow == 1 && kLookupDirectory == 2);
inline constexpr FlagRule kStepRules[4] = {StepRuleOf(0), StepRuleOf(1), StepRuleOf(2),
                                           StepRuleOf(3)};
inline FlagRule StepRule(uint32_t lookup_flags) {
  return kStepRules[lookup_flags & (kLookupFollow | kLookupDirectory)];
}

// How a loop settles may_lookup() on the directory a component is looked
// up in: only a directory anyone may search is taken (kFastOnly: the loop
// calls nothing), such a directory is free and any other is asked
// (kFastOrAsk), or every directory is asked (kAsk: the fast search check
// off). A refusal is the general code's to make and explain.
enum class Search : uint8_t { kFastOnly, kFastOrAsk, kAsk };

// LoopDirRule(): what the loop requires of that directory's flags: not
// removed (lookup_fast() finds nothing in it), and with kFastOnly,
// searchable by everyone.
constexpr FlagRule LoopDirRule(Search s) {
  return s == Search::kFastOnly ? kNotDeadDir & kSearchableByAll : kNotDeadDir;
}

// NameAccepted(): a name the general code looks up as it is: not "." or
// "..", not longer than NAME_MAX.
[[gnu::always_inline]] inline bool NameAccepted(const internal::Component& c) {
  return !NameTooLong(c.len) &&
         !((c.key & 0xff) == '.' && (c.key == kDotKey || c.key == kDotDotKey));
}

// LoopMode
//
// What the last component of the name may be: whether the loop may take
// it at all (path_lookupat(), at the end of the name itself: the end of a
// symlink body is not the end of the walk), and the StepRule() of the
// walk's LOOKUP_* flags it must pass.
struct LoopMode {
  FlagRule last;
  bool resolve;
};

LoopMode ModeFor(uint32_t lookup_flags, bool may_resolve) {
  return {StepRule(lookup_flags), may_resolve};
}

// Steps taken (low half) and how many of them were fast (high half).
void AddCounts(const WalkEnv& env, uint64_t counts) {
  if (EngineStats* stats = env.stats) {
    stats->components += static_cast<uint32_t>(counts);
    stats->fast_components += counts >> 32;
  }
}

// TakeComponent()
//
// The rules applied to component *i of `path` in directory *cur (whose
// flags are *flags), once for both loops: moves *i, *cur and *flags past
// it and counts it (kMoved, or kResolved for the last component), or
// leaves them where they are (kStopped, or kAtLast for a last component
// `mode` does not let the loop take). Everything it stops at is the
// general code's, which has not been asked about it.
//
// kRun: the shape of PlainRun(), which calls nothing but
// generic_permission() (and that only with kAsk): long names scanned and
// compared inline, and runs of slashes left to PlainStep(), which skips
// them by the general means.
enum class Took : uint8_t { kMoved, kResolved, kStopped, kAtLast };

template <Search kSearch, bool kRun>
[[gnu::always_inline]] inline Took TakeComponent(const WalkEnv& env,
                                                 const World::DentryIndex& dcache,
                                                 const char* path, size_t size, LoopMode mode,
                                                 size_t* i, DentryId* cur, uint32_t* flags,
                                                 uint64_t* counts) {
  // hash_name(); the name, on each branch where the scan leaves its own
  // facts (a short name is not too long, a long one not a dot).
  const std::string_view name(path, size);
  internal::Component c;
  if constexpr (kRun) {
    uint64_t w0;
    if (!internal::ScanShortComponent(name, *i, &c, &w0)) {
      c = internal::ScanLongComponentInline(name, *i, w0);
      if (!NameAccepted(c)) return Took::kStopped;
    } else if (!NameAccepted(c)) {
      return Took::kStopped;
    }
  } else {
    c = internal::ScanComponent(name, *i);
    if (!NameAccepted(c)) return Took::kStopped;
  }
  size_t next = *i + c.len;
  const bool last = next == size;
  if (last) {
    if (!mode.resolve) return Took::kAtLast;
  } else {
    ++next;  // the '/' that ended it
    if constexpr (kRun) {
      if (next < size && path[next] == '/') return Took::kStopped;
    } else {
      while (next < size && path[next] == '/') ++next;
    }
    // Trailing slashes: lookup_last() walks the component with
    // LOOKUP_DIRECTORY, and the general code takes it.
    if (next == size) return Took::kStopped;
  }
  constexpr FlagRule kDirRule = LoopDirRule(kSearch);
  if (!kDirRule.Passes(*flags)) return Took::kStopped;
  const DentryId d = dcache.Lookup<kRun>(*cur, path + *i, c);
  if (d == vfs::kNone) return Took::kStopped;
  const uint32_t child = dcache.dentry(d).flags;
  if (last ? !mode.last.Passes(child) : !kInnerRule.Passes(child)) return Took::kStopped;
  // may_lookup(), last, so that a component handed off is asked once, by
  // the general code.
  bool fast = kSearch == Search::kFastOnly;
  if constexpr (kSearch == Search::kFastOrAsk) fast = kSearchableByAll.Passes(*flags);
  if (!fast &&
      perm::GenericPermission(*env.w, *env.cred, dcache.dentry(*cur).inode, perm::kMayExec).err)
    return Took::kStopped;
  *cur = d;
  *flags = child;
  *i = next;
  *counts += 1 | uint64_t{fast} << 32;
  return last ? Took::kResolved : Took::kMoved;
}

// PlainRun()
//
// The loop proper, from component `i` of `path` in directory `cur`: where
// it stopped (i, cur), its counts, and whether it resolved the last
// component.
//
// With the fast search check (kFastSearch) it takes only directories
// anyone may search, and calls nothing in the common case (the dentry
// lookup is inline, long names aside), so that the compiler keeps its
// state in registers: a call in the loop cost every iteration spilled
// registers. A directory that needs generic_permission() is PlainStep()'s.
// Without the check, the same loop asks generic_permission() about every
// directory: that call, and its cost to the loop around it, is what the
// check saves.
//
// Its arguments come in registers and its results go back field by field:
// a struct built by the caller and read back in pieces stalls
// store-to-load forwarding (inlining the loop where a lookup starts, which
// removed such a struct, took a fifth off the lookup).
struct PlainRunResult {
  size_t i;
  uint64_t counts;
  DentryId cur;
  bool resolved;
  bool at_last;  // stopped at the last component, which `mode` leaves alone
};

// PrefixMemo
//
// This thread's prefix memo (namei.h): the name of the last recorded run,
// up to the end of its last recorded component, and the directory reached
// at the end of each component (`end`: the offset just past its '/'; the
// run took k + 1 components to reach end[k]).
struct PrefixMemo {
  static constexpr uint32_t kDepth = 48;
  static constexpr uint32_t kBytes = 1024;
  // The key: the world, the read section, the shape, where the run began.
  uint64_t world = 0;
  uint64_t seq = 1;
  uint64_t shape_gen = 0;
  DentryId start = vfs::kNone;
  uint32_t begin = 0;
  uint32_t n = 0;  // components recorded
  PrefixMemoCounts counts;
  uint16_t end[kDepth] = {};
  DentryId dentry[kDepth] = {};
  char path[kBytes] = {};
};
static_assert(PrefixMemo::kBytes <= UINT16_MAX);

constinit thread_local PrefixMemo tls_memo;

// Record(): one more component of the recording run, while the memo holds
// it.
[[gnu::always_inline]] inline void Record(PrefixMemo* m, size_t i, DentryId cur) {
  if (m->n < PrefixMemo::kDepth && i <= PrefixMemo::kBytes) {
    m->end[m->n] = static_cast<uint16_t>(i);
    m->dentry[m->n] = cur;
    ++m->n;
  }
}

// kRecord: the run records each component it moves past in `memo`.
template <bool kFastSearch, bool kRecord = false>
[[gnu::always_inline]] inline PlainRunResult PlainRunInline(const WalkEnv& env, const char* path,
                                                            size_t size, size_t i, DentryId cur,
                                                            LoopMode mode,
                                                            PrefixMemo* memo = nullptr) {
  // Local copies: the acquire loads below would make the compiler reload
  // fields of the world from memory every time.
  const World::DentryIndex dcache(*env.w);
  uint32_t flags = dcache.dentry(cur).flags;
  uint64_t counts = 0;
  for (;;) {
    const Took t =
        TakeComponent<kFastSearch ? Search::kFastOnly : Search::kAsk, /*kRun=*/true>(
            env, dcache, path, size, mode, &i, &cur, &flags, &counts);
    if (t != Took::kMoved) return {i, counts, cur, t == Took::kResolved, t == Took::kAtLast};
    if constexpr (kRecord) Record(memo, i, cur);
  }
}

template <bool kFastSearch>
[[gnu::noinline]] PlainRunResult PlainRun(const WalkEnv& env, const char* path, size_t size,
                                          size_t i, DentryId cur, LoopMode mode) {
  return PlainRunInline<kFastSearch>(env, path, size, i, cur, mode);
}

// CommonPrefix(): how many bytes `a` and `b` share from the start, of
// the first `n` (both readable that far). Sixteen bytes a compare; the
// tail by one compare of the last sixteen (or eight) bytes, which overlaps
// what was already found equal: no byte loop, no read past `n`.
size_t CommonPrefix(const char* a, const char* b, size_t n) {
  auto diff16 = [&](size_t k) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y))) ^ 0xffffu;
  };
  if (n >= 16) {
    size_t k = 0;
    for (; k + 16 <= n; k += 16)
      if (const uint32_t d = diff16(k)) return k + static_cast<size_t>(__builtin_ctz(d));
    if (k == n) return n;
    const size_t t = n - 16;
    const uint32_t d = diff16(t);
    return d ? t + static_cast<size_t>(__builtin_ctz(d)) : n;
  }
  auto diff8 = [&](size_t k) {
    uint64_t x, y;
    std::memcpy(&x, a + k, 8);
    std::memcpy(&y, b + k, 8);
    return x ^ y;
  };
  if (n >= 8) {
    if (const uint64_t d = diff8(0)) return static_cast<size_t>(__builtin_ctzll(d) / 8);
    const uint64_t d = diff8(n - 8);
    return d ? n - 8 + static_cast<size_t>(__builtin_ctzll(d) / 8) : n;
  }
  size_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  return k;
}

// MemoRun()
//
// PlainRun<true>() from component `i` of `path` in directory `cur`,
// resumed at the longest prefix this thread's memo shares with it, and
// recorded for the next. The same result and counts as PlainRun<true>():
// the run from `i` would reach the end of each shared component in the
// recorded directory, as long as nothing changed (the memo's key), and
// would not stop there (a component follows, not a second '/').
[[gnu::noinline]] PlainRunResult MemoRun(const WalkEnv& env, const char* path, size_t size,
                                         size_t i, DentryId cur, LoopMode mode) {
  const uint64_t seq = tls_prefix_memo_seq;
  if (seq & 1) return PlainRun<true>(env, path, size, i, cur, mode);  // no read section
  PrefixMemo& m = tls_memo;
  const World& w = *env.w;
  uint32_t k = 0;  // recorded components the run may skip
  if (m.seq == seq && m.world == w.instance_id() && m.shape_gen == w.shape_gen() &&
      m.start == cur && m.begin == i) {
    k = m.n;
    const size_t recorded = k ? m.end[k - 1] : 0;
    const size_t common = CommonPrefix(path, m.path, std::min(size, recorded));
    while (k > 0 && (m.end[k - 1] > common || m.end[k - 1] >= size || path[m.end[k - 1]] == '/'))
      --k;
  } else {
    m.world = w.instance_id();
    m.seq = seq;
    m.shape_gen = w.shape_gen();
    m.start = cur;
    m.begin = static_cast<uint32_t>(i);
  }
  size_t from = i;
  DentryId at = cur;
  if (k > 0) {
    const DentryId d = m.dentry[k - 1];
    // What the run stood on there: a directory with nothing mounted on
    // it, not a symlink. Anything else is an inconsistency: start over.
    if (d == vfs::kNone || d >= w.dentry_end() || !kInnerRule.Passes(w.dentry(d).flags)) {
      k = 0;
    } else {
      from = m.end[k - 1];
      at = d;
      ++m.counts.hits;
      m.counts.skipped += k;
    }
  }
  const size_t kept = k ? m.end[k - 1] : 0;  // m.path holds the name up to here
  m.n = k;
  PlainRunResult r = PlainRunInline<true, /*kRecord=*/true>(env, path, size, from, at, mode, &m);
  if (m.n > k) std::memcpy(m.path + kept, path + kept, m.end[m.n - 1] - kept);
  r.counts += k | uint64_t{k} << 32;  // every component skipped, all fast
  return r;
}

// PlainRunOther(): PlainRun() without the fast search check, or with the
// prefix memo (FilenameLookup()'s common case is the inline loop).
[[gnu::noinline]] PlainRunResult PlainRunOther(const WalkEnv& env, const char* path, size_t size,
                                               size_t i, DentryId cur, LoopMode mode) {
  if (env.fast_search == kFastSearchOff) return PlainRun<false>(env, path, size, i, cur, mode);
  return MemoRun(env, path, size, i, cur, mode);
}


// PlainStep()
//
// One component as the loop would take it, by the general means: a long
// name or a directory that needs generic_permission() (with the check),
// and anything PlainRun() stopped at that the loop may still take. Moves
// *i and *cur past it and counts it; false where the loop stops, or once
// it resolved the last component (*resolved).
template <bool kFastSearch>
bool PlainStep(const WalkEnv& env, LoopMode mode, std::string_view name, size_t* i,
               DentryId* cur, uint64_t* counts, bool* resolved) {
  const World::DentryIndex dcache(*env.w);
  uint32_t flags = dcache.dentry(*cur).flags;
  const Took t = TakeComponent<kFastSearch ? Search::kFastOrAsk : Search::kAsk, /*kRun=*/false>(
      env, dcache, name.data(), name.size(), mode, i, cur, &flags, counts);
  *resolved = t == Took::kResolved;
  return t == Took::kMoved;
}

// PlainComponents()
//
// The register loop from component `i` of `path` in directory `cur`, for
// the general code: PlainRun() and PlainStep() in turn, as far as they go.
struct PlainResult {
  size_t i;              // where it stopped
  vfs::DentryId dentry;  // the directory reached (or the result)
  bool resolved;
};

//
// kMemo: the first run is MemoRun()'s.
template <bool kFastSearch, bool kMemo = false>
[[gnu::noinline]] PlainResult PlainComponents(const WalkEnv& env, LoopMode mode, DentryId cur,
                                              const char* path, size_t size, size_t i) {
  uint64_t counts = 0;
  bool resolved = false;
  for (bool first = true;; first = false) {
    const PlainRunResult r = kMemo && first ? MemoRun(env, path, size, i, cur, mode)
                                            : PlainRun<kFastSearch>(env, path, size, i, cur, mode);
    i = r.i;
    cur = r.cur;
    counts += r.counts;
    if (r.resolved) {
      resolved = true;
      break;
    }
    if (r.at_last) break;
    if (!PlainStep<kFastSearch>(env, mode, {path, size}, &i, &cur, &counts, &resolved)) break;
  }
  AddCounts(env, counts);
  return {i, cur, resolved};
}

inline constexpr size_t kNoResume = ~size_t{0};

// With `resolved` (path_lookupat()), the last component may be taken by
// PlainComponents() too: *resolved says so. `resume_at`: a walk the
// register loop began and stopped at this component of `name`; the
// general code takes that one first (the loop would only stop there
// again). kMemo: the walk's first run resumes from the prefix memo (a
// walk with kFastSearchPrefixMemo, from the start of the name).
template <bool kMemo = false>
[[gnu::always_inline]] inline int LinkPathWalkInline(Nameidata& nd, std::string_view name,
                                                     bool* resolved = nullptr,
                                                     size_t resume_at = kNoResume) {
  const World& w = *nd.env.w;
  int depth = 0;
  nd.last_type = LastType::kRoot;
  nd.last = {};
  nd.last_slash = false;
  bool loop_stopped_here = resume_at != kNoResume;
  // The prefix memo serves the first run, from where the name begins.
  bool memo = kMemo;
  size_t i = loop_stopped_here ? resume_at : 0;
  while (i < name.size() && name[i] == '/') ++i;
  if (i == name.size()) {
    nd.dir = vfs::kNone;  // only slashes: no hardening checks apply
    return 0;
  }
  for (;;) {
    // The register loop first, as far as it goes. Only the last component
    // of the name itself may be resolved: the end of a symlink body met on
    // the way is not the end of the walk.
    const LoopMode mode = ModeFor(nd.flags, depth == 0 && resolved != nullptr);
    // A last component the loop may not take is not worth its call (an
    // open() at a dirfd, a creation in the working directory).
    if (nd.env.plain_components && !loop_stopped_here &&
        (mode.resolve || name.find('/', i) != std::string_view::npos)) {
      const PlainResult r =
          kMemo && memo
              ? PlainComponents<true, true>(nd.env, mode, nd.path.dentry, name.data(), name.size(),
                                            i)
          : nd.env.fast_search
              ? PlainComponents<true>(nd.env, mode, nd.path.dentry, name.data(), name.size(), i)
              : PlainComponents<false>(nd.env, mode, nd.path.dentry, name.data(), name.size(), i);
      nd.path.dentry = r.dentry;
      if (r.resolved) {
        *resolved = true;
        return 0;
      }
      i = r.i;
    }
    loop_stopped_here = false;
    if constexpr (kMemo) memo = false;
    // hash_name(): the component's length and hash in one pass.
    nd.last = name.substr(i, internal::HashComponent(name, i, &nd.last_hash, &nd.last_head));
    if (int err = MayLookup(nd)) return err;
    nd.last_type = Classify(internal::NameKey(nd.last_head, nd.last.size()));
    i += nd.last.size();
    bool at_end = i == name.size();
    nd.last_slash = false;
    if (!at_end) {
      while (i < name.size() && name[i] == '/') ++i;
      at_end = i == name.size();
      nd.last_slash = at_end;
    }
    Link link;
    int err;
    if (at_end) {
      if (depth == 0) {
        nd.dir = nd.path.dentry;
        return 0;
      }
      // The last component of a nested symlink body.
      --depth;
      name = std::string_view(nd.stack[depth].data, nd.stack[depth].size);
      i = 0;
      err = WalkComponentInline(nd, 0, &link);
    } else {
      err = WalkComponentInline(nd, 0, &link);
    }
    if (err) return err;
    if (link.follow) {
      nd.stack[depth++] = {name.data() + i, name.size() - i};
      name = link.body;
      i = 0;
      continue;
    }
    if (!CanLookup(w, nd.path.dentry)) {
      if (nd.env.ex)
        nd.env.ex->Fail(Stage::kWalk,
                        fmt::format("{} is not a directory",
                                    w.DisplayPathOf(nd.path, nd.root)));
      return ENOTDIR;
    }
  }
}

[[gnu::noinline]] int LinkPathWalkMemo(Nameidata& nd, std::string_view name, bool* resolved) {
  return LinkPathWalkInline<true>(nd, name, resolved);
}

[[gnu::always_inline]] inline int LookupLastInline(Nameidata& nd, Link* link) {
  if (nd.last_type == LastType::kNorm && nd.last_slash)
    nd.flags |= kLookupFollow | kLookupDirectory;
  return WalkComponentInline(nd, kWalkTrailing, link);
}

}  // namespace

int LinkPathWalk(Nameidata& nd, std::string_view name, bool* resolved) {
  if (nd.env.fast_search == kFastSearchPrefixMemo) [[unlikely]]
    return LinkPathWalkMemo(nd, name, resolved);
  return LinkPathWalkInline(nd, name, resolved);
}

PrefixMemoCounts PrefixMemoStats() { return tls_memo.counts; }



namespace {

// path_lookupat() by the general code, from the start, or resumed at
// component `resume_at` in `at` where the register loop stopped.
[[gnu::noinline]] int FilenameLookupSlow(const WalkEnv& env, const Start& start,
                                         std::string_view name, uint32_t flags, PathPos at,
                                         size_t resume_at, PathPos* out) {
  Nameidata nd(env, flags);
  if (resume_at != kNoResume) {
    nd.path = at;
  } else if (int err = PathInitInline(nd, start, name)) {
    return err;
  }
  std::string_view s = name;
  for (;;) {
    bool resolved = false;
    if (int err = LinkPathWalkInline(nd, s, &resolved, resume_at)) return err;
    resume_at = kNoResume;
    if (resolved) break;
    Link link;
    if (int err = LookupLastInline(nd, &link)) return err;
    if (!link.follow) break;
    s = link.body;
  }
  if ((nd.flags & kLookupDirectory) && !CanLookup(*env.w, nd.path.dentry)) {
    if (env.ex)
      env.ex->Fail(Stage::kWalk, fmt::format("{} is not a directory",
                                             env.w->DisplayPathOf(nd.path, nd.root)));
    return ENOTDIR;
  }
  *out = nd.path;
  return 0;
}

}  // namespace

int FilenameLookup(const WalkEnv& env, const Start& start,
                   std::string_view name, uint32_t flags, PathPos* out) {
  if (int err = CheckNameInline(env, name, flags & kLookupEmpty)) return err;
  // The common case first: a name from the root or the working directory
  // that PlainRun() resolves whole, with no walk state set up. Where it
  // stops, the general code resumes.
  if (env.plain_components && !name.empty() && (name[0] == '/' || !start.has_dirfd)) {
    PathPos at = name[0] == '/' ? env.root : env.cwd;
    size_t i = 0;
    while (i < name.size() && name[i] == '/') ++i;
    if (i < name.size()) {
      const LoopMode mode = ModeFor(flags, true);
      const PlainRunResult r =
          env.fast_search == kFastSearchOn
              ? PlainRunInline<true>(env, name.data(), name.size(), i, at.dentry, mode)
              : PlainRunOther(env, name.data(), name.size(), i, at.dentry, mode);
      AddCounts(env, r.counts);
      if (r.resolved) {
        // Field by field: one 8-byte store built from two 4-byte halves
        // can stall on the load of a spilled one.
        out->mnt = at.mnt;
        out->dentry = r.cur;
        return 0;
      }
      at.dentry = r.cur;
      return FilenameLookupSlow(env, start, name, flags, at, r.i, out);
    }
  }
  return FilenameLookupSlow(env, start, name, flags, {}, kNoResume, out);
}

bool LookupFast(const WalkEnv& env, const Start& start, std::string_view name, uint32_t flags,
                PathPos* out) {
  if (!env.plain_components || name.empty() || (name[0] != '/' && start.has_dirfd)) return false;
  const PathPos at = name[0] == '/' ? env.root : env.cwd;
  size_t i = 0;
  while (i < name.size() && name[i] == '/') ++i;
  if (i == name.size()) return false;
  const LoopMode mode = ModeFor(flags, true);
  const PlainRunResult r =
      env.fast_search == kFastSearchOn
          ? PlainRunInline<true>(env, name.data(), name.size(), i, at.dentry, mode)
          : PlainRunOther(env, name.data(), name.size(), i, at.dentry, mode);
  if (!r.resolved) return false;  // the general code walks it all, and counts it
  AddCounts(env, r.counts);
  out->mnt = at.mnt;
  out->dentry = r.cur;
  return true;
}

int FilenameParentat(const WalkEnv& env, const Start& start,
                     std::string_view name, uint32_t flags, ParentResult* out) {
  if (int err = CheckNameInline(env, name, false)) return err;
  Nameidata nd(env, flags);
  if (int err = PathInitInline(nd, start, name)) return err;
  if (int err = LinkPathWalkInline(nd, name)) return err;
  out->parent = nd.path;
  out->last = nd.last;
  out->last_hash = nd.last_hash;
  out->last_head = nd.last_head;
  out->type = nd.last_type;
  out->trailing_slash = nd.last_slash;
  return 0;
}

}  // namespace pathwarden::walk
