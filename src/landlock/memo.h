// Memoized Landlock evaluation. The kernel walks to the root on every
// check; the engine need not. For a domain and a position, the rights each
// layer's rules grant along the whole evaluated walk to the real root (the
// union per layer) decide any simple check at that position:
//
//   layer i denies  request & FsMaskForCheck(i) & ~grants(i)
//
// (FsMaskForCheck(i): what layer i handles, with REFER once it handles
// any filesystem right)
// which is exactly what the walk computes (it stops early only when that
// is already empty). Grants are filled lazily, position by position from
// the top, so a repeated check costs O(1) in the depth; they are valid for
// one World::shape_gen() (renames, freed dentries, mounts change walks).
// Per thread: readers never share (or lock) a memo.

#ifndef PATHWARDEN_SRC_LANDLOCK_MEMO_H_
#define PATHWARDEN_SRC_LANDLOCK_MEMO_H_

#include <array>
#include <cstdint>

#include "src/landlock/domain.h"
#include "src/vfs/world.h"

namespace pathwarden::landlock {

using LayerGrants = std::array<AccessMask, kMaxLayers>;

// MemoGrants()
//
// The per-layer grants of the walk from `pos`: d.num_layers() of them,
// in this thread's memo, valid until this thread's next call into it.
const AccessMask* MemoGrants(const vfs::World& w, const Domain& d, vfs::PathPos pos);

// MemoDeny()
//
// Per layer, what `request` still lacks with grants `g` (MemoGrants());
// the OR of all is 0 when the access is allowed. With `per_layer`, its
// first d.num_layers() entries are each layer's lack.
inline AccessMask MemoDeny(const Domain& d, const AccessMask* g, AccessMask request,
                           LayerGrants* per_layer) {
  AccessMask any = 0;
  for (int i = 0; i < d.num_layers(); ++i) {
    const AccessMask deny = request & d.FsMaskForCheck(i) & ~g[i];
    if (per_layer) (*per_layer)[i] = deny;
    any |= deny;
  }
  return any;
}

// MemoClearThread()
//
// Drops this thread's memos: after an evaluation that raced a write, what
// it memoized may mix two states.
void MemoClearThread();

// MemoSetForTesting()
//
// Makes this thread's memo entry for `pos` under `d` say `grants`
// (filling the memo up to it first): an entry out of date, for the tests
// that check an explained evaluation fails closed on one
// (src/engine/fail_closed_test.cc). A verdict-only evaluation trusts the
// memo: it is the evaluation.
void MemoSetForTesting(const vfs::World& w, const Domain& d, vfs::PathPos pos,
                       const LayerGrants& grants);

// MemoEntries()
//
// This thread's memoized positions, all domains (for tests).
size_t MemoEntries();

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_MEMO_H_
