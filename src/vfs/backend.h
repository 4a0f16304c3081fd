// Backends: where a world's objects come from when it does not hold them
// all (the kernel's inode operations: ->lookup on a dcache miss, getattr,
// get_acl, readlink, iterate_shared for a listing).
//
// The tmpfs model is the backend of itself: its directories are complete,
// a lookup that finds nothing is ENOENT, and nothing is ever asked. A
// backend that fills on demand (the live host, src/vfs/host.h) marks the
// directories it has not listed kInodeIncomplete.
//
// The contract between a reader that misses and the fill (see
// docs/architecture.md, "Filling on demand"): readers never write. A
// reader whose lookup in an incomplete directory finds neither a dentry
// nor a negative entry stops with kErrNeedFill and leaves what it needs in
// PendingFill() (thread-local); the caller, outside every read section,
// takes the world's single writer role, asks the backend to fill that one
// name (or list that one directory) under a WriteGuard, and evaluates
// again from the start. An answer therefore comes from one consistent
// state of the world, and readers keep never blocking readers: a fill is
// a write like any other.

#ifndef PATHWARDEN_SRC_VFS_BACKEND_H_
#define PATHWARDEN_SRC_VFS_BACKEND_H_

#include <string>
#include <string_view>

#include "pathwarden/result.h"
#include "src/vfs/world.h"

namespace pathwarden::vfs {

// Errors no system call returns (above MAX_ERRNO, 4095), carried through
// the operations like any errno and turned into a decision by the caller.
// Neither is ever "allowed".
//
// kErrNeedFill: the answer depends on an object the world has not filled
// yet (PendingFill() says which); fill it and evaluate again.
inline constexpr int kErrNeedFill = 0x10001;
// kErrUnknown: what decides is outside the model (PendingFill().why).
inline constexpr int kErrUnknown = 0x10002;

// Pending
//
// What the last evaluation on this thread stopped for.
struct Pending {
  enum class Kind { kNothing, kLookup, kList } kind = Kind::kNothing;
  PathPos dir;       // the directory to fill (kLookup, kList)
  std::string name;  // the name to look up (kLookup)
  std::string why;   // kErrUnknown: the reason, for people, or
  InodeId opaque = kNone;  // the opaque inode whose reason the backend has
};

// PendingFill()
//
// This thread's Pending. Readers set it just before returning
// kErrNeedFill or kErrUnknown.
Pending& PendingFill();

// NeedLookup() / NeedList() / Unknown()
//
// Record what is pending and return the error to propagate.
int NeedLookup(PathPos dir, std::string_view name);
int NeedList(PathPos dir);
int Unknown(std::string why);
// UnknownAt(): unknown because of opaque inode `ino`. Readers call this:
// the reason is the backend's, read later by the writer (ReasonOf()).
int UnknownAt(InodeId ino);

// Absent()
//
// A lookup of `name` in `dir` found nothing: 0 when that means ENOENT
// (World::KnownAbsent()), else kErrNeedFill, or kErrUnknown in an opaque
// directory.
int Absent(const World& w, PathPos dir, std::string_view name);

// NeedComplete()
//
// Directory `dir` must be known to the last name (empty or not): 0 when it
// is, else kErrNeedFill (a listing) or kErrUnknown.
int NeedComplete(const World& w, PathPos dir);

// NeedEmptyKnown()
//
// What rmdir and a rename over a directory ask before counting the
// names of directory `dir`: NeedComplete() when it looks empty (names not
// filled yet), and also when it does not, where the backend's names may
// have gone since they were read (Backend::NamesMayGo()).
int NeedEmptyKnown(const World& w, PathPos dir);

// UnknownWhy()
//
// Why inode `ino`, opaque, cannot be decided (the backend's words). The
// writer only (the backend's tables are the writer's).
std::string UnknownWhy(const World& w, InodeId ino);

// Backend
//
// The single writer calls these, inside a World::WriteGuard.
class Backend {
 public:
  virtual ~Backend() = default;

  // Lookup()
  //
  // Fills `name` in incomplete directory `dir`: a dentry for what the
  // source has, a negative entry for what it has not, or the directory
  // marked opaque when the source cannot say. Errors: a message when the
  // world cannot take the answer (the caller answers unknown with it).
  virtual Result<void, std::string> Lookup(World& w, PathPos dir, std::string_view name) = 0;

  // List()
  //
  // Fills every name of `dir` and marks it complete (rmdir and rename
  // need to know a directory is empty).
  virtual Result<void, std::string> List(World& w, PathPos dir) = 0;

  // WillMove()
  //
  // Incomplete directory dentry `d` is about to get another name or
  // parent in the model: the backend keeps where its source is.
  virtual void WillMove(World& w, DentryId d) = 0;

  // WhyOpaque()
  //
  // Why an opaque inode of this backend cannot be decided.
  virtual std::string WhyOpaque(const World& w, InodeId ino) const = 0;

  // Layer()
  //
  // For dentry `d` of a stacking filesystem (overlayfs), the layers that
  // hold its inode, in words ("upper", "lower 2", "upper + lower 1"); ""
  // when not known or not stacked. For explanations only: found when
  // asked, never on a fill.
  virtual std::string Layer(const World&, DentryId) const { return {}; }

  // NamesMayGo()
  //
  // Whether a name filled from the source may have gone from it since
  // (a source read again as it changes): a listing then also drops the
  // names it no longer has.
  virtual bool NamesMayGo() const { return false; }

  // Forgotten()
  //
  // Inode `ino` was freed (its id may be reused).
  virtual void Forgotten(InodeId ino) = 0;
};

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_BACKEND_H_
