// "Cannot happen" checks that fail closed.
//
// Where the engine meets a state its invariants exclude (an operation it
// does not know, a dangling ACL id, a file type outside S_IFMT's six), it
// denies rather than guesses: an internal inconsistency never allows. In a
// checking build (the CMake option PATHWARDEN_ABORT_ON_INTERNAL, set by the
// test and sanitizer builds; independent of NDEBUG) it aborts with a
// message instead, so that a test that reaches one fails loudly.
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

// InternalErrorSlow()
//
// The checking build's half of FailClosed(): aborts with `what` and the
// site, or notes them inside a SpeculativeReads scope.
void InternalErrorSlow(const char* what, const char* file, int line);

// FailClosed()
//
// A "cannot happen" check failed: returns `denial` (the caller's errno for
// it, EACCES unless said otherwise) in a normal build; aborts with `what`
// and the call site in a checking build. Usage:
//
//   default:
//     return internal::FailClosed("open: unknown file type");
// (The site comes from __builtin_FILE()/__builtin_LINE(): clang 14 has no
// std::source_location with libstdc++ 12.)
inline int FailClosed(const char* what, int denial = EACCES, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  if constexpr (kAbortOnInternal) InternalErrorSlow(what, file, line);
  return denial;
}

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
  // Drops what was noted and not confirmed.
  ~SpeculativeReads() {
    if constexpr (kAbortOnInternal) {
      pending_internal_error.speculative = false;
      pending_internal_error.what = nullptr;
    }
  }
  SpeculativeReads(const SpeculativeReads&) = delete;
  SpeculativeReads& operator=(const SpeculativeReads&) = delete;

  // Confirm()
  //
  // The reads were consistent (the sequence check passed): aborts, in a
  // checking build, if a FailClosed() was noted in the scope.
  void Confirm() const {
    if constexpr (kAbortOnInternal)
      if (pending_internal_error.what != nullptr) ConfirmSlow();
  }

 private:
  [[noreturn]] static void ConfirmSlow();
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_CHECK_H_
