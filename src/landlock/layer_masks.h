// The matrix of unfulfilled rights (layers x rights) in the two layouts of
// the seed patch "landlock: Refactor layer masks":
//
//   ByAccess: for each right, a 16-bit mask of the layers still denying it
//             (layer_mask_t layer_masks[LANDLOCK_NUM_ACCESS_FS], Linux up
//             to 6.19), updated bit by bit.
//   ByLayer:  for each layer, the rights it still denies (struct
//             layer_access_masks, after the patch), updated with bitwise
//             operations on whole masks.
//
// Both expose the same interface, so the walks are templates over it (the
// general one and SimpleWalk(), its untraced single-request loop) and the
// two layouts are compared result for result.
// Linux: security/landlock/access.h, ruleset.c landlock_init_layer_masks(),
// landlock_unmask_layers(); fs.c scope_to_request(), is_eacces(),
// may_refer()/no_more_access()

#ifndef PATHWARDEN_SRC_LANDLOCK_LAYER_MASKS_H_
#define PATHWARDEN_SRC_LANDLOCK_LAYER_MASKS_H_

#include <array>
#include <cstdint>
#include <span>

#include "pathwarden/landlock.h"
#include "src/landlock/domain.h"

namespace pathwarden::landlock {

static_assert(kMaxLayers <= 16, "ByAccess keeps layers in 16 bits");

// access_mask_subset()
inline bool AccessMaskSubset(AccessMask subset, AccessMask superset) {
  return (subset | superset) == superset;
}

class ByLayer {
 public:
  // Init()
  //
  // Each layer denies what it handles of `request`; returns the rights
  // some layer handles (0: nothing to check). `fs` selects the filesystem
  // masks (with REFER) or the network ones.
  AccessMask Init(const Domain& d, AccessMask request, bool fs) {
    n_ = d.num_layers();
    AccessMask handled = 0;
    pending_ = 0;
    for (int i = 0; i < kMaxLayers; ++i) {
      a_[i] = i < n_ ? request & (fs ? d.FsMaskForCheck(i) : d.layer(i).handled_net) : 0;
      handled |= a_[i];
      if (a_[i]) pending_ |= static_cast<uint16_t>(1u << i);
    }
    return handled;
  }

  // Unmask()
  //
  // Clears what the rule's layers grant; true when nothing is left. The
  // set of layers still denying something is kept as a bit mask, so the
  // test costs nothing per layer.
  bool Unmask(std::span<const LayerAccess> rule) {
    // Most rules are one layer's: no loop for them, whose registers the
    // walk around it would pay for.
    if (rule.size() == 1) [[likely]] {
      UnmaskEntry(rule[0]);
      return pending_ == 0;
    }
    for (const LayerAccess& l : rule) UnmaskEntry(l);
    return !rule.empty() && pending_ == 0;
  }

  bool Allowed() const { return pending_ == 0; }
  // Rights still denied by at least one layer.
  AccessMask Union() const {
    AccessMask any = 0;
    for (int i = 0; i < kMaxLayers; ++i) any |= a_[i];
    return any;
  }
  AccessMask LayerDenies(int i) const { return a_[i]; }
  int num_layers() const { return n_; }

  // scope_to_request()
  bool ScopeTo(AccessMask request) {
    pending_ = 0;
    for (int i = 0; i < kMaxLayers; ++i) {
      a_[i] &= request;
      if (a_[i]) pending_ |= static_cast<uint16_t>(1u << i);
    }
    return Allowed();
  }
  // is_eacces(): a requested right other than REFER is still denied.
  bool IsEacces(AccessMask request) const {
    for (int i = 0; i < kMaxLayers; ++i)
      if (a_[i] & request & ~kFsRefer) return true;
    return false;
  }
  // may_refer(): what the moved child still lacks at the source must
  // still be lacking at the destination, in every layer.
  static bool MayRefer(const ByLayer& src_parent, const ByLayer& src_child,
                       const ByLayer& dst_parent, bool child_is_dir) {
    for (int i = 0; i < kMaxLayers; ++i) {
      AccessMask child = src_parent.a_[i] & src_child.a_[i];
      AccessMask parent = dst_parent.a_[i];
      if (!child_is_dir) {
        child &= kFsFileRights;
        parent &= kFsFileRights;
      }
      if (!AccessMaskSubset(child, parent)) return false;
    }
    return true;
  }

 private:
  void UnmaskEntry(const LayerAccess& l) {
    const int i = l.level - 1;
    // Most rules met on a walk clear nothing still pending: write only
    // when they do (no store-to-load chain from level to level).
    if (a_[i] & l.access) {
      a_[i] &= ~l.access;
      if (a_[i] == 0) pending_ &= static_cast<uint16_t>(~(1u << i));
    }
  }

  std::array<AccessMask, kMaxLayers> a_{};
  uint16_t pending_ = 0;  // layers with a_[i] != 0
  int n_ = 0;
};

class ByAccess {
 public:
  static constexpr int kBits = kNumFsRights;

  AccessMask Init(const Domain& d, AccessMask request, bool fs) {
    n_ = d.num_layers();
    request_ = request;
    m_.fill(0);
    AccessMask handled = 0;
    for (int i = 0; i < n_; ++i) {
      const AccessMask h = request & (fs ? d.FsMaskForCheck(i) : d.layer(i).handled_net);
      for (int b = 0; b < kBits; ++b)
        if (h & (AccessMask{1} << b)) m_[b] |= static_cast<uint16_t>(1u << i);
      handled |= h;
    }
    return handled;
  }

  // As Linux up to 6.19: per rule layer, per requested right, clear the
  // layer's bit; stop as soon as every requested right is fulfilled.
  bool Unmask(std::span<const LayerAccess> rule) {
    if (rule.empty()) return false;
    for (const LayerAccess& l : rule) {
      const uint16_t layer_bit = static_cast<uint16_t>(1u << (l.level - 1));
      bool empty = true;
      for (int b = 0; b < kBits; ++b) {
        if (!(request_ & (AccessMask{1} << b))) continue;
        if (l.access & (AccessMask{1} << b)) m_[b] &= static_cast<uint16_t>(~layer_bit);
        empty = empty && m_[b] == 0;
      }
      if (empty) return true;
    }
    return false;
  }

  // is_layer_masks_allowed(): the whole matrix is zero.
  bool Allowed() const {
    for (int b = 0; b < kBits; ++b)
      if (m_[b]) return false;
    return true;
  }
  AccessMask Union() const {
    AccessMask any = 0;
    for (int b = 0; b < kBits; ++b)
      if (m_[b]) any |= AccessMask{1} << b;
    return any;
  }
  AccessMask LayerDenies(int i) const {
    AccessMask r = 0;
    for (int b = 0; b < kBits; ++b)
      if (m_[b] & (1u << i)) r |= AccessMask{1} << b;
    return r;
  }
  int num_layers() const { return n_; }

  bool ScopeTo(AccessMask request) {
    for (int b = 0; b < kBits; ++b)
      if (!(request & (AccessMask{1} << b))) m_[b] = 0;
    request_ = request;
    return Allowed();
  }
  bool IsEacces(AccessMask request) const {
    for (int b = 0; b < kBits; ++b) {
      const AccessMask bit = AccessMask{1} << b;
      if (bit == kFsRefer || !(request & bit)) continue;
      if (m_[b]) return true;
    }
    return false;
  }
  static bool MayRefer(const ByAccess& src_parent, const ByAccess& src_child,
                       const ByAccess& dst_parent, bool child_is_dir) {
    for (int b = 0; b < kBits; ++b) {
      const bool file_access = (kFsFileRights >> b) & 1;
      if (!child_is_dir && !file_access) continue;
      const uint16_t child = src_parent.m_[b] & src_child.m_[b];
      if ((child | dst_parent.m_[b]) != dst_parent.m_[b]) return false;
    }
    return true;
  }

 private:
  std::array<uint16_t, kBits> m_{};
  AccessMask request_ = 0;
  int n_ = 0;
};

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_LAYER_MASKS_H_
