// Backends: the pending fill of a reader, and the unknown's reason.

#include "src/vfs/backend.h"

#include <utility>

#include <fmt/format.h>

namespace pathwarden::vfs {

Pending& PendingFill() {
  thread_local Pending pending;
  return pending;
}

int NeedLookup(PathPos dir, std::string_view name) {
  Pending& p = PendingFill();
  p.kind = Pending::Kind::kLookup;
  p.dir = dir;
  p.name.assign(name);
  return kErrNeedFill;
}

int NeedList(PathPos dir) {
  Pending& p = PendingFill();
  p.kind = Pending::Kind::kList;
  p.dir = dir;
  p.name.clear();
  return kErrNeedFill;
}

int Unknown(std::string why) {
  Pending& p = PendingFill();
  p.kind = Pending::Kind::kNothing;
  p.why = std::move(why);
  p.opaque = kNone;
  return kErrUnknown;
}

int UnknownAt(InodeId ino) {
  Pending& p = PendingFill();
  p.kind = Pending::Kind::kNothing;
  p.why.clear();
  p.opaque = ino;
  return kErrUnknown;
}

int Absent(const World& w, PathPos dir, std::string_view name) {
  if (w.KnownAbsent(dir.dentry, name)) return 0;
  const InodeId ino = w.inode_of(dir.dentry);
  if (w.inode(ino).flags & (kInodeOpaque | kInodeUnseen)) return UnknownAt(ino);
  // An incomplete directory with nothing to fill it cannot happen: fail
  // closed (never "absent", which could let a creation through).
  if (w.backend() == nullptr) return Unknown("an incomplete directory has no backend");
  return NeedLookup(dir, name);
}

int NeedComplete(const World& w, PathPos dir) {
  const InodeId ino = w.inode_of(dir.dentry);
  const uint32_t flags = w.inode(ino).flags;
  if (!(flags & kInodeIncomplete)) return 0;
  if (flags & (kInodeOpaque | kInodeUnseen)) return UnknownAt(ino);
  if (w.backend() == nullptr) return Unknown("an incomplete directory has no backend");
  return NeedList(dir);
}

int NeedEmptyKnown(const World& w, PathPos dir) {
  const Inode& i = w.inode_at(dir.dentry);
  if (i.nchildren() == 0 || (w.backend() != nullptr && w.backend()->NamesMayGo()))
    return NeedComplete(w, dir);
  return 0;
}

std::string UnknownWhy(const World& w, InodeId ino) {
  if (w.backend() != nullptr) return w.backend()->WhyOpaque(w, ino);
  return fmt::format("inode {} is opaque to the model", ino);
}

}  // namespace pathwarden::vfs
