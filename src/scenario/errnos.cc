#include "src/scenario/errnos.h"

#include "pathwarden/errno.h"
#include "src/scenario/op_codec.h"

namespace pathwarden {

using scenario_internal::CodecOf;
using scenario_internal::ErrnoSet;

bool LinuxReturns(Op op, int err) { return err == 0 || CodecOf(op).errnos.Has(err); }

std::string LinuxErrnoList(Op op) {
  const ErrnoSet& s = CodecOf(op).errnos;
  std::string out;
  for (int e = 1; e < ErrnoSet::kEnd; ++e) {
    if (!s.Has(e)) continue;
    if (!out.empty()) out += ' ';
    out += ErrnoName(e);
  }
  return out;
}

}  // namespace pathwarden
