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

void InternalErrorSlow(const char* what, const char* file, int line) {
  PendingInternalError& p = pending_internal_error;
  if (!p.speculative) Abort(what, file, line);
  if (p.what == nullptr) {
    p.what = what;
    p.file = file;
    p.line = line;
  }
}

void SpeculativeReads::ConfirmSlow() {
  const PendingInternalError& p = pending_internal_error;
  Abort(p.what, p.file, p.line);
}

}  // namespace pathwarden::internal
