// "Cannot happen" checks that fail closed.
//
// Where the engine meets a state its invariants exclude (an operation it
// does not know, a dangling ACL id, a file type outside S_IFMT's six), it
// denies rather than guesses: an internal inconsistency never allows. In a
// checking build (the CMake option PATHWARDEN_ABORT_ON_INTERNAL, set by the
// test and sanitizer builds; independent of NDEBUG) it aborts with a
// message instead, so that a test that reaches one fails loudly.
//
// Every build also notes the first failed check of the thread
// (FailedCheck): an evaluation that explains itself turns it into its
// reason, "internal error: <what>", and into a denial whatever the code
// after the check made of it (Decide() in src/api/model.cc).
//
// A test that injects an inconsistency on purpose holds a
// DenyOnInternalForTesting scope: inside it a checking build denies, as a
// normal build does, instead of aborting.
//
// A reader that evaluates optimistically (see docs/architecture.md
// "Concurrency") may see such a state legitimately: a slot freed under it
// (an inode with mode 0), whose answer the sequence check then discards.
// It wraps the evaluation in a SpeculativeReads scope: inside it, a failed
// check is only noted, and Confirm() aborts on it once the sequence check
// says the state was consistent; a retried evaluation drops it.

#ifndef PATHWARDEN_SRC_BASE_CHECK_H_
#define PATHWARDEN_SRC_BASE_CHECK_H_

#include <cerrno>

namespace pathwarden::internal {

#if defined(PATHWARDEN_ABORT_ON_INTERNAL) && PATHWARDEN_ABORT_ON_INTERNAL
inline constexpr bool kAbortOnInternal = true;
#else
inline constexpr bool kAbortOnInternal = false;
#endif

// FailedCheck
//
// This thread's first failed check since ResetFailedCheck(): what failed
// (FailClosed()'s `what`, null when nothing did) and the errno the site
// denies with. Written only by InternalErrorSlow(), in every build.
struct FailedCheck {
  const char* what = nullptr;
  int denial = 0;
};
inline thread_local FailedCheck failed_check;

// ResetFailedCheck()
//
// Forgets the noted check: at the start of an explained evaluation and
// of each of its attempts (Explainer's constructor and Clear()).
inline void ResetFailedCheck() { failed_check.what = nullptr; }

// InternalErrorSlow()
//
// FailClosed()'s out-of-line half: notes the check in FailedCheck; in a
// checking build then aborts with `what` and the site, unless inside a
// SpeculativeReads scope (noted for Confirm()) or a
// DenyOnInternalForTesting scope (denied as a normal build denies).
[[gnu::cold]] void InternalErrorSlow(const char* what, int denial, const char* file, int line);

// FailClosed()
//
// A "cannot happen" check failed: returns `denial` (the caller's errno for
// it, EACCES unless said otherwise) in a normal build; aborts with `what`
// and the call site in a checking build. Either way the check is noted
// (FailedCheck), so that an explained decision says "internal error:
// <what>" and denies even where later code would allow. Called only on
// the failing branch: nothing here runs on a path that does not fail.
// Usage:
//
//   default:
//     return internal::FailClosed("open: unknown file type");
// (The site comes from __builtin_FILE()/__builtin_LINE(): clang 14 has no
// std::source_location with libstdc++ 12.)
inline int FailClosed(const char* what, int denial = EACCES, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  InternalErrorSlow(what, denial, file, line);
  return denial;
}

// DenyOnInternalForTesting
//
// For tests that inject an inconsistency (a dangling id, a torn read, a
// memo entry out of date) and check the denial: while one is alive on
// this thread, a checking build's FailClosed() (and a SpeculativeReads
// scope's Confirm()) denies as a normal build does instead of aborting.
// Read only on the failing path: it costs nothing elsewhere. Scopes nest.
//
// Example:
//   internal::DenyOnInternalForTesting deny;
//   EXPECT_EQ(model.Evaluate(p, Open{...}).err(), EACCES);
inline thread_local int deny_on_internal_for_testing = 0;
class DenyOnInternalForTesting {
 public:
  DenyOnInternalForTesting() { ++deny_on_internal_for_testing; }
  ~DenyOnInternalForTesting() { --deny_on_internal_for_testing; }
  DenyOnInternalForTesting(const DenyOnInternalForTesting&) = delete;
  DenyOnInternalForTesting& operator=(const DenyOnInternalForTesting&) = delete;
};

// SpeculativeReads
//
// Scope of an optimistic evaluation on this thread: a FailClosed() inside
// it is noted, not fatal, until Confirm(). Scopes do not nest.
// This thread's noted failure inside a SpeculativeReads scope.
struct PendingInternalError {
  bool speculative = false;
  const char* what = nullptr;
  const char* file = nullptr;
  int line = 0;
};
inline thread_local PendingInternalError pending_internal_error;

// Costs nothing in a normal build, a few stores to this thread's
// PendingInternalError in a checking build (the scope is entered on every
// evaluation).
class SpeculativeReads {
 public:
  SpeculativeReads() {
    if constexpr (kAbortOnInternal) {
      pending_internal_error.speculative = true;
      pending_internal_error.what = nullptr;
    }
  }
  // What was noted and not confirmed is dropped by the next scope's
  // constructor (outside a scope nothing reads or notes it).
  ~SpeculativeReads() {
    if constexpr (kAbortOnInternal) pending_internal_error.speculative = false;
  }
  SpeculativeReads(const SpeculativeReads&) = delete;
  SpeculativeReads& operator=(const SpeculativeReads&) = delete;

  // Confirm()
  //
  // The reads were consistent (the sequence check passed): returns `err`,
  // the evaluation's result; aborts, in a checking build, if a
  // FailClosed() was noted in the scope (unless a
  // DenyOnInternalForTesting scope is alive: the evaluation then stands,
  // its failed check noted in FailedCheck as in a normal build). `err`
  // passes through the slow path so that nothing else need live across
  // it in the caller's frame.
  [[nodiscard]] int Confirm(int err) const {
    if constexpr (kAbortOnInternal)
      if (pending_internal_error.what != nullptr) [[unlikely]] return ConfirmSlow(err);
    return err;
  }

 private:
  [[gnu::cold]] static int ConfirmSlow(int err);
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_CHECK_H_
