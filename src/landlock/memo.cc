// Memoized Landlock evaluation (see memo.h).

#include "src/landlock/memo.h"

#include <unordered_map>
#include <vector>

#include "src/landlock/fs_walk.h"

namespace pathwarden::landlock {
namespace {

// One domain's memo: an open-addressing table (linear probing, at most
// half full) from positions to their grants. A batch asks about
// thousands of positions, each once a pass: a lookup is one slot, one
// cache line, where a node-based map took a division, a bucket and a
// node (a tenth of a batch query's time). Up to kInline layers keep their
// grants in the slot; a deeper domain keeps an offset into `grants`
// (layers entries each).
constexpr int kInline = 2;
constexpr uint64_t kEmpty = ~uint64_t{0};  // no position: dentry ids fit in 32 bits

struct Slot {
  uint64_t key = kEmpty;
  AccessMask g[kInline] = {};
};
static_assert(sizeof(Slot) == 16);

struct DomainMemo {
  uint64_t gen = 0;
  int layers = 0;
  uint32_t used = 0;
  uint32_t shift = 64;    // the hash's top bits index `slots`
  std::vector<Slot> slots;  // empty, or a power of two
  std::vector<AccessMask> grants;

  static uint32_t Hash(uint64_t key, uint32_t shift) {
    return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15u) >> shift);
  }

  const Slot* Find(uint64_t key) const {
    if (slots.empty()) return nullptr;
    const uint32_t mask = static_cast<uint32_t>(slots.size() - 1);
    for (uint32_t i = Hash(key, shift);; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.key == key) return &s;
      if (s.key == kEmpty) return nullptr;
    }
  }

  // The grants a slot holds: layers of them.
  const AccessMask* Grants(const Slot& s) const {
    return layers <= kInline ? s.g : grants.data() + s.g[0];
  }
  void Read(const Slot& s, AccessMask* out) const {
    const AccessMask* g = Grants(s);
    for (int i = 0; i < layers; ++i) out[i] = g[i];
  }

  void Place(const Slot& from) {
    const uint32_t mask = static_cast<uint32_t>(slots.size() - 1);
    uint32_t i = Hash(from.key, shift);
    while (slots[i].key != kEmpty) i = (i + 1) & mask;
    slots[i] = from;
  }

  // Adds `key` (not present) with grants g[0, layers).
  void Insert(uint64_t key, const AccessMask* g) {
    if (2 * (used + 1) > slots.size()) {
      std::vector<Slot> old = std::move(slots);
      const size_t n = old.empty() ? 1024 : old.size() * 2;
      slots.assign(n, Slot{});
      shift = 64 - static_cast<uint32_t>(__builtin_ctzll(n));
      for (const Slot& s : old)
        if (s.key != kEmpty) Place(s);
    }
    Slot s;
    s.key = key;
    if (layers <= kInline) {
      for (int i = 0; i < layers; ++i) s.g[i] = g[i];
    } else {
      s.g[0] = static_cast<AccessMask>(grants.size());
      grants.insert(grants.end(), g, g + layers);
    }
    Place(s);
    ++used;
  }

  void Reset(uint64_t new_gen, int new_layers) {
    gen = new_gen;
    layers = new_layers;
    used = 0;
    shift = 64;
    slots.clear();
    grants.clear();
  }
};

struct ThreadMemo {
  std::unordered_map<uint64_t, DomainMemo> by_domain;
  std::vector<vfs::PathPos> chain;  // MemoGrants()'s climb
};

ThreadMemo& Memo() {
  thread_local ThreadMemo memo;
  return memo;
}

// The domain asked last on this thread (a session asks as one process)
// and its memo: found without the map, and without the guard of a
// thread_local with a constructor. Elements of the map stay where they
// are until it is cleared, which clears these.
constinit thread_local uint64_t tls_last_id = 0;
constinit thread_local DomainMemo* tls_last = nullptr;

void ClearMemo(ThreadMemo& memo) {
  memo.by_domain.clear();
  tls_last = nullptr;
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

[[gnu::noinline]] DomainMemo& MemoOfSlow(const Domain& d) {
  ThreadMemo& memo = Memo();
  // Domains come and go (a fuzzer makes thousands): bound the thread's
  // memos by dropping them all now and then.
  if (memo.by_domain.size() > 64 && !memo.by_domain.contains(d.id())) ClearMemo(memo);
  DomainMemo& dm = memo.by_domain[d.id()];
  tls_last_id = d.id();
  tls_last = &dm;
  return dm;
}

DomainMemo& MemoOf(const Domain& d) {
  if (tls_last != nullptr && tls_last_id == d.id()) [[likely]] return *tls_last;
  return MemoOfSlow(d);
}

// A position not memoized: climb to the first memoized position (or past
// the root), then fill downwards: grants(p) = rule(p) | grants(next(p)).
[[gnu::noinline]] const AccessMask* Fill(const vfs::World& w, const Domain& d, DomainMemo& dm,
                                         vfs::PathPos pos) {
  LayerGrants acc{};
  std::vector<vfs::PathPos>& chain = Memo().chain;
  chain.clear();
  vfs::PathPos cur = pos;
  const uint64_t limit = uint64_t{w.dentry_end()} + w.mount_end() + 2;
  for (uint64_t steps = 0; steps < limit; ++steps) {
    if (const Slot* s = dm.Find(Key(cur))) {
      dm.Read(*s, acc.data());
      break;
    }
    chain.push_back(cur);
    if (!NextEvaluated(w, &cur)) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const LayerAccess& l : FindRule(w, d, it->dentry)) acc[l.level - 1] |= l.access;
    dm.Insert(Key(*it), acc.data());
  }
  return dm.Grants(*dm.Find(Key(pos)));
}

}  // namespace

const AccessMask* MemoGrants(const vfs::World& w, const Domain& d, vfs::PathPos pos) {
  DomainMemo& dm = MemoOf(d);
  const uint64_t gen = w.shape_gen();
  if (dm.gen != gen || dm.layers != d.num_layers()) [[unlikely]]
    dm.Reset(gen, d.num_layers());
  if (const Slot* s = dm.Find(Key(pos))) [[likely]] return dm.Grants(*s);
  return Fill(w, d, dm, pos);
}

void MemoClearThread() { ClearMemo(Memo()); }

void MemoSetForTesting(const vfs::World& w, const Domain& d, vfs::PathPos pos,
                       const LayerGrants& grants) {
  (void)MemoGrants(w, d, pos);
  DomainMemo& dm = MemoOf(d);
  AccessMask* g = const_cast<AccessMask*>(dm.Grants(*dm.Find(Key(pos))));
  for (int i = 0; i < dm.layers; ++i) g[i] = grants[i];
}

size_t MemoEntries() {
  size_t n = 0;
  for (const auto& [id, dm] : Memo().by_domain) n += dm.used;
  return n;
}

}  // namespace pathwarden::landlock
