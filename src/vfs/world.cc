// The filesystem model: object lifetimes, the dentry and mount hashes.
// Linux: fs/dcache.c (d_alloc, d_delete, d_move, d_exchange, d_path),
// fs/namespace.c (attach_mnt, lookup_mnt), fs/inode.c (iput).

#include "src/vfs/world.h"

#include <algorithm>

#include <fmt/format.h>

#include "src/vfs/backend.h"

namespace pathwarden::vfs {

World::World() {
  static std::atomic<uint64_t> next_instance{1};
  instance_id_ = next_instance.fetch_add(1, std::memory_order_relaxed);
  SbId sb = NewSuperblock(S_IFDIR | 0755, 0, 0);
  root_mnt_ = NewRootMount(sb);
}

MountId World::LookupMount(MountId parent, DentryId mountpoint) const noexcept {
  const uint32_t h = internal::MixHash(parent, mountpoint);
  return mhash_.Find(h, [&](uint32_t id) {
    const Mount& m = mounts_[id];
    return m.parent == parent && m.mountpoint == mountpoint;
  });
}

bool World::IsDescendant(DentryId d, DentryId ancestor) const noexcept {
  // Bounded: a racing rename could make a reader see a cycle.
  for (uint32_t n = 0; n <= dentries_.end(); ++n) {
    if (d == ancestor) return true;
    DentryId p = dentries_[d].parent;
    if (p == d) return false;
    d = p;
  }
  return false;
}

namespace {

// The components of `p` from `root`, leaf first, as d_path() walks them:
// across mount roots to their mount points, to `root`, the namespace's
// root or a filesystem root outside the mount. Calls `part(name)` for
// each until it returns false; `stop(pos)` is asked before each (true
// ends the walk there). Returns the position it stopped at.
template <class Part, class Stop>
PathPos WalkUp(const internal::StableArena<Dentry>& dentries,
               const internal::StableArena<Mount>& mounts, const internal::StringPool& strings,
               PathPos p, PathPos root, Part&& part, Stop&& stop) {
  for (uint32_t n = 0; n <= dentries.end() + mounts.end(); ++n) {
    if (p == root) break;
    const Mount& m = mounts[p.mnt];
    if (p.dentry == m.root) {
      if (m.parent == kNone) break;
      p = {m.parent, m.mountpoint};
      continue;
    }
    const Dentry& d = dentries[p.dentry];
    if (d.parent == p.dentry) break;  // a filesystem root outside the mount
    if (stop(p)) break;
    if (!part(strings.Get(d.name))) break;
    p.dentry = d.parent;
  }
  return p;
}

bool Deleted(const internal::StableArena<Dentry>& dentries, PathPos p) {
  return p.dentry != kNone && !(dentries[p.dentry].flags & kDentryHashed) &&
         dentries[p.dentry].parent != p.dentry;
}

// Cut(): the display form of a path text `t` ("/a/b" whole, or "…/x/y"
// already cut): whole when it fits in `max` bytes, else "…" and its
// longest tail of whole components that does (names hold no '/').
constexpr std::string_view kEllipsis = "\u2026";

std::string Cut(std::string t, bool cut, size_t max) {
  std::string_view body(t);
  if (cut) body.remove_prefix(kEllipsis.size());
  if (!cut && body.size() <= max) return t;
  size_t from = 0;
  while (body.size() - from > max) {
    const size_t slash = body.find('/', from + 1);
    if (slash == std::string_view::npos) break;  // one name longer than max: cannot be
    from = slash;
  }
  return std::string(kEllipsis) + std::string(body.substr(from));
}

// The display paths this thread made last (DisplayPathOf()): a chain of
// steps asks for a child of the path it asked for before, and each walk
// up then ends one level above. Valid for one world, root and shape
// generation (a rename, a dentry freed, a mount moves paths; a creation
// does not); a reader whose read section failed clears it
// (World::ClearDisplayCache()), as it may hold torn reads.
struct DisplayCache {
  static constexpr int kSize = 8;
  uint64_t world = 0, shape_gen = 0;
  PathPos root;
  int next = 0;
  struct Entry {
    PathPos pos;
    std::string text;  // without " (deleted)"
    bool cut = false;
  } entries[kSize];

  const Entry* Find(PathPos p) const {
    for (const Entry& e : entries)
      if (e.pos == p && e.pos.dentry != kNone) return &e;
    return nullptr;
  }
  void Clear() {
    for (Entry& e : entries) e.pos = {};
  }
};

thread_local DisplayCache tls_display;

}  // namespace

std::string World::PathOf(PathPos p, PathPos root) const {
  std::vector<std::string_view> parts;
  size_t len = 0;
  WalkUp(dentries_, mounts_, strings_, p, root,
         [&](std::string_view name) {
           parts.push_back(name);
           len += name.size() + 1;
           return true;
         },
         [](PathPos) { return false; });
  std::string out;
  out.reserve(len == 0 ? 1 : len);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  if (out.empty()) out.push_back('/');
  if (Deleted(dentries_, p)) out.append(" (deleted)");
  return out;
}

std::string World::DisplayPathOf(PathPos p, PathPos root) const {
  DisplayCache& c = tls_display;
  if (c.world != instance_id_ || c.shape_gen != shape_gen_ || c.root != root) {
    c.Clear();
    c.world = instance_id_;
    c.shape_gen = shape_gen_;
    c.root = root;
  }
  // Up from p: at most kDisplayPathMax bytes of names (past them the path
  // is cut anyway), and only a few levels looking for a cached ancestor.
  std::vector<std::string_view> parts;
  size_t len = 0, level = 0;
  bool cut = false;
  const DisplayCache::Entry* above = nullptr;
  WalkUp(dentries_, mounts_, strings_, p, root,
         [&](std::string_view name) {
           if (len + name.size() + 1 > kDisplayPathMax) {
             cut = true;
             return false;
           }
           parts.push_back(name);
           len += name.size() + 1;
           return true;
         },
         [&](PathPos q) {
           if (level++ >= 3) return false;
           above = c.Find(q);
           return above != nullptr;
         });
  std::string text;
  bool text_cut = cut;
  if (above != nullptr) {
    text = above->text == "/" ? std::string() : above->text;
    text_cut = above->cut;
  } else if (cut) {
    text = std::string(kEllipsis);
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    text += '/';
    text += *it;
  }
  if (text.empty()) text.push_back('/');
  if (above != nullptr) text = Cut(std::move(text), text_cut, kDisplayPathMax);
  const bool now_cut = text.compare(0, kEllipsis.size(), kEllipsis) == 0;
  DisplayCache::Entry& e = c.entries[c.next];
  c.next = (c.next + 1) % DisplayCache::kSize;
  e.pos = p;
  e.text = text;
  e.cut = now_cut;
  if (Deleted(dentries_, p)) text.append(" (deleted)");
  return text;
}

void World::ClearDisplayCache() { tls_display.Clear(); }

AclId World::InternAcl(const PosixAcl& acl) {
  std::string key = acl.ToText();
  if (auto it = acl_index_.find(key); it != acl_index_.end()) return it->second;
  AclId id = acls_.Alloc();
  acls_[id].ptr = std::make_unique<const PosixAcl>(acl);
  acl_index_.emplace(std::move(key), id);
  return id;
}

size_t World::bytes_acls() const {
  size_t n = acls_.bytes() + acl_index_.bucket_count() * sizeof(void*);
  for (const auto& [key, id] : acl_index_) {
    // The index's node (next pointer, key, id, cached hash) and the key's
    // heap buffer; the ACL object and its entries.
    n += sizeof(void*) + sizeof(std::pair<const std::string, AclId>) + sizeof(size_t);
    if (key.capacity() > std::string().capacity()) n += key.capacity() + 1;
    n += sizeof(PosixAcl) + acls_[id].ptr->entries().size() * sizeof(AclEntry);
  }
  return n;
}

SbId World::NewSuperblock(uint32_t root_mode, uint32_t uid, uint32_t gid) {
  SbId sb = sbs_.Alloc();
  sbs_[sb].flags = 0;
  sbs_[sb].mounts = 0;
  InodeId root = NewInode(sb, S_IFDIR | (root_mode & 07777), uid, gid);
  inodes_[root].nlink = 2;
  DentryId d = dentries_.Alloc();
  Dentry& de = dentries_[d];
  de.parent = d;
  SetName(de, strings_.Intern("/"));
  de.inode = root;
  de.flags = MirrorOf(inodes_[root]);
  de.refs = 1;  // held by the superblock for its lifetime
  de.dir_object = 0;
  inodes_[root].refs = 1;
  inodes_[root].dentry = d;
  sbs_[sb].root = d;
  return sb;
}

InodeId World::NewInode(SbId sb, uint32_t mode, uint32_t uid, uint32_t gid,
                        uint32_t rdev) {
  InodeId id = inodes_.Alloc();
  Inode& i = inodes_[id];
  i.uid = uid;
  i.gid = gid;
  i.nlink = 0;
  i.rdev = S_ISCHR(mode) || S_ISBLK(mode) ? rdev : 0;  // also nchildren() = 0
  i.acl = kNone;
  i.default_acl = kNone;
  i.sb = sb;
  i.data = 0;
  i.dentry = kNone;
  i.refs = 0;
  i.open_counts = 0;
  i.landlock_object = kNone;
  i.mode = mode;
  i.flags = FastSearch(mode, kNone, 0);
  return id;
}

void World::SetModeAndAcl(InodeId ino, uint32_t mode, AclId acl) {
  Inode& i = inodes_[ino];
  i.mode = mode;
  i.acl = acl;
  i.flags = (i.flags & ~kInodeFastSearch) | FastSearch(mode, acl, i.flags);
  UpdateMirror(ino);
}

std::string World::Verify() const {
  for (InodeId ino = 1; ino < inodes_.end(); ++ino) {
    const Inode& i = inodes_[ino];
    if (i.mode == 0) continue;
    if ((i.flags & kInodeFastSearch) != FastSearch(i.mode, i.acl, i.flags))
      return fmt::format("inode {} (mode {:o}) has a stale fast-search bit", ino,
                         static_cast<uint32_t>(i.mode));
  }
  for (DentryId d = 1; d < dentries_.end(); ++d) {
    const Dentry& de = dentries_[d];
    if (de.inode == kNone) continue;
    const Inode& i = inodes_[de.inode];
    if ((de.flags & kDentryInodeMirror) != MirrorOf(i))
      return fmt::format("dentry {} (\"{}\") mirrors {:#x} of inode {}, which says {:#x}", d,
                         str(de.name), de.flags & kDentryInodeMirror,
                         static_cast<uint32_t>(de.inode), MirrorOf(i));
    const std::string_view name = str(de.name);
    if (de.name_key != internal::NameKey(internal::HeadOf(name), name.size()))
      return fmt::format("dentry {} (\"{}\") has a stale name key", d, name);
    if (de.dir_object != (S_ISDIR(i.mode) ? i.landlock_object.get() : 0u))
      return fmt::format("dentry {} (\"{}\") mirrors a stale Landlock object", d, name);
    if (S_ISDIR(i.mode) && i.dentry != d)
      return fmt::format("directory inode {} has dentry {}, not {}",
                         static_cast<uint32_t>(de.inode), static_cast<uint32_t>(i.dentry), d);
  }
  // What is counted: hashed children, and attached mounts per mount point.
  std::vector<uint32_t> children(inodes_.end(), 0), mounts(dentries_.end(), 0);
  for (DentryId d = 1; d < dentries_.end(); ++d) {
    const Dentry& de = dentries_[d];
    if (de.inode != kNone && (de.flags & kDentryHashed) && de.parent != d)
      ++children[dentries_[de.parent].inode];
  }
  uint32_t attached = 0;
  for (MountId m = 1; m < mounts_.end(); ++m) {
    if (!mounts_[m].attached) continue;
    ++attached;
    if (mounts_[m].parent != kNone) ++mounts[mounts_[m].mountpoint];
    // The child list holds exactly the attached mounts whose parent this
    // is, as many as the count says.
    uint32_t listed = 0;
    for (MountId c = mounts_[m].first_child; c != kNone && listed <= mounts_.end();
         c = mounts_[c].next_sibling, ++listed)
      if (!mounts_[c].attached || mounts_[c].parent != m)
        return fmt::format("mount {} lists mount {}, which is not attached to it", m, c);
    if (listed != mounts_[m].children)
      return fmt::format("mount {} lists {} children, counts {}", m, listed,
                         static_cast<uint32_t>(mounts_[m].children));
  }
  if (attached + 1 != nr_mounts_)  // and rootfs
    return fmt::format("the namespace counts {} mounts, has {} and rootfs",
                       static_cast<uint32_t>(nr_mounts_), attached);
  for (InodeId ino = 1; ino < inodes_.end(); ++ino)
    if (S_ISDIR(inodes_[ino].mode) && inodes_[ino].nchildren() != children[ino])
      return fmt::format("directory inode {} counts {} children, has {}", ino,
                         static_cast<uint32_t>(inodes_[ino].nchildren()), children[ino]);
  for (DentryId d = 1; d < dentries_.end(); ++d)
    if (dentries_[d].inode != kNone && dentries_[d].mounts() != mounts[d])
      return fmt::format("dentry {} counts {} mounts, has {}", d, dentries_[d].mounts(), mounts[d]);
  return {};
}

void World::UpdateMirror(InodeId ino) {
  const Inode& i = inodes_[ino];
  if (!S_ISDIR(i.mode) || i.dentry == kNone) return;
  Dentry& de = dentries_[i.dentry];
  de.flags = (de.flags & ~kDentryInodeMirror) | MirrorOf(i);
}

void World::SetDefaultAcl(InodeId ino, AclId acl) {
  inodes_[ino].default_acl = acl;
}

void World::SetOwner(InodeId ino, uint32_t uid, uint32_t gid) {
  inodes_[ino].uid = uid;
  inodes_[ino].gid = gid;
}

void World::SetFlags(InodeId ino, uint32_t set, uint32_t clear) {
  // The fast-search bit is derived; it is never set or cleared here.
  set &= ~kInodeFastSearch;
  clear &= ~kInodeFastSearch;
  Inode& i = inodes_[ino];
  const uint32_t flags = (i.flags & ~clear) | set;
  i.flags = (flags & ~kInodeFastSearch) | FastSearch(i.mode, i.acl, flags);
  UpdateMirror(ino);
}

void World::SetData(InodeId ino, StrId data) { inodes_[ino].data = data; }

void World::SetNlink(InodeId ino, uint32_t nlink) {
  inodes_[ino].nlink = nlink;
}

void World::SetRdev(InodeId ino, uint32_t rdev) {
  Inode& i = inodes_[ino];
  if (S_ISDIR(i.mode)) return;
  i.rdev = S_ISCHR(i.mode) || S_ISBLK(i.mode) ? rdev : 0;
}

bool World::AddOpenCounts(InodeId ino, int readers, int writers) {
  Inode& i = inodes_[ino];
  const int r = static_cast<int>(i.readers()) + readers;
  const int w = static_cast<int>(i.writers()) + writers;
  if (r < 0 || r > 0xffff || w < 0 || w > 0xffff) return false;
  i.open_counts = static_cast<uint32_t>(w) << 16 | static_cast<uint32_t>(r);
  return true;
}

void World::SetLandlockObject(InodeId ino, uint32_t object) {
  inodes_[ino].landlock_object = object;
  if (S_ISDIR(inodes_[ino].mode) && inodes_[ino].dentry != kNone)
    dentries_[inodes_[ino].dentry].dir_object = object;
}

DentryId World::FindNegative(DentryId parent, std::string_view name) const noexcept {
  const uint32_t h = internal::SaltHash(parent, internal::HashName(name));
  return neg_hash_.Find(h, [&](uint32_t id) {
    const Dentry& d = dentries_[id];
    return d.parent == parent && strings_.Get(d.name) == name;
  });
}

void World::LinkNegative(DentryId parent, std::string_view name) {
  if (FindNegative(parent, name) != kNone) return;
  DentryId d = dentries_.Alloc();
  Dentry& de = dentries_[d];
  de.parent = parent;
  SetName(de, strings_.Intern(name));
  de.inode = kNone;
  de.flags = kDentryNegative;
  de.refs = 1;  // held by its directory's negative hash
  de.dir_object = 0;
  DentryGet(parent);
  neg_hash_.Insert(internal::SaltHash(parent, internal::HashName(name)), d);
}

void World::DropNegative(DentryId parent, std::string_view name) {
  const DentryId d = FindNegative(parent, name);
  if (d == kNone) return;
  neg_hash_.Erase(internal::SaltHash(parent, internal::HashName(name)), d);
  dentries_[d].flags = 0;
  DentryPut(d);
}

void World::Hash(DentryId d) {
  Dentry& de = dentries_[d];
  if (inodes_[dentries_[de.parent].inode].flags & kInodeIncomplete)
    DropNegative(de.parent, strings_.Get(de.name));
  dhash_.Insert(HashOf(d), d);
  de.flags = de.flags | kDentryHashed;
  inodes_[dentries_[de.parent].inode].nchildren() =
      inodes_[dentries_[de.parent].inode].nchildren() + 1;
}

DentryId World::Link(DentryId parent, std::string_view name, InodeId ino) {
  DentryId d = dentries_.Alloc();
  Dentry& de = dentries_[d];
  de.parent = parent;
  SetName(de, strings_.Intern(name));
  de.inode = ino;
  Inode& i = inodes_[ino];
  de.flags = MirrorOf(i);
  de.refs = 1;  // hashed
  DentryGet(parent);
  i.refs = i.refs + 1;
  de.dir_object = 0;
  if (S_ISDIR(i.mode)) {
    i.dentry = d;
    de.dir_object = i.landlock_object;
  }
  Hash(d);
  return d;
}

void World::Unhash(DentryId d) {
  Dentry& de = dentries_[d];
  if (!(de.flags & kDentryHashed)) return;
  if (inodes_[dentries_[de.parent].inode].flags & kInodeIncomplete)
    LinkNegative(de.parent, strings_.Get(de.name));
  Forget(d);
}

std::vector<DentryId> World::HashedChildren(DentryId parent) const {
  std::vector<DentryId> out;
  for (DentryId id = 1, end = dentries_.end(); id < end; ++id) {
    const Dentry& de = dentries_[id];
    if (id != parent && de.parent == parent && (de.flags & kDentryHashed)) out.push_back(id);
  }
  return out;
}

void World::Forget(DentryId d) {
  Dentry& de = dentries_[d];
  if (!(de.flags & kDentryHashed)) return;
  dhash_.Erase(HashOf(d), d);
  de.flags = de.flags & ~kDentryHashed;
  Inode& parent = inodes_[dentries_[de.parent].inode];
  parent.nchildren() = parent.nchildren() - 1;
  DentryPut(d);
}

void World::Move(DentryId d, DentryId new_parent, std::string_view name) {
  shape_gen_ = shape_gen_ + 1;
  Dentry& de = dentries_[d];
  bool hashed = de.flags & kDentryHashed;
  DentryId old_parent = de.parent;
  // The backend keeps what it needs to find the source of a directory
  // the model moves; the old name becomes a negative entry.
  if (backend_ != nullptr && de.inode != kNone && (inodes_[de.inode].flags & kInodeIncomplete))
    backend_->WillMove(*this, d);
  if (hashed && (inodes_[dentries_[old_parent].inode].flags & kInodeIncomplete))
    LinkNegative(old_parent, strings_.Get(de.name));
  if (hashed) {
    dhash_.Erase(HashOf(d), d);
    de.flags = de.flags & ~kDentryHashed;
    Inode& op = inodes_[dentries_[old_parent].inode];
    op.nchildren() = op.nchildren() - 1;
  }
  DentryGet(new_parent);
  de.parent = new_parent;
  SetName(de, strings_.Intern(name));
  Hash(d);
  if (!hashed) de.refs = de.refs + 1;
  DentryPut(old_parent);
}

void World::Exchange(DentryId a, DentryId b) {
  shape_gen_ = shape_gen_ + 1;
  Dentry& da = dentries_[a];
  Dentry& db = dentries_[b];
  if (backend_ != nullptr) {
    if (inodes_[da.inode].flags & kInodeIncomplete) backend_->WillMove(*this, a);
    if (inodes_[db.inode].flags & kInodeIncomplete) backend_->WillMove(*this, b);
  }
  DentryId pa = da.parent, pb = db.parent;
  StrId na = da.name, nb = db.name;
  dhash_.Erase(HashOf(a), a);
  dhash_.Erase(HashOf(b), b);
  da.parent = pb;
  SetName(da, nb);
  db.parent = pa;
  SetName(db, na);
  dhash_.Insert(HashOf(a), a);
  dhash_.Insert(HashOf(b), b);
  // Each parent keeps one child; the child reference moves with the name.
}

void World::DentryGet(DentryId d) {
  dentries_[d].refs = dentries_[d].refs + 1;
}

void World::DentryPut(DentryId d) {
  // Iterative: releasing a dentry releases its parent.
  while (d != kNone) {
    Dentry& de = dentries_[d];
    uint32_t refs = de.refs - 1;
    de.refs = refs;
    if (refs != 0) return;
    DentryId parent = de.parent;
    InodeId ino = de.inode;
    de.inode = kNone;
    de.parent = kNone;
    SetName(de, 0);
    de.flags = 0;
    de.dir_object = 0;
    dentries_.Free(d);
    shape_gen_ = shape_gen_ + 1;
    if (ino != kNone) {
      if (inodes_[ino].dentry == d) inodes_[ino].dentry = kNone;
      InodePut(ino);
    }
    d = parent == d ? kNone : parent;
  }
}

void World::InodePut(InodeId ino) {
  Inode& i = inodes_[ino];
  uint32_t refs = i.refs - 1;
  i.refs = refs;
  if (refs != 0) return;
  if (on_inode_free_ != nullptr) on_inode_free_(on_inode_free_arg_, ino);
  if (backend_ != nullptr) backend_->Forgotten(ino);
  SetXattrs(ino, {});
  i.mode = 0;
  i.acl = kNone;
  i.default_acl = kNone;
  i.flags = 0;
  i.data = 0;
  i.landlock_object = kNone;
  inodes_.Free(ino);
}

std::string_view World::xattrs(InodeId ino) const noexcept {
  const uint32_t slot = XattrSlotOf(ino);
  if (slot == kNone) return {};
  return strings_.Get(xattr_slots_[slot].set);
}

void World::SetXattrs(InodeId ino, std::string_view encoded) {
  WriteGuard g(*this);
  uint32_t slot = XattrSlotOf(ino);
  if (encoded.empty()) {
    if (slot == kNone) return;
    xattr_hash_.Erase(XattrHash(ino), slot);
    xattr_slots_[slot].inode = kNone;
    xattr_slots_[slot].set = 0;
    xattr_slots_.Free(slot);
    return;
  }
  const StrId id = strings_.Intern(encoded);
  if (slot == kNone) {
    slot = xattr_slots_.Alloc();
    xattr_slots_[slot].set = id;
    xattr_slots_[slot].inode = ino;
    xattr_hash_.Insert(XattrHash(ino), slot);
    return;
  }
  xattr_slots_[slot].set = id;
}

void World::PinInode(InodeId ino) { inodes_[ino].refs = inodes_[ino].refs + 1; }

void World::UnpinInode(InodeId ino) { InodePut(ino); }

std::string World::RemountReadonlyBusy(SbId sb) const {
  for (InodeId i = 1; i < inodes_.end(); ++i) {
    const Inode& in = inodes_[i];
    if (in.mode == 0 || in.sb != sb) continue;
    if (in.nlink == 0) return "an inode with no name left is still in use (a pending removal)";
    if (!IsSpecialFile(in.mode) && in.writers() != 0) return "a file on it is open for writing";
  }
  return {};
}

void World::GetPath(PathPos p) {
  DentryGet(p.dentry);
  mounts_[p.mnt].refs = mounts_[p.mnt].refs + 1;
}

void World::PutPath(PathPos p) {
  mounts_[p.mnt].refs = mounts_[p.mnt].refs - 1;
  DentryPut(p.dentry);
}

MountId World::NewRootMount(SbId sb) {
  MountId m = mounts_.Alloc();
  Mount& mt = mounts_[m];
  mt.parent = kNone;
  mt.mountpoint = kNone;
  mt.root = sbs_[sb].root;
  mt.sb = sb;
  mt.flags = 0;
  mt.refs = 0;
  mt.children = 0;
  mt.attached = 1;
  mt.first_child = mt.last_child = mt.next_sibling = mt.prev_sibling = kNone;
  DentryGet(mt.root);
  sbs_[sb].mounts = sbs_[sb].mounts + 1;
  nr_mounts_ = nr_mounts_ + 1;
  return m;
}

MountId World::Attach(PathPos mp, SbId sb, DentryId root, uint32_t flags) {
  shape_gen_ = shape_gen_ + 1;
  MountId m = mounts_.Alloc();
  Mount& mt = mounts_[m];
  mt.parent = mp.mnt;
  mt.mountpoint = mp.dentry;
  mt.root = root;
  mt.sb = sb;
  mt.flags = flags;
  mt.refs = 0;
  mt.children = 0;
  mt.attached = 1;
  mt.first_child = mt.last_child = mt.next_sibling = kNone;
  DentryGet(root);
  DentryGet(mp.dentry);
  dentries_[mp.dentry].flags = dentries_[mp.dentry].flags + (1u << kDentryMountShift);
  Mount& parent = mounts_[mp.mnt];
  parent.children = parent.children + 1;
  mt.prev_sibling = parent.last_child;
  if (parent.last_child != kNone)
    mounts_[parent.last_child].next_sibling = m;
  else
    parent.first_child = m;
  parent.last_child = m;
  sbs_[sb].mounts = sbs_[sb].mounts + 1;
  nr_mounts_ = nr_mounts_ + 1;
  mhash_.Insert(internal::MixHash(mp.mnt, mp.dentry), m);
  return m;
}

void World::Detach(MountId m) {
  Mount& mt = mounts_[m];
  if (!mt.attached) return;
  shape_gen_ = shape_gen_ + 1;
  mt.attached = 0;
  sbs_[mt.sb].mounts = sbs_[mt.sb].mounts - 1;
  nr_mounts_ = nr_mounts_ - 1;
  // The namespace's root mount (the scenario's "/" is itself mounted in a
  // wider namespace, as in the kernel executor, so it detaches too) has no
  // mount point to release.
  if (mt.parent == kNone) return;
  mhash_.Erase(internal::MixHash(mt.parent, mt.mountpoint), m);
  Dentry& mp = dentries_[mt.mountpoint];
  mp.flags = mp.flags - (1u << kDentryMountShift);
  Mount& parent = mounts_[mt.parent];
  parent.children = parent.children - 1;
  if (mt.prev_sibling != kNone)
    mounts_[mt.prev_sibling].next_sibling = mt.next_sibling;
  else
    parent.first_child = mt.next_sibling;
  if (mt.next_sibling != kNone)
    mounts_[mt.next_sibling].prev_sibling = mt.prev_sibling;
  else
    parent.last_child = mt.prev_sibling;
  mt.next_sibling = mt.prev_sibling = kNone;
  const DentryId mp_dentry = mt.mountpoint;
  // A detached mount is its own parent (umount_tree()/unhash_mnt()): walks
  // and ".." stop at its root. The slot stays allocated: open files may
  // still name this mount.
  mt.parent = kNone;
  mt.mountpoint = kNone;
  DentryPut(mp_dentry);
  // The root dentry stays pinned while the slot lives: files on a
  // detached mount still compare against it.
}

void World::SetMountFlags(MountId m, uint32_t flags) {
  mounts_[m].flags = flags;
}

void World::SetSbFlags(SbId sb, uint32_t flags) { sbs_[sb].flags = flags; }

bool World::IsCurrent(PathPos p, InodeId ino) const noexcept {
  if (p.mnt == kNone || p.dentry == kNone || ino == kNone) return false;
  if (p.mnt >= mount_end() || p.dentry >= dentry_end()) return false;
  const Mount& m = mounts_[p.mnt];
  if (!m.attached) return false;
  const Dentry& d = dentries_[p.dentry];
  if (d.inode != ino || inodes_[ino].mode == 0) return false;
  return (d.flags & kDentryHashed) || d.parent == p.dentry;
}

}  // namespace pathwarden::vfs
