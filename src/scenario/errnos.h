// The errnos Linux returns for each call a scenario step makes: the
// oracle the coverage-guided fuzz targets check every answer of the
// engine against (tests/fuzz/), beside the kernel-confirmed expectations
// of the suites, which must all fall inside it (errnos_test.cc).
//
// Each set (its operation's codec row, op_codec.cc) is the union of what
// the call's man page lists (man-pages 6.x, ERRORS) and what the kernel
// was seen to return for it in this project's suites; it says which answers are possible at all, not which the model
// gives. Errnos no modelled filesystem can produce (EIO, EINTR, ENOMEM,
// EDQUOT, ...) are kept where the man page lists them: the table is about
// the call, not the model.

#ifndef PATHWARDEN_SRC_SCENARIO_ERRNOS_H_
#define PATHWARDEN_SRC_SCENARIO_ERRNOS_H_

#include <string>

#include "pathwarden/request.h"

namespace pathwarden {

// LinuxReturns()
//
// Whether Linux's call for `op` (as the kernel executor makes it,
// src/kernel/step_runner.cc) can fail with `err`; 0 (success) is always
// possible.
bool LinuxReturns(Op op, int err);

// LinuxErrnoList()
//
// The errnos of `op` as names, for messages: "EACCES EBADF ...".
std::string LinuxErrnoList(Op op);

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_SCENARIO_ERRNOS_H_
