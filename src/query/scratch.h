// A directory the user lets `explain --verify --scratch DIR` change: a
// changing query is run on the kernel there only when it can touch
// nothing outside it, and the tree is put back exactly afterwards
// (names, types, contents, modes, owners, ACLs and other xattrs, access
// and modification times; a ctime cannot be set from userspace), also
// when the process changing it dies (ChangeGuarded()).

#ifndef PATHWARDEN_SRC_QUERY_SCRATCH_H_
#define PATHWARDEN_SRC_QUERY_SCRATCH_H_

#include <sys/stat.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pathwarden/result.h"
#include "src/kernel/guardian.h"
#include "src/query/query.h"

namespace pathwarden::query {

// TreeState
//
// Everything below (and of) a directory that a changing call could
// change, to put it back.
struct TreeState {
  struct Entry {
    std::string rel;  // "" for the directory itself
    struct stat st {};
    std::string link;     // symlink body
    std::string content;  // regular file
    std::vector<std::pair<std::string, std::string>> xattrs;  // sorted
  };
  std::string root;
  std::vector<Entry> entries;  // parents before children
};

// Capture()
//
// Reads without changing access times (O_NOATIME). Errors: a tree too
// large to keep (over 10,000 entries or 64 MiB of contents), a mount point
// inside it, a device node, a file with links outside it.
Result<TreeState, std::string> Capture(const std::string& root);

// Restore()
//
// Puts `before` back: renames and exchanges undone (by inode: an inode
// under a name not its own goes back to its own), names added removed
// (and a name now holding another type of file), names removed made
// again (hard links as links), contents, xattrs, owners, modes, access
// and modification times set. Errors: what could not be put back.
Result<void, std::string> Restore(const TreeState& before);

// Differences()
//
// What differs between two states, ctimes and inode numbers aside ("" when
// nothing): for the check after Restore().
std::string Differences(const TreeState& a, const TreeState& b);

// EncodeJournal() / DecodeJournal()
//
// A state as the bytes of a journal file, and back (for this build on
// this machine: `struct stat` is kept as it is in memory). Errors: bytes
// that are not such a journal.
std::string EncodeJournal(const TreeState& t);
Result<TreeState, std::string> DecodeJournal(std::string_view bytes);

// ScratchGuard
//
// A scratch directory held for a series of changes, each put back
// exactly, however this process ends:
//
//   Open():  an exclusive flock on `<state_dir>/scratch.lock` (one scratch
//            directory changed at a time on the machine, for as long as
//            the guard is open); a journal left there by a holder that
//            died with its guardian put back first (RepairScratch()); a
//            guardian forked (src/kernel/guardian.h: its own session,
//            holding the lock).
//   Change(): Capture(root), written to `<state_dir>/scratch.journal`
//            (0600, renamed into place; not fsync()ed: it is for this
//            process and its guardian dying, not the machine); change();
//            then, here, a Capture() and, where anything differs
//            (Differences(), or a name on another inode), Restore(), a
//            Capture() again and a comparison; the journal deleted when
//            nothing differs.
//   Close(): the guardian woken and waited for; it finds no journal.
//
// Should this process die during a Change() (SIGINT, SIGKILL, the OOM
// killer, a crash), the guardian puts the tree back from the journal
// once this process and its children are gone (the kernel's child is tied
// to it), before it lets go of the lock. Should both die, the next
// Open() or RepairScratch() with the same `state_dir` puts it back from
// the journal first. change() must leave no process of its own that may
// still change the tree once it returns (ProbeHostChanging() waits for
// its child).
//
// One guard serves a session's changing queries (Session::Ask()): a
// guardian per query would cost two forks of this process per query.
// Readers do not take the lock: a model that reads the tree while
// another process has it changed sees the change. So a run calls
// RepairScratch() before it reads the host (explain does), which waits
// for a guard still open; two runs at once on one directory remain
// unsupported.
class ScratchGuard {
 public:
  // Open()
  //
  // `root` is the real path of a directory. Errors: a directory on an
  // overlay (a change there copies its directories up, which changes
  // their link counts: the tree could not be put back exactly), the lock
  // held by this process already, a journal that cannot be put back
  // (with the reason), fork().
  static Result<std::unique_ptr<ScratchGuard>, std::string> Open(
      const std::string& root, const std::string& state_dir = kernel_internal::kStateDir);
  ScratchGuard(const ScratchGuard&) = delete;
  ScratchGuard& operator=(const ScratchGuard&) = delete;
  // Close()s.
  ~ScratchGuard();

  // Change()
  //
  // Returns change()'s value or error; an error when the tree could not
  // be captured or journalled (change() not run), or not put back exactly
  // (change()'s value dropped: fail closed; the journal stays, and every
  // Change() tries it again first and fails while it cannot).
  Result<int, std::string> Change(const std::function<Result<int, std::string>()>& change);

  // Close()
  //
  // Lets the guardian go and the lock with it; Change() fails after.
  void Close();

  const std::string& root() const { return root_; }

 private:
  ScratchGuard(std::string root, std::string journal, int lock)
      : root_(std::move(root)), journal_(std::move(journal)), lock_(lock) {}

  std::string root_;
  std::string journal_;
  int lock_ = -1;
  kernel_internal::Guardian guardian_;
};

// ChangeGuarded()
//
// Runs `change` (which may change the tree at `root`, the real path of a
// directory) and puts the tree back exactly, however this process ends:
// one Change() of a ScratchGuard opened for it and closed after. Errors:
// Open()'s and Change()'s.
Result<int, std::string> ChangeGuarded(
    const std::string& root, const std::function<Result<int, std::string>()>& change,
    const std::string& state_dir = kernel_internal::kStateDir);

// RepairScratch()
//
// Waits for the lock (so for a guard still open, or a guardian at work), then puts back
// from the journal what a holder and its guardian that both died left
// changed, and deletes the journal: whether there was one. A journal
// whose directory is gone or replaced (another inode) is deleted unused.
// Errors: a damaged journal, or a tree not put back exactly (the journal
// stays, and every ChangeGuarded() fails with the reason until it is
// dealt with).
Result<bool, std::string> RepairScratch(const std::string& state_dir = kernel_internal::kStateDir);

// SetAfterChangeHookForTesting()
//
// A function ScratchGuard::Change() calls after change() returns, before
// it puts the tree back, with the guardian's pid (tests kill the process
// there, or read the changed tree); an empty one removes it.
void SetAfterChangeHookForTesting(std::function<void(pid_t guardian)> hook);

// Contained()
//
// Whether query `q` (relative paths from `cwd`) can touch nothing but
// what lies strictly below `root`: every path lexically below it, its
// parent resolving (symlinks followed) below it, and no symlink as the
// last component of a call that would follow it. "" when contained, else
// why not.
std::string Contained(const Query& q, const std::string& root, const std::string& cwd);

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_SCRATCH_H_
