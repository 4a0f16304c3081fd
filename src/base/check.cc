// "Cannot happen" checks (see check.h).

#include "src/base/check.h"

#include <cstdio>
#include <cstdlib>

namespace pathwarden::internal {
namespace {

[[noreturn]] void Abort(const char* what, const char* file, int line) {
  std::fprintf(stderr, "pathwarden: internal error (cannot happen): %s\n  at %s:%d\n", what,
               file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

void InternalErrorSlow(const char* what, int denial, const char* file, int line) {
  FailedCheck& f = failed_check;
  if (f.what == nullptr) {
    f.what = what;
    f.denial = denial;
  }
  if constexpr (!kAbortOnInternal) return;
  PendingInternalError& p = pending_internal_error;
  if (p.speculative) {
    if (p.what == nullptr) {
      p.what = what;
      p.file = file;
      p.line = line;
    }
    return;
  }
  if (deny_on_internal_for_testing > 0) return;
  Abort(what, file, line);
}

int SpeculativeReads::ConfirmSlow(int err) {
  if (deny_on_internal_for_testing > 0) return err;
  const PendingInternalError& p = pending_internal_error;
  Abort(p.what, p.file, p.line);
}

}  // namespace pathwarden::internal
