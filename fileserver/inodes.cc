#include "fileserver/inodes.h"

#include <vector>

namespace pathwarden::fileserver {

Inodes::Inodes() { nodes_[kRootId] = NodeEntry{0, "", 0, 1, false}; }

const NodeEntry* Inodes::Get(uint64_t id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::optional<std::string> Inodes::RelPath(uint64_t id) const {
  std::vector<const std::string*> parts;
  uint64_t cur = id;
  while (cur != kRootId) {
    const NodeEntry* e = Get(cur);
    if (e == nullptr || e->orphan) return std::nullopt;
    parts.push_back(&e->name);
    cur = e->parent;
  }
  if (parts.empty()) return std::string(".");
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += '/';
    out += **it;
  }
  return out;
}

uint64_t Inodes::Child(uint64_t parent, const std::string& name, ino_t ino) {
  Key k{parent, name};
  auto it = names_.find(k);
  if (it != names_.end()) {
    NodeEntry& e = nodes_[it->second];
    if (e.backing_ino == ino) {
      ++e.nlookup;
      return it->second;
    }
    e.orphan = true;
    names_.erase(it);
  }
  const uint64_t id = next_++;
  nodes_[id] = NodeEntry{parent, name, ino, 1, false};
  names_[k] = id;
  return id;
}

void Inodes::Forget(uint64_t id, uint64_t n) {
  if (id == kRootId) return;
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  NodeEntry& e = it->second;
  e.nlookup = n >= e.nlookup ? 0 : e.nlookup - n;
  if (e.nlookup != 0) return;
  if (!e.orphan) names_.erase(Key{e.parent, e.name});
  // Children keep their parent's id: a parent forgotten before its
  // children would leave them without a path, so the kernel forgets
  // children first (it holds a reference on the parent dentry).
  nodes_.erase(it);
}

void Inodes::Removed(uint64_t parent, const std::string& name) {
  auto it = names_.find(Key{parent, name});
  if (it == names_.end()) return;
  nodes_[it->second].orphan = true;
  names_.erase(it);
}

void Inodes::Moved(uint64_t parent, const std::string& name, uint64_t newparent,
                   const std::string& newname, bool exchange) {
  auto from = names_.find(Key{parent, name});
  std::optional<uint64_t> src, dst;
  if (from != names_.end()) {
    src = from->second;
    names_.erase(from);
  }
  auto to = names_.find(Key{newparent, newname});
  if (to != names_.end()) {
    dst = to->second;
    names_.erase(to);
  }
  if (src) {
    NodeEntry& e = nodes_[*src];
    e.parent = newparent;
    e.name = newname;
    names_[Key{newparent, newname}] = *src;
  }
  if (dst) {
    NodeEntry& e = nodes_[*dst];
    if (exchange) {
      e.parent = parent;
      e.name = name;
      names_[Key{parent, name}] = *dst;
    } else {
      e.orphan = true;
    }
  }
}

}  // namespace pathwarden::fileserver
