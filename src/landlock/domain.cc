// Landlock domains: merging a ruleset onto a domain, scopes.
// Linux: security/landlock/ruleset.c landlock_merge_ruleset(),
// inherit_ruleset(), merge_ruleset(); security/landlock/task.c
// domain_is_scoped()

#include "src/landlock/domain.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>

namespace pathwarden::landlock {
namespace {

std::atomic<uint64_t> next_domain_id{1};

// landlock_upgrade_handled_access_masks(): a layer handling any filesystem
// right also handles REFER.
AccessMask Upgrade(AccessMask fs) { return fs != 0 ? fs | kFsRefer : 0; }

}  // namespace

const std::string* Domain::SourceOf(uint32_t object, int level) const {
  for (const RuleSource& s : sources_)
    if (s.object == object && s.level == level) return &s.path;
  return nullptr;
}

class DomainBuilder {
 public:
  static std::shared_ptr<const Domain> Merge(const Domain* parent, const Ruleset& rs) {
    auto d = std::make_shared<Domain>();
    const int level = (parent ? parent->num_layers_ : 0) + 1;
    d->num_layers_ = level;
    d->id_ = next_domain_id.fetch_add(1);
    // Ordered so that rules (and their layer lists) come out sorted.
    std::map<uint32_t, std::vector<LayerAccess>> fs;
    std::map<uint16_t, std::vector<LayerAccess>> net;
    if (parent) {
      for (int i = 0; i < parent->num_layers_; ++i) {
        d->layers_[i] = parent->layers_[i];
        d->nodes_[i] = parent->nodes_[i];
      }
      for (uint32_t obj = 0; obj < parent->fs_index_.size(); ++obj) {
        const std::span<const LayerAccess> r = parent->FindFsRule(obj);
        if (r.empty()) continue;
        fs[obj].assign(r.begin(), r.end());
      }
      for (const Domain::NetRule& r : parent->net_rules_) {
        auto& v = net[r.port];
        for (uint32_t j = 0; j < r.count; ++j) v.push_back(parent->net_entries_[r.offset + j]);
      }
      d->sources_ = parent->sources_;
    }
    d->layers_[level - 1] = Layer{Upgrade(rs.handled_fs), rs.handled_net, rs.scoped};
    auto node = std::make_shared<HierarchyNode>();
    node->parent = parent ? parent->nodes_[level - 2] : nullptr;
    d->nodes_[level - 1] = std::move(node);
    // Rules on one object in one layer are ORed.
    std::map<uint32_t, AccessMask> layer_fs;
    std::map<uint16_t, AccessMask> layer_net;
    for (const RulesetRule& r : rs.rules) {
      if (r.is_port) {
        layer_net[r.port] |= r.access;
      } else {
        layer_fs[r.object] |= r.access;
        d->sources_.push_back({r.object, static_cast<uint8_t>(level), r.path});
      }
    }
    for (auto& [obj, acc] : layer_fs)
      fs[obj].push_back({static_cast<uint8_t>(level), acc});
    for (auto& [port, acc] : layer_net)
      net[port].push_back({static_cast<uint8_t>(level), acc});

    if (!fs.empty()) d->fs_index_.assign(fs.rbegin()->first + 1, 0);
    for (auto& [obj, v] : fs) {
      const uint32_t off = static_cast<uint32_t>(d->fs_entries_.size());
      // Offsets beyond 2^27 entries do not fit: refuse to build a domain
      // the index would misread (fail closed rather than corrupt).
      if (off >> (32 - Domain::kCountBits)) std::abort();
      d->fs_entries_.insert(d->fs_entries_.end(), v.begin(), v.end());
      d->fs_index_[obj] = off << Domain::kCountBits | static_cast<uint32_t>(v.size());
      d->objects_.push_back(obj);
    }
    for (auto& [port, v] : net) {
      const uint32_t off = static_cast<uint32_t>(d->net_entries_.size());
      d->net_entries_.insert(d->net_entries_.end(), v.begin(), v.end());
      d->net_rules_.push_back({port, off, static_cast<uint32_t>(v.size())});
    }
    for (int i = 0; i < level; ++i) d->union_fs_ |= d->layers_[i].handled_fs;
    return d;
  }
};

std::shared_ptr<const Domain> MergeRuleset(const Domain* parent, const Ruleset& ruleset) {
  return DomainBuilder::Merge(parent, ruleset);
}

bool DomainIsScoped(const Domain* client, const Domain* server, AccessMask scope) {
  if (client == nullptr) return false;
  int client_layer = client->num_layers() - 1;
  const HierarchyNode* client_walker = client->node(client_layer);
  int server_layer = server ? server->num_layers() - 1 : -1;
  const HierarchyNode* server_walker = server ? server->node(server_layer) : nullptr;
  // Client layers deeper than the server's: any of them scoped denies.
  for (; client_layer > server_layer; --client_layer) {
    if (client->layer(client_layer).scoped & scope) return true;
    client_walker = client_walker->parent.get();
  }
  for (; server_layer > client_layer; --server_layer)
    server_walker = server_walker->parent.get();
  // Same depth: the youngest scoped client layer allows only a server in
  // that very domain (or below it).
  for (; client_layer >= 0; --client_layer) {
    if (client->layer(client_layer).scoped & scope) return server_walker != client_walker;
    client_walker = client_walker->parent.get();
    server_walker = server_walker->parent.get();
  }
  return false;
}

}  // namespace pathwarden::landlock
