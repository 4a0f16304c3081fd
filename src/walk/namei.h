// The path walk: one component at a time, search permission on every
// directory, symlinks, "." and "..", mounts.
// Linux: fs/namei.c (path_init, link_path_walk, walk_component, step_into,
// pick_link, handle_dots, follow_dotdot, lookup_last, path_lookupat,
// path_parentat), include/linux/namei.h

#ifndef PATHWARDEN_SRC_WALK_NAMEI_H_
#define PATHWARDEN_SRC_WALK_NAMEI_H_

#include <cstdint>
#include <string_view>

#include "pathwarden/cred.h"
#include "src/base/engine_options.h"
#include "src/explain/explain.h"
#include "src/vfs/world.h"

namespace pathwarden::walk {

// LOOKUP_* flags the model uses.
inline constexpr uint32_t kLookupFollow = 0x0001;
inline constexpr uint32_t kLookupDirectory = 0x0002;
inline constexpr uint32_t kLookupEmpty = 0x4000;  // empty name allowed

// walk_component() flags.
inline constexpr int kWalkTrailing = 2;
inline constexpr int kWalkNofollow = 4;

inline constexpr int kMaxSymlinks = 40;  // MAXSYMLINKS
inline constexpr size_t kPathMax = 4096;
inline constexpr size_t kNameMax = 255;

enum class LastType : uint8_t { kNorm, kRoot, kDot, kDotDot };

// WalkEnv::fast_search
//
// Off, on, or on with this thread's prefix memo (below): a walk of many
// queries (a query::Session) resumes the register loop where the last
// walk's shared prefix ended. One byte with the fast search check, so that
// a walk without the memo tests nothing more than before.
inline constexpr uint8_t kFastSearchOff = 0;
inline constexpr uint8_t kFastSearchOn = 1;
inline constexpr uint8_t kFastSearchPrefixMemo = 2;

// WalkEnv
//
// Who walks and how: the world, the caller's credentials, its root and
// working directory, the options, and where to count and explain.
struct WalkEnv {
  const vfs::World* w = nullptr;
  const Cred* cred = nullptr;
  vfs::PathPos root;
  vfs::PathPos cwd;
  uint8_t fast_search = kFastSearchOn;  // kFastSearch*
  // The register loop for plain components (PlainComponents()); off only
  // to check it against the general code.
  bool plain_components = true;
  int protected_symlinks = 0;
  EngineStats* stats = nullptr;
  Explainer* ex = nullptr;
};

// tls_sysctl_decided
//
// Set on this thread when a check reached the point where a protected_*
// sysctl decides its outcome (every other condition of its refusal
// holds: may_follow_link(), may_linkat(), may_create_in_sticky()). A
// model that revalidates against the host reads the sysctls only then,
// and evaluates again if they changed. Cleared by that caller.
inline thread_local bool tls_sysctl_decided = false;

// The prefix memo
//
// The queries of a batch share directory prefixes (/usr/share/doc/...).
// With kFastSearchPrefixMemo, the register loop's run from where a name
// begins (PlainRun(), the fast search check's kind: every directory one
// anyone may search, so the run is the same for every caller) records the
// directory it reached at the end of each component; the next walk from
// the same place compares its name with the recorded one and resumes the
// run at the longest recorded prefix it shares, as the run itself would
// have reached it (the counts of the components skipped included). It
// decides nothing: where the run stops, the general code takes over as
// without the memo.
//
// Per thread, one name's prefixes, valid for one world
// (World::instance_id()), one read section (tls_prefix_memo_seq: the
// sequence count its reader began at, which any write moves; odd: no read
// section, no memo), one World::shape_gen() and one starting directory and
// offset. So entries recorded by an evaluation that raced a write are
// never used: that read section's count never comes back. A recorded
// directory that is not one the run could stand on is an inconsistency:
// the run starts over without the memo.
//
// tls_prefix_memo_seq is set by the engine's evaluation with the memo
// (Engine::EvaluateWithPrefixMemo()) for each attempt of its read section.
inline thread_local uint64_t tls_prefix_memo_seq = 1;

// PrefixMemoStats()
//
// This thread's prefix memo: walks that resumed from it, and components
// they skipped (for tests).
struct PrefixMemoCounts {
  uint64_t hits = 0;
  uint64_t skipped = 0;
};
PrefixMemoCounts PrefixMemoStats();

// Start
//
// Where a relative name begins: the working directory (no dirfd), or an
// open file's path. `bad_fd` when the dirfd names no open file (EBADF, but
// only if the name is relative: an absolute name ignores the dirfd).
struct Start {
  bool has_dirfd = false;
  bool bad_fd = false;
  vfs::PathPos pos;
};

// Link
//
// What walk_component() asks the loop to do next: nothing, or walk a
// symlink body.
struct Link {
  bool follow = false;
  std::string_view body;
};

// Nameidata
//
// The state of one walk (struct nameidata).
class Nameidata {
 public:
  Nameidata(const WalkEnv& e, uint32_t f) : env(e), root(e.root), flags(f) {}

  const WalkEnv& env;
  vfs::PathPos path;
  vfs::PathPos root;
  uint32_t flags;
  std::string_view last;
  uint32_t last_hash = 0;  // internal::HashName(last)
  uint64_t last_head = 0;  // internal::HeadOf(last)
  LastType last_type = LastType::kRoot;
  bool last_slash = false;  // trailing slashes after `last`
  // The directory holding the last component (kNone when the path is
  // only slashes: no hardening check applies), read only by the
  // protected_* checks that need its mode and owner.
  vfs::DentryId dir = vfs::kNone;
  uint32_t dir_mode() const { return dir == vfs::kNone ? 0u : env.w->inode_at(dir).mode.get(); }
  uint32_t dir_uid() const { return dir == vfs::kNone ? 0u : env.w->inode_at(dir).uid.get(); }
  int total_link_count = 0;
  // What is left of each path a symlink interrupted; written before read,
  // and trivially constructed (a walk needs no 656-byte clearing).
  struct Pending {
    const char* data;
    size_t size;
  };
  Pending stack[kMaxSymlinks + 1];
};

// CheckName()
//
// getname(): ENAMETOOLONG for 4096 bytes or more, ENOENT for an empty name
// unless `allow_empty`.
int CheckName(const WalkEnv& env, std::string_view name, bool allow_empty);

// PathInit()
//
// Sets nd.path to the root (absolute name) or the start (relative);
// EBADF for a bad dirfd, ENOTDIR for a dirfd that is not a directory when
// the name is not empty. No permission check here.
int PathInit(Nameidata& nd, const Start& start, std::string_view name);

// LinkPathWalk()
//
// Walks every component but the last; sets nd.last, nd.last_type,
// nd.last_slash and nd.dir.
//
// With `resolved` (a caller that looks the last component up as
// lookup_last() or open_last_lookups() without O_CREAT do: lookup_fast(),
// then step_into()), the register loop may take the last component of
// `name` too, where that lookup would find nothing else to do (a normal
// name without a trailing slash, cached, passing the step rules of
// nd.flags: not a symlink to follow, nothing mounted on it): *resolved
// says so, and nd.path is the result (nd.last and its fields are not
// set).
int LinkPathWalk(Nameidata& nd, std::string_view name, bool* resolved = nullptr);

// HandleDots() / StepInto()
//
// "." and ".." (handle_dots()); moving onto a found child, through the
// mounts on it, following it when it is a symlink to follow (step_into()).
int HandleDots(Nameidata& nd, LastType type);
int StepInto(Nameidata& nd, int wflags, vfs::DentryId child, Link* link);

// The walk's rules
//
// Every test the walk makes of a dentry's flags or of a component's name,
// written once. The general code acts on each (climbs the mounts, picks the
// link, refuses with ENOTDIR); the register loop (namei.cc) takes a
// component only where every rule lets the general code do nothing but
// move on, and hands it off otherwise. A new rule is one constant here and
// one term of StepRuleOf() or LoopDirRule() in namei.cc: the loop and its
// one-step fallback both read them from there.

// FlagRule
//
// A test of a dentry's flags: passes when (flags & mask) == want. Rules
// over disjoint bits combine with `&` into one mask and compare.
struct FlagRule {
  uint32_t mask = 0;
  uint32_t want = 0;
  constexpr bool Passes(uint32_t flags) const { return (flags & mask) == want; }
  friend constexpr FlagRule operator&(FlagRule a, FlagRule b) {
    return {a.mask | b.mask, a.want | b.want};
  }
};

// Nothing mounted on it, or handle_mounts() climbs (kNotMounted); a
// directory, d_can_lookup() (kIsDirectory); not a symlink, which
// step_into() may pick (kNotSymlink); a directory not removed, in which
// lookup_fast() can find something (kNotDeadDir); a directory anyone may
// search, which may_lookup() need not ask (kSearchableByAll).
inline constexpr FlagRule kNotMounted{~0u << vfs::kDentryMountShift, 0};
inline constexpr FlagRule kIsDirectory{vfs::kDentryDir, vfs::kDentryDir};
inline constexpr FlagRule kNotSymlink{vfs::kDentrySymlink, 0};
inline constexpr FlagRule kNotDeadDir{vfs::kDentryDeadDir, 0};
inline constexpr FlagRule kSearchableByAll{vfs::kDentryFastSearch, vfs::kDentryFastSearch};
static_assert((kNotMounted.mask & kIsDirectory.mask) == 0 &&
                  (kNotMounted.mask & kNotSymlink.mask) == 0 &&
                  (kIsDirectory.mask & kNotSymlink.mask) == 0 &&
                  (kNotDeadDir.mask & kSearchableByAll.mask) == 0,
              "rules that combine must test disjoint bits");

// NameTooLong()
//
// A component longer than NAME_MAX: lookup_fast() refuses it.
constexpr bool NameTooLong(size_t len) { return len > kNameMax; }

// TraverseMounts()
//
// Moves to the root of the top-most mount on `p` (handle_mounts()). Most
// dentries have none: that test is inline, the climb is not.
void TraverseMountsSlow(const vfs::World& w, vfs::PathPos* p);
inline void TraverseMounts(const vfs::World& w, vfs::PathPos* p) {
  if (!kNotMounted.Passes(w.dentry(p->dentry).flags)) TraverseMountsSlow(w, p);
}

// CanLookup()
//
// d_can_lookup(): a directory.
inline bool CanLookup(const vfs::World& w, vfs::DentryId d) {
  return kIsDirectory.Passes(w.dentry(d).flags);
}

// FilenameLookup()
//
// path_lookupat(): resolves `name` to a position. `flags` of kLookup*.
int FilenameLookup(const WalkEnv& env, const Start& start,
                   std::string_view name, uint32_t flags, vfs::PathPos* out);

// LookupFast()
//
// FilenameLookup()'s common case alone: a name from the root or the
// working directory that the register loop resolves whole, the last
// component as lookup_last() takes it under `flags`. True with *out set
// (and the components counted); false where the general code must walk,
// having decided and counted nothing. For a caller whose last step is
// lookup_last()'s or like it (open_last_lookups() without O_CREAT).
bool LookupFast(const WalkEnv& env, const Start& start, std::string_view name, uint32_t flags,
                vfs::PathPos* out);

// ParentResult / FilenameParentat()
//
// path_parentat(): resolves all but the last component.
struct ParentResult {
  vfs::PathPos parent;
  std::string_view last;
  uint32_t last_hash = 0;  // internal::HashName(last)
  uint64_t last_head = 0;  // internal::HeadOf(last)
  LastType type = LastType::kRoot;
  bool trailing_slash = false;
};
int FilenameParentat(const WalkEnv& env, const Start& start,
                     std::string_view name, uint32_t flags, ParentResult* out);

}  // namespace pathwarden::walk

#endif  // PATHWARDEN_SRC_WALK_NAMEI_H_
