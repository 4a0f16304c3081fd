// Memoized Landlock evaluation (see memo.h).

#include "src/landlock/memo.h"

#include <unordered_map>
#include <vector>

#include "src/landlock/fs_walk.h"

namespace pathwarden::landlock {
namespace {

// One domain's memo: positions to an index into `grants` (num_layers
// entries each).
struct DomainMemo {
  uint64_t gen = 0;
  int layers = 0;
  std::unordered_map<uint64_t, uint32_t> index;
  std::vector<AccessMask> grants;
};

struct ThreadMemo {
  std::unordered_map<uint64_t, DomainMemo> by_domain;
};

ThreadMemo& Memo() {
  thread_local ThreadMemo memo;
  return memo;
}

uint64_t Key(vfs::PathPos p) { return uint64_t{p.mnt} << 32 | p.dentry; }

// The next position the walk evaluates after `p`, as the jump_up logic of
// is_access_to_paths_allowed() moves: through mount roots to their
// mountpoints (not evaluated), then to the parent, or from a disconnected
// filesystem root to the mount's root. False at the real root.
bool NextEvaluated(const vfs::World& w, vfs::PathPos* p) {
  if (p->dentry == w.mount(p->mnt).root && !JumpUp(w, p)) return false;
  const vfs::DentryId parent = w.dentry(p->dentry).parent;
  p->dentry = parent == p->dentry ? w.mount(p->mnt).root.get() : parent;
  return true;
}

}  // namespace

LayerGrants MemoGrants(const vfs::World& w, const Domain& d, vfs::PathPos pos) {
  ThreadMemo& memo = Memo();
  // Domains come and go (a fuzzer makes thousands): bound the thread's
  // memos by dropping them all now and then.
  if (memo.by_domain.size() > 64 && !memo.by_domain.contains(d.id())) memo.by_domain.clear();
  DomainMemo& dm = memo.by_domain[d.id()];
  const uint64_t gen = w.shape_gen();
  if (dm.gen != gen) {
    dm.gen = gen;
    dm.layers = d.num_layers();
    dm.index.clear();
    dm.grants.clear();
  }
  const int n = dm.layers;
  LayerGrants out{};
  if (auto it = dm.index.find(Key(pos)); it != dm.index.end()) {
    for (int i = 0; i < n; ++i) out[i] = dm.grants[it->second + i];
    return out;
  }
  // Climb to the first memoized position (or past the root), then fill
  // downwards: grants(p) = rule(p) | grants(next(p)).
  thread_local std::vector<vfs::PathPos> chain;
  chain.clear();
  int64_t base = -1;
  vfs::PathPos cur = pos;
  const uint64_t limit = uint64_t{w.dentry_end()} + w.mount_end() + 2;
  for (uint64_t steps = 0; steps < limit; ++steps) {
    if (auto it = dm.index.find(Key(cur)); it != dm.index.end()) {
      base = it->second;
      break;
    }
    chain.push_back(cur);
    if (!NextEvaluated(w, &cur)) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const uint32_t off = static_cast<uint32_t>(dm.grants.size());
    for (int i = 0; i < n; ++i) dm.grants.push_back(base >= 0 ? dm.grants[base + i] : 0);
    for (const LayerAccess& l : FindRule(w, d, it->dentry)) dm.grants[off + l.level - 1] |= l.access;
    dm.index.emplace(Key(*it), off);
    base = off;
  }
  if (base >= 0)
    for (int i = 0; i < n; ++i) out[i] = dm.grants[base + i];
  return out;
}

void MemoClearThread() { Memo().by_domain.clear(); }

void MemoSetForTesting(const vfs::World& w, const Domain& d, vfs::PathPos pos,
                       const LayerGrants& grants) {
  (void)MemoGrants(w, d, pos);
  DomainMemo& dm = Memo().by_domain[d.id()];
  const uint32_t off = dm.index.at(Key(pos));
  for (int i = 0; i < dm.layers; ++i) dm.grants[off + i] = grants[i];
}

size_t MemoEntries() {
  size_t n = 0;
  for (const auto& [id, dm] : Memo().by_domain) n += dm.index.size();
  return n;
}

}  // namespace pathwarden::landlock
