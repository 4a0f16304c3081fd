// Landlock's filesystem check: the walk from an object up to the real root
// unmasking the layers' rights with the rules it meets, and the refer
// algorithm for rename and link. Templates over the layer-mask layout
// (ByLayer or ByAccess, see layer_masks.h); SimpleWalk() is the general
// walk's single-request, untraced case as a tight loop.
// Linux: security/landlock/fs.c @6.18 is_access_to_paths_allowed(),
// collect_domain_accesses(), current_check_refer_path(), no_more_access(),
// find_rule(), get_mode_access(), maybe_remove()

#ifndef PATHWARDEN_SRC_LANDLOCK_FS_WALK_H_
#define PATHWARDEN_SRC_LANDLOCK_FS_WALK_H_

#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <vector>

#include "src/landlock/domain.h"
#include "src/landlock/layer_masks.h"
#include "src/vfs/world.h"

namespace pathwarden::landlock {

// Grant
//
// A rule that cleared rights of a layer during a walk (for explanations).
struct Grant {
  int level;  // 1-based
  AccessMask rights;
  vfs::PathPos where;
  uint32_t object;
};

// FsTrace
//
// Where the walk went and which rules granted what, when explaining.
struct FsTrace {
  std::vector<Grant> grants;
  vfs::PathPos start;
  vfs::PathPos end;  // the last position evaluated
};

// GetModeAccess()
//
// The make_* right for creating an inode of `mode`'s type.
inline AccessMask GetModeAccess(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFLNK: return kFsMakeSym;
    case S_IFDIR: return kFsMakeDir;
    case S_IFCHR: return kFsMakeChar;
    case S_IFBLK: return kFsMakeBlock;
    case S_IFIFO: return kFsMakeFifo;
    case S_IFSOCK: return kFsMakeSock;
    default: return kFsMakeReg;  // S_IFREG, 0 and anything else
  }
}

// ObjectOfInode()
//
// The Landlock object of the inode of `dentry` (0 when none).
inline uint32_t ObjectOfInode(const vfs::World& w, vfs::DentryId dentry) {
  const vfs::InodeId ino = w.inode_of(dentry);
  return ino == vfs::kNone ? 0 : w.inode(ino).landlock_object.get();
}

// FindRule()
//
// The rule of `d` on the inode of `dentry` (its Landlock object).
inline std::span<const LayerAccess> FindRule(const vfs::World& w, const Domain& d,
                                             vfs::DentryId dentry) {
  return d.FindFsRule(ObjectOfInode(w, dentry));
}

// JumpUp()
//
// jump_up of is_access_to_paths_allowed(): from a mount's root to where
// it is mounted, past mount points that are themselves mount roots (which
// are not evaluated). False at the real root. Bounded: a reader racing
// the writer could see a cycle, and stopping early denies.
inline bool JumpUp(const vfs::World& w, vfs::PathPos* walker) {
  for (uint32_t guard = 0; guard <= w.mount_end(); ++guard) {
    const vfs::Mount& mnt = w.mount(walker->mnt);
    if (walker->dentry != mnt.root) return true;
    if (mnt.parent == vfs::kNone) return false;
    *walker = {mnt.parent, mnt.mountpoint};
  }
  return false;
}

namespace fs_internal {

template <class M>
bool UnmaskTraced(M* m, std::span<const LayerAccess> rule, FsTrace* t,
                  vfs::PathPos where, uint32_t object) {
  if (t == nullptr || rule.empty()) return m->Unmask(rule);
  std::array<AccessMask, kMaxLayers> before{};
  for (int i = 0; i < m->num_layers(); ++i) before[i] = m->LayerDenies(i);
  bool r = m->Unmask(rule);
  for (int i = 0; i < m->num_layers(); ++i) {
    AccessMask cleared = before[i] & ~m->LayerDenies(i);
    if (cleared) t->grants.push_back({i + 1, cleared, where, object});
  }
  return r;
}

template <class M>
bool NoMoreAccess(const M& p1, const M& c1, bool c1_dir, const M& p2, const M* c2,
                  bool c2_dir) {
  if (!M::MayRefer(p1, c1, p2, c1_dir)) return false;
  if (c2 == nullptr) return true;
  return M::MayRefer(p2, *c2, p1, c2_dir);
}

}  // namespace fs_internal

// SimpleWalk()
//
// The walk of a single, untraced request: the same positions as
// IsAccessToPathsAllowed() below (which calls it for that case), in a
// loop with nothing else in it -- the hot path of every check.
template <class M>
bool SimpleWalk(const vfs::World& w, const Domain& d, vfs::PathPos walker, M* m) {
  uint32_t object = ObjectOfInode(w, walker.dentry);
  vfs::World::DentryCursor dentry = w.dentry_cursor();
  const vfs::Dentry* cur = &dentry(walker.dentry);
  vfs::DentryId mnt_root = w.mount(walker.mnt).root;
  const Domain::FsRules rules = d.fs_rules();
  const uint64_t limit = uint64_t{w.dentry_end()} + w.mount_end() + 2;
  for (uint64_t steps = 0; steps < limit; ++steps) {
    if (m->Unmask(rules.Find(object))) return true;
    if (walker.dentry == mnt_root) {
      if (!JumpUp(w, &walker)) return false;  // the real root
      mnt_root = w.mount(walker.mnt).root;
      cur = &dentry(walker.dentry);
    }
    // The parent, unless this is its filesystem's root (a disconnected
    // directory's walk goes on from its mount's root): a branch, not a
    // select (the empty asm keeps the compiler from making it one), so
    // that the next load waits for nothing but this one.
    const vfs::DentryId parent = cur->parent;
    const vfs::DentryId here = walker.dentry;
    walker.dentry = parent;
    if (parent == here) [[unlikely]] {
      asm volatile("");
      walker.dentry = mnt_root;
    }
    cur = &dentry(walker.dentry);
    object = cur->dir_object;
  }
  return false;
}

// IsAccessToPathsAllowed()
//
// Walks from `path` to the real root: through mount roots to their
// mountpoints (the covered directory is not evaluated), from a
// disconnected directory's filesystem root to its mount's root (erratum
// 3), evaluating the root itself. With `m2` (refer), first compares what
// the domain grants at both sides (no_more_access()) before narrowing to
// the requests. `child1`/`child2` are the moved objects (refer only).
template <class M>
bool IsAccessToPathsAllowed(const vfs::World& w, const Domain& d, vfs::PathPos path,
                            AccessMask req1, M* m1, vfs::DentryId child1,
                            AccessMask req2, M* m2, vfs::DentryId child2,
                            FsTrace* t1 = nullptr, FsTrace* t2 = nullptr) {
  if (!req1 && !req2) return true;
  if (m2 == nullptr && t1 == nullptr && child1 == vfs::kNone)
    return m1->Allowed() || SimpleWalk<M>(w, d, path, m1);
  bool allowed1 = m1->Allowed();
  bool allowed2 = true;
  bool is_dom_check = false;
  M c1, c2;
  bool c1_dir = true, c2_dir = true;
  if (m2 != nullptr) {
    allowed2 = m2->Allowed();
    is_dom_check = true;
  }
  if (child1 != vfs::kNone) {
    if (c1.Init(d, kFsAll, true)) c1.Unmask(FindRule(w, d, child1));
    c1_dir = S_ISDIR(w.inode_at(child1).mode);
  }
  if (child2 != vfs::kNone) {
    if (c2.Init(d, kFsAll, true)) c2.Unmask(FindRule(w, d, child2));
    c2_dir = S_ISDIR(w.inode_at(child2).mode);
  }
  if (t1) t1->start = path;
  if (t2) t2->start = path;
  vfs::PathPos walker = path;
  // The first position may be a file (whose rule is on its inode: a file
  // can have several dentries); every later one is a directory, whose
  // dentry mirrors its inode's Landlock object.
  uint32_t object = ObjectOfInode(w, walker.dentry);
  const vfs::Dentry* cur = &w.dentry(walker.dentry);
  vfs::DentryId mnt_root = w.mount(walker.mnt).root;
  // Bounded: a reader racing a rename could otherwise loop.
  const uint64_t limit = uint64_t{w.dentry_end()} + w.mount_end() + 2;
  for (uint64_t steps = 0; steps < limit; ++steps) {
    if (is_dom_check && fs_internal::NoMoreAccess(*m1, c1, c1_dir, *m2,
                                                  child2 != vfs::kNone ? &c2 : nullptr, c2_dir)) {
      is_dom_check = false;
      allowed1 = allowed1 || m1->ScopeTo(req1);
      allowed2 = allowed2 || m2->ScopeTo(req2);
      if (allowed1 && allowed2) break;
    }
    const std::span<const LayerAccess> rule = d.FindFsRule(object);
    if (t1 == nullptr && t2 == nullptr) {
      if (!allowed1) allowed1 = m1->Unmask(rule);
      if (!allowed2) allowed2 = m2->Unmask(rule);
    } else {
      if (t1) t1->end = walker;
      if (t2) t2->end = walker;
      if (!allowed1) allowed1 = fs_internal::UnmaskTraced(m1, rule, t1, walker, object);
      if (!allowed2) allowed2 = fs_internal::UnmaskTraced(m2, rule, t2, walker, object);
    }
    if (allowed1 && allowed2) break;
    if (walker.dentry == mnt_root) {
      if (!JumpUp(w, &walker)) break;
      mnt_root = w.mount(walker.mnt).root;
      cur = &w.dentry(walker.dentry);
    }
    // A disconnected directory continues with the mount it was reached
    // through.
    const vfs::DentryId parent = cur->parent;
    walker.dentry = parent == walker.dentry ? mnt_root : parent;
    cur = &w.dentry(walker.dentry);
    object = cur->dir_object;
  }
  return allowed1 && allowed2;
}

// CollectDomainAccesses()
//
// Unmasks every right the domain handles along `dir` up to `mnt_root` (or
// a filesystem root); true when all got granted.
template <class M>
bool CollectDomainAccesses(const vfs::World& w, const Domain& d, vfs::DentryId mnt_root,
                           vfs::DentryId dir, M* masks, FsTrace* t, vfs::MountId mnt) {
  if (!masks->Init(d, kFsAll, true)) return true;
  const uint64_t limit = uint64_t{w.dentry_end()} + 1;
  for (uint64_t steps = 0; steps < limit; ++steps) {
    // (Usually a directory; the root of a file bind mount is not.)
    const uint32_t object = ObjectOfInode(w, dir);
    if (fs_internal::UnmaskTraced(masks, d.FindFsRule(object), t, {mnt, dir}, object))
      return true;
    const vfs::DentryId parent = w.dentry(dir).parent;
    if (dir == mnt_root || parent == dir) break;
    dir = parent;
  }
  return false;
}

// ReferResult
//
// The verdict of a rename or link, with the final masks of both sides.
template <class M>
struct ReferResult {
  int err = 0;             // 0, EACCES or EXDEV
  bool same_dir = false;
  AccessMask req1 = 0, req2 = 0;
  M m1, m2;
};

// ReferRequests
//
// What a link or rename asks of its two directories: `req1` of the
// source's parent, `req2` of the destination directory (make_* and
// remove_* by the types moved; refer on both when the source changes
// parent, `same_dir` otherwise).
struct ReferRequests {
  AccessMask req1 = 0, req2 = 0;
  bool same_dir = false;
};

// ReferRequestsOf()
//
// The rights of current_check_refer_path(): `old` is the source (mount =
// new_dir's), `new_dentry` the target or kNone.
inline ReferRequests ReferRequestsOf(const vfs::World& w, vfs::PathPos old, vfs::PathPos new_dir,
                                     vfs::DentryId new_dentry, bool removable, bool exchange) {
  ReferRequests r;
  const uint32_t old_mode = w.inode_at(old.dentry).mode;
  if (exchange) r.req1 = GetModeAccess(w.inode_at(new_dentry).mode);
  r.req2 = GetModeAccess(old_mode);
  if (removable) {
    r.req1 |= S_ISDIR(old_mode) ? kFsRemoveDir : kFsRemoveFile;
    if (new_dentry != vfs::kNone)
      r.req2 |= S_ISDIR(w.inode_at(new_dentry).mode) ? kFsRemoveDir : kFsRemoveFile;
  }
  r.same_dir = w.dentry(old.dentry).parent == new_dir.dentry;
  if (!r.same_dir) {
    r.req1 |= kFsRefer;
    r.req2 |= kFsRefer;
  }
  return r;
}

// CheckReferPath()
//
// current_check_refer_path() after the applicability gate: `old` is the
// source (mount = new_dir's), `new_dentry` the target or kNone.
template <class M>
ReferResult<M> CheckReferPath(const vfs::World& w, const Domain& d, vfs::PathPos old,
                              vfs::PathPos new_dir, vfs::DentryId new_dentry,
                              bool removable, bool exchange, FsTrace* t1, FsTrace* t2) {
  ReferResult<M> r;
  const ReferRequests rq = ReferRequestsOf(w, old, new_dir, new_dentry, removable, exchange);
  const AccessMask req1 = rq.req1, req2 = rq.req2;
  const vfs::DentryId old_parent_dentry = w.dentry(old.dentry).parent;
  if (rq.same_dir) {
    // No reparenting: no refer, one walk for both requests.
    r.same_dir = true;
    r.req1 = r.m1.Init(d, req1 | req2, true);
    if (IsAccessToPathsAllowed<M>(w, d, new_dir, r.req1, &r.m1, vfs::kNone, 0, nullptr,
                                  vfs::kNone, t1))
      return r;
    r.err = EACCES;
    return r;
  }
  r.req1 = req1;
  r.req2 = req2;
  const vfs::DentryId mnt_root = w.mount(new_dir.mnt).root;
  const vfs::DentryId old_parent = old.dentry == mnt_root ? old.dentry : old_parent_dentry;
  const bool a1 = CollectDomainAccesses(w, d, mnt_root, old_parent, &r.m1, t1, new_dir.mnt);
  const bool a2 = CollectDomainAccesses(w, d, mnt_root, new_dir.dentry, &r.m2, t2, new_dir.mnt);
  if (a1 && a2) return r;
  if (IsAccessToPathsAllowed<M>(w, d, {new_dir.mnt, mnt_root}, req1, &r.m1, old.dentry, req2,
                                &r.m2, exchange ? new_dentry : vfs::kNone, t1, t2))
    return r;
  // EACCES wins over EXDEV whenever a right other than refer is missing.
  r.err = (r.m1.IsEacces(req1) || r.m2.IsEacces(req2)) ? EACCES : EXDEV;
  return r;
}

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_FS_WALK_H_
