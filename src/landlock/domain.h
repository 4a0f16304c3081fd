// Landlock domains: the stacked, immutable layers a process is confined
// by, with their handled rights and rules.
// Linux: security/landlock/ruleset.{h,c}, domain.{h,c}, object.h

#ifndef PATHWARDEN_SRC_LANDLOCK_DOMAIN_H_
#define PATHWARDEN_SRC_LANDLOCK_DOMAIN_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pathwarden/landlock.h"

namespace pathwarden::landlock {

// LayerAccess
//
// One layer's grant in a rule: `level` is 1-based, as in struct
// landlock_layer.
struct LayerAccess {
  uint8_t level;
  AccessMask access;
};

// HierarchyNode
//
// One node per layer, linked to the layer below (struct
// landlock_hierarchy): the ancestry scopes compare.
struct HierarchyNode {
  std::shared_ptr<const HierarchyNode> parent;
};

// Layer
//
// What a layer handles. `handled_fs` is stored upgraded as Linux 6.15+
// stores it: with REFER whenever it handles any filesystem right.
struct Layer {
  AccessMask handled_fs = 0;
  AccessMask handled_net = 0;
  AccessMask scoped = 0;
};

// RuleSource
//
// Where a rule came from, for explanations: the path as written and the
// layer.
struct RuleSource {
  uint32_t object;
  uint8_t level;
  std::string path;
};

// Domain
//
// Immutable once built; shared by every process (and fork) that carries
// it. Rules are keyed by Landlock object (one per tagged inode, never
// reused), so a reused inode slot can never inherit a dead inode's rules.
class Domain {
 public:
  int num_layers() const { return num_layers_; }
  const Layer& layer(int i) const { return layers_[i]; }

  // FsMaskForCheck()
  //
  // The rights layer `i` denies unless a rule grants them: its handled
  // filesystem rights and, always, REFER (landlock_get_fs_access_mask(),
  // verified on Linux 6.18: a network-only layer also denies refer).
  AccessMask FsMaskForCheck(int i) const { return layers_[i].handled_fs | kFsRefer; }

  // Union of the stored filesystem masks (landlock_union_access_masks()).
  AccessMask UnionFs() const { return union_fs_; }

  // FindFsRule()
  //
  // The grants of the rule on `object` (empty when none). Objects are
  // small dense ids (one per tagged inode, numbered by the engine), so the
  // rule is found by index, with no hashing.
  std::span<const LayerAccess> FindFsRule(uint32_t object) const {
    return fs_rules().Find(object);
  }
  // FsRules
  //
  // The rule index as plain pointers, for a loop that looks up many
  // objects (the compiler then keeps them in registers).
  struct FsRules {
    const uint32_t* index;  // per object: offset << kCountBits | count
    uint32_t size;
    const LayerAccess* entries;
    std::span<const LayerAccess> Find(uint32_t object) const {
      if (object >= size) return {};
      const uint32_t ref = index[object];
      return {entries + (ref >> kCountBits), ref & ((1u << kCountBits) - 1)};
    }
  };
  FsRules fs_rules() const {
    return {fs_index_.data(), static_cast<uint32_t>(fs_index_.size()), fs_entries_.data()};
  }

  std::span<const LayerAccess> FindNetRule(uint16_t port) const {
    for (const NetRule& r : net_rules_)
      if (r.port == port) return {net_entries_.data() + r.offset, r.count};
    return {};
  }

  // The hierarchy node of layer `i` (0-based).
  const HierarchyNode* node(int i) const { return nodes_[i].get(); }

  // Rule sources of every layer, for explanations.
  const std::string* SourceOf(uint32_t object, int level) const;

  // Landlock objects this domain's rules use (for memo invalidation).
  std::span<const uint32_t> objects() const { return objects_; }

  // Unique per domain (memo keys).
  uint64_t id() const { return id_; }

  // DomainBuilder assembles a domain from a parent and one new layer.
  friend class DomainBuilder;

 private:
  // A rule in the index: offset << kCountBits | count (count 0: no
  // rule). A rule has at most one entry per layer, so 5 bits count it.
  static constexpr uint32_t kCountBits = 5;
  static_assert(kMaxLayers < (1u << kCountBits));
  struct NetRule {
    uint16_t port;
    uint32_t offset;
    uint32_t count;
  };
  int num_layers_ = 0;
  std::array<Layer, kMaxLayers> layers_{};
  AccessMask union_fs_ = 0;
  std::vector<uint32_t> fs_index_;  // by object id
  std::vector<LayerAccess> fs_entries_;
  std::vector<NetRule> net_rules_;
  std::vector<LayerAccess> net_entries_;
  std::array<std::shared_ptr<const HierarchyNode>, kMaxLayers> nodes_{};
  std::vector<RuleSource> sources_;
  std::vector<uint32_t> objects_;
  uint64_t id_ = 0;
};

// RulesetRule
//
// A rule of a ruleset being enforced, already resolved: a path rule to a
// Landlock object, or a port rule. `access` is the absolute grant (the
// rule's rights plus every unhandled right but REFER).
struct RulesetRule {
  bool is_port = false;
  uint32_t object = 0;
  uint16_t port = 0;
  AccessMask access = 0;
  std::string path;  // as written, for explanations
};

// Ruleset
//
// What landlock_create_ruleset() + landlock_add_rule() produced.
struct Ruleset {
  AccessMask handled_fs = 0;
  AccessMask handled_net = 0;
  AccessMask scoped = 0;
  std::vector<RulesetRule> rules;
};

// MergeRuleset()
//
// landlock_merge_ruleset(): a new domain with `parent`'s layers (may be
// null) and `ruleset` as the youngest. The caller checks the 16-layer
// limit.
std::shared_ptr<const Domain> MergeRuleset(const Domain* parent,
                                           const Ruleset& ruleset);

// DomainIsScoped()
//
// security/landlock/task.c domain_is_scoped(): true when some layer of
// `client` deeper than where it meets `server` sets `scope`.
bool DomainIsScoped(const Domain* client, const Domain* server,
                    AccessMask scope);

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_DOMAIN_H_
