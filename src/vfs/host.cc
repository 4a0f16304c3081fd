// The live host as a backend.
// Linux: fs/namei.c lookup_slow() (->lookup on a miss), fs/dcache.c
// d_revalidate(), fs/stat.c statx(), fs/posix_acl.c (the xattr format).

#include "src/vfs/host.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "src/base/dir_names.h"

namespace pathwarden::vfs {

std::string JoinHostPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out.push_back('/');
  out.append(name);
  return out;
}

std::optional<std::string> HostPathBelow(std::string_view path, std::string_view base) {
  if (base == "/") return std::string(path.substr(1));
  if (path == base) return std::string();
  if (path.size() > base.size() && path.substr(0, base.size()) == base &&
      path[base.size()] == '/')
    return std::string(path.substr(base.size() + 1));
  return std::nullopt;
}

namespace {

// Linux: include/uapi/linux/posix_acl_xattr.h: a 4-byte version (2), then
// entries of tag (u16), perm (u16), id (u32), little-endian. `idmapped`:
// read through an idmapped mount, where getxattr() shows each named
// entry's id mapped through the idmapping, (uid_t)-1 where it maps
// nowhere (posix_acl_fix_xattr_to_user()): such an entry matches no one
// (posix_acl_permission(): an invalid vfsuid equals no fsuid, an invalid
// vfsgid is in no group) and is left out; the rest are put back in
// posix_acl_valid()'s order, which mapping may have changed.
Result<std::optional<PosixAcl>, std::string> ReadAcl(const std::string& path, const char* name,
                                                    uint64_t* calls, bool idmapped) {
  std::vector<char> buf(256);
  for (int tries = 0; tries < 4; ++tries) {
    ++*calls;
    const ssize_t n = lgetxattr(path.c_str(), name, buf.data(), buf.size());
    if (n < 0) {
      if (errno == ENODATA || errno == EOPNOTSUPP) return std::optional<PosixAcl>();
      if (errno == ERANGE) {
        ++*calls;
        const ssize_t need = lgetxattr(path.c_str(), name, nullptr, 0);
        if (need < 0) return Unexpected(fmt::format("{}: {}", name, std::strerror(errno)));
        buf.resize(static_cast<size_t>(need) + 64);
        continue;
      }
      return Unexpected(fmt::format("{}: {}", name, std::strerror(errno)));
    }
    // The one decoder of the xattr form (pathwarden/acl.h), which refuses
    // what Linux refuses: a short or ragged value, an unknown tag, the id
    // (uid_t)-1 (what getxattr() shows, in a user namespace, for an entry
    // whose id is not mapped there); then posix_acl_valid().
    auto entries =
        AclEntriesFromXattr(std::string_view(buf.data(), static_cast<size_t>(n)), idmapped);
    if (!entries)
      return Unexpected(fmt::format("{}: not an ACL Linux would accept ({})", name,
                                    ErrnoName(entries.error())));
    if (idmapped)
      std::stable_sort(entries->begin(), entries->end(), [](const AclEntry& a, const AclEntry& b) {
        if (a.tag != b.tag) return a.tag < b.tag;
        return (a.tag == AclTag::kUser || a.tag == AclTag::kGroup) && a.id < b.id;
      });
    auto acl = AclFromValidEntries(*entries);
    if (!acl)
      return Unexpected(acl.error() == kAclOutsideModel
                            ? fmt::format("{}: entries out of order or repeated", name)
                            : fmt::format("{}: not a valid ACL", name));
    return std::optional<PosixAcl>(std::move(*acl));
  }
  return Unexpected(fmt::format("{}: keeps growing", name));
}

// Why an inode read from inside a user namespace is left unknown (""
// when it is not): HostOptions::Overflow.
std::string OverflowWhy(const HostOptions::Overflow& o, uint32_t mode, uint32_t uid,
                        uint32_t gid, bool has_acl) {
  if (o.identity_uid && uid == o.uid)
    return fmt::format("its owner is shown as {}, the overflow uid, which stands for every owner "
                       "that does not map into the user namespace this is read from, and so is "
                       "the asker's own uid: whether they are the same is not known",
                       uid);
  if (o.identity_gid && gid == o.gid && (has_acl || ((mode >> 3) & 7) != (mode & 7)))
    return fmt::format("its group is shown as {}, the overflow gid, which stands for every group "
                       "that does not map into the user namespace this is read from, and so is "
                       "one of the asker's groups: whether they are the same is not known",
                       gid);
  return "";
}

// Filesystem types where a file cannot be immutable or append-only (no
// chattr), or where a write fails with EROFS before either is asked:
// statx need not report the two attributes there.
bool AttributesMoot(std::string_view fstype) {
  // FUSE never marks an inode S_IMMUTABLE or S_APPEND (its server refuses
  // what it will itself), nor does procfs (no FS_IOC_SETFLAGS).
  return fstype == "ramfs" || fstype == "proc" || fstype == "devpts" || fstype == "squashfs" || fstype == "erofs" ||
         fstype == "iso9660" || fstype == "fuse" || fstype == "fuseblk" ||
         fstype.starts_with("fuse.");
}

}  // namespace

HostBackend::~HostBackend() = default;

namespace {

// The heap bytes of a string beyond the object itself.
size_t HeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

// An unordered_map's buckets and nodes (libstdc++: a next pointer, the
// value, and the cached hash where the key type asks for one).
template <typename Map>
size_t HashMapBytes(const Map& m) {
  constexpr size_t kNode = sizeof(void*) + sizeof(typename Map::value_type) + sizeof(size_t);
  return m.bucket_count() * sizeof(void*) + m.size() * kNode;
}

}  // namespace

size_t HostBackend::bytes() const noexcept {
  size_t n = fingerprints_.bytes() + sbs_.capacity() * sizeof(SbInfo);
  for (const SbInfo& sb : sbs_) n += HeapBytes(sb.fstype) + HeapBytes(sb.why_not);
  n += HashMapBytes(anchors_) + HashMapBytes(link_key_) + HashMapBytes(anchor_of_) +
       HashMapBytes(why_);
  for (const auto& [d, hp] : anchors_) n += HeapBytes(hp.path);
  for (const auto& [ino, why] : why_) n += HeapBytes(why);
  // A red-black tree node: colour and three links, then the value.
  n += links_.size() * (4 * sizeof(void*) + sizeof(decltype(links_)::value_type));
  return n;
}

uint32_t HostBackend::Fingerprint(uint64_t dev, uint64_t ino) {
  uint64_t x = dev * 0x9e3779b97f4a7c15ull ^ ino;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x) | 1;  // never 0: 0 is "not from the host"
}

std::optional<HostBackend::Found> HostBackend::Read(int dirfd, const std::string& name,
                                                    const std::string& path, int* err) {
  struct statx stx {};
  ++stats_.statx_calls;
  if (statx(dirfd, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_AS_STAT,
            STATX_BASIC_STATS | STATX_MNT_ID, &stx) != 0) {
    *err = errno;
    return std::nullopt;
  }
  Found f;
  f.mode = stx.stx_mode;
  f.uid = stx.stx_uid;
  f.gid = stx.stx_gid;
  f.nlink = stx.stx_nlink;
  f.rdev = static_cast<uint32_t>(makedev(stx.stx_rdev_major, stx.stx_rdev_minor));
  f.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  f.ino = stx.stx_ino;
  f.mnt_id = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0;
  constexpr uint64_t kBoth = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
  f.attrs_known = (stx.stx_attributes_mask & kBoth) == kBoth;
  if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_IMMUTABLE)
    f.attrs |= kInodeImmutable;
  if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_APPEND) f.attrs |= kInodeAppend;
  if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_VERITY) f.attrs |= kInodeVerity;
  f.automount = stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_AUTOMOUNT;
  f.path = path;
  if (S_ISLNK(f.mode)) {
    // Symlinks have no ACLs; their body is all there is to read.
    std::string buf(static_cast<size_t>(stx.stx_size) + 1, '\0');
    for (;;) {
      ++stats_.readlink_calls;
      const ssize_t n = readlinkat(dirfd, name.c_str(), buf.data(), buf.size());
      if (n < 0) {
        *err = errno;
        return std::nullopt;
      }
      if (static_cast<size_t>(n) < buf.size()) {
        buf.resize(static_cast<size_t>(n));
        break;
      }
      buf.resize(buf.size() * 2);  // grew since statx
    }
    f.link = std::move(buf);
    return f;
  }
  const bool idmapped = f.mnt_id != 0 && idmapped_mnts_.count(f.mnt_id) != 0;
  auto acl = ReadAcl(path, "system.posix_acl_access", &stats_.xattr_calls, idmapped);
  if (acl) {
    if (*acl) ++stats_.acls;
    f.acl = std::move(*acl);
  } else {
    f.bad_acl = acl.error();
  }
  if (S_ISDIR(f.mode)) {
    auto def = ReadAcl(path, "system.posix_acl_default", &stats_.xattr_calls, idmapped);
    if (def) {
      if (*def) ++stats_.acls;
      f.default_acl = std::move(*def);
    } else if (f.bad_acl.empty()) {
      f.bad_acl = def.error();
    }
  }
  return f;
}

void HostBackend::MarkOpaque(World& w, InodeId ino, uint32_t flag, std::string why) {
  w.SetFlags(ino, flag, 0);
  if (flag & kInodeUnseen) ++stats_.unseen;
  why_[ino] = std::move(why);
}

bool HostBackend::SetAttrs(World& w, InodeId ino, const Found& f) {
  const Inode& i = w.inode(ino);
  bool changed = false;
  AclId acl = kNone;
  if (f.acl) {
    uint32_t m = f.mode;
    // An ACL equivalent to the mode is not kept (posix_acl_equiv_mode()).
    if (!f.acl->EquivMode(&m)) acl = w.InternAcl(*f.acl);
  }
  if (i.mode != f.mode || i.acl != acl) {
    w.SetModeAndAcl(ino, f.mode, acl);
    changed = true;
  }
  AclId def = kNone;
  if (f.default_acl) def = w.InternAcl(*f.default_acl);
  if (i.default_acl != def) {
    w.SetDefaultAcl(ino, def);
    changed = true;
  }
  // Through an idmapped mount statx shows an id the idmapping maps
  // nowhere as the overflow id: unless a mapped id shows as that too,
  // it is the invalid id.
  uint32_t uid = f.uid, gid = f.gid;
  std::string ambiguous;
  if (const SbIdmap* im = w.sb_idmap(i.sb)) {
    auto unmap = [&](uint32_t* id, uint32_t overflow, const std::vector<IdRange>& map,
                     const char* what) {
      if (*id != overflow) return;
      if (IdInside(map, *id))
        ambiguous = fmt::format("its {0} shows as {1} through the idmapped mount, which is both "
                                "the overflow {0} id and an id the idmapping gives",
                                what, *id);
      *id = kInvalidId;
    };
    unmap(&uid, overflow_uid_, im->uids, "owner");
    unmap(&gid, overflow_gid_, im->gids, "group");
  }
  if (i.uid != uid || i.gid != gid) {
    w.SetOwner(ino, uid, gid);
    changed = true;
  }
  if (i.nlink != f.nlink) {
    w.SetNlink(ino, f.nlink);
    changed = true;
  }
  // A device bound on its own is a mount's root, made before it was read.
  if ((S_ISCHR(f.mode) || S_ISBLK(f.mode)) && i.rdev != f.rdev) {
    w.SetRdev(ino, f.rdev);
    changed = true;
  }
  // procfs: its classes of names (ProcFlags()), a process's directory
  // immutable though statx does not say so.
  std::string proc_why;
  uint32_t proc = 0, attrs = f.attrs;
  if (sbs_[i.sb].proc) {
    proc = ProcFlags(sbs_[i.sb], f, &proc_why);
    attrs |= proc & kInodeImmutable;
    proc &= ~kInodeImmutable;
  }
  constexpr uint32_t kAttrs = kInodeImmutable | kInodeAppend | kInodeVerity;
  if ((i.flags & kAttrs) != attrs) {
    w.SetFlags(ino, attrs, kAttrs & ~attrs);
    changed = true;
  }
  if (S_ISLNK(f.mode) && w.str(i.data) != f.link) {
    w.SetData(ino, w.Intern(f.link));
    changed = true;
  }
  // What the model cannot know makes the inode opaque: every check on it
  // is unknown rather than a guess.
  const SbInfo& sb = sbs_[i.sb];
  if (sb.fuse && !(i.flags & kInodeFuse)) {
    w.SetFlags(ino, kInodeFuse, 0);
    changed = true;
  }
  std::string fs_why;
  if (sb.proc) {
    constexpr uint32_t kProc = kInodeProcSys | kInodeProcSysNet | kInodeProcSysUser;
    fs_why = std::move(proc_why);
    if ((i.flags & kProc) != proc) {
      w.SetFlags(ino, proc, kProc & ~proc);
      changed = true;
    }
  }
  if (sb.btrfs) {
    constexpr uint32_t kSubvol = kInodeSubvolMask | kInodeSubvolReadonly | kInodeSubvolRoot;
    const uint32_t subvol = SubvolFlags(f, &fs_why);
    if ((i.flags & kSubvol) != subvol) {
      w.SetFlags(ino, subvol, kSubvol & ~subvol);
      changed = true;
    }
  }
  if (!sb.why_not.empty()) {
    if (!(i.flags & kInodeOpaque)) MarkOpaque(w, ino, kInodeOpaque | kInodeUnseen, sb.why_not);
  } else if (!ambiguous.empty()) {
    MarkOpaque(w, ino, kInodeOpaque, std::move(ambiguous));
  } else if (!f.bad_acl.empty()) {
    MarkOpaque(w, ino, kInodeOpaque, fmt::format("its ACL cannot be read: {}", f.bad_acl));
  } else if (!fs_why.empty()) {
    MarkOpaque(w, ino, kInodeOpaque, std::move(fs_why));
  } else if (sb.fuse && (f.acl || f.default_acl)) {
    MarkOpaque(w, ino, kInodeOpaque,
               "a FUSE server's POSIX ACL, which the kernel enforces only when the server asked "
               "for FUSE_POSIX_ACL at mount time (fuse_get_inode_acl()); the host does not show "
               "whether it did");
  } else if (!f.attrs_known && !S_ISLNK(f.mode) && !AttributesMoot(sb.fstype)) {
    MarkOpaque(w, ino, kInodeOpaque,
               fmt::format("statx on {} does not say whether it is immutable or append-only",
                           sb.fstype));
  } else if (std::string why = overflow_ ? OverflowWhy(*overflow_, f.mode, f.uid, f.gid,
                                                       f.acl.has_value())
                                         : std::string();
             !why.empty()) {
    MarkOpaque(w, ino, kInodeOpaque, std::move(why));
  } else if (i.flags & kInodeOpaque) {
    w.SetFlags(ino, 0, kInodeOpaque);
    why_.erase(ino);
  }
  // A program some process runs: opening it for writing is ETXTBSY; while
  // some process's program cannot be read, any file one could run (an
  // execute bit) may be one.
  uint32_t exec = 0;
  if (S_ISREG(f.mode)) {
    if (Executing(f.dev, f.ino)) {
      exec = kInodeDenyWrite;
    } else if (executing_.unseen != 0 && !assume_unseen_run_nothing_ && (f.mode & 0111)) {
      exec = kInodeDenyWriteUnknown;
    }
  }
  constexpr uint32_t kExec = kInodeDenyWrite | kInodeDenyWriteUnknown;
  if ((i.flags & kExec) != exec) {
    w.SetFlags(ino, exec, kExec & ~exec);
    changed = true;
  }
  // An active swap file: no name of it removed, its size never changed;
  // while a listed one cannot be found, any regular file may be it.
  uint32_t swap = 0;
  if (S_ISREG(f.mode)) {
    if (Swapping(f.dev, f.ino)) {
      swap = kInodeSwapfile;
    } else if (swaps_.unseen != 0) {
      swap = kInodeSwapfileUnknown;
    }
  }
  constexpr uint32_t kSwap = kInodeSwapfile | kInodeSwapfileUnknown;
  if ((i.flags & kSwap) != swap) {
    w.SetFlags(ino, swap, kSwap & ~swap);
    changed = true;
  }
  fingerprints_.set(ino, Fingerprint(f.dev, f.ino));
  return changed;
}

InodeId HostBackend::NewInodeFor(World& w, SbId sb, const Found& f) {
  const InodeId ino = w.NewInode(sb, f.mode, f.uid, f.gid, f.rdev);
  SetAttrs(w, ino, f);
  if (S_ISDIR(f.mode)) w.SetFlags(ino, kInodeIncomplete, 0);
  return ino;
}

DentryId HostBackend::Synthetic(World& w, DentryId d, std::string_view name, uint32_t mode,
                                std::string why) {
  w.DropNegative(d, name);
  const SbId sb = w.inode_at(d).sb;
  const InodeId ino = w.NewInode(sb, mode & S_IFMT, 0, 0);
  w.SetFlags(ino, kInodeOpaque | kInodeUnseen | (S_ISDIR(mode) ? kInodeIncomplete : 0) |
                      (sbs_[sb].fuse ? kInodeFuse : 0),
             0);
  why_[ino] = std::move(why);
  return w.Link(d, name, ino);
}

void HostBackend::SetAnchor(const World& w, DentryId d, HostPath hp) {
  anchors_[d] = std::move(hp);
  anchor_of_[w.inode_of(d)] = d;
}

std::optional<HostBackend::HostPath> HostBackend::HostPathOf(const World& w, DentryId d) const {
  std::vector<std::string_view> names;
  for (uint32_t n = 0; n <= w.dentry_end(); ++n) {
    if (auto it = anchors_.find(d); it != anchors_.end()) {
      HostPath hp = it->second;
      for (auto name = names.rbegin(); name != names.rend(); ++name)
        hp.path = JoinHostPath(hp.path, *name);
      return hp;
    }
    const Dentry& de = w.dentry(d);
    if (de.parent == d || de.parent == kNone) return std::nullopt;
    names.push_back(w.str(de.name));
    d = de.parent;
  }
  return std::nullopt;
}

Result<DentryId, std::string> HostBackend::FillName(World& w, DentryId d, const HostPath& hp,
                                                    std::string_view name) {
  const std::string path = JoinHostPath(hp.path, name);
  ++stats_.lookups;
  int err = 0;
  std::optional<Found> f = Read(AT_FDCWD, path, path, &err);
  const InodeId dino = w.inode_of(d);
  if (!f) {
    if (err == ENOENT || err == ENOTDIR) {
      ++stats_.negatives;
      w.LinkNegative(d, name);
      return kNone;
    }
    if (err == EACCES || err == EPERM) {
      MarkOpaque(w, dino, kInodeUnseen,
                 fmt::format("the host does not let pathwarden (uid {}) search {}: what it "
                             "holds is unknown",
                             geteuid(), hp.path));
      return kNone;
    }
    return Unexpected(fmt::format("statx {}: {}", path, std::strerror(err)));
  }
  if (f->mnt_id != 0 && hp.mnt != 0 && f->mnt_id != hp.mnt) {
    // Another mount covers the name on the host, one the mount table read
    // at the start did not have.
    return Synthetic(w, d, name, f->mode,
                     fmt::format("{} is covered by a mount (id {}) the model does not have",
                                 path, f->mnt_id));
  }
  const SbId sb = w.inode(dino).sb;
  // An overlay's hard links are one inode or several as it hashes them
  // (ovl_hash_bylower(): a lower file's links are broken by copy-up):
  // each name is its own, so a Landlock rule on one is not seen through
  // another (a missed grant, never a false one).
  const auto ovl = ovl_sbs_.find(sb);
  if (!S_ISDIR(f->mode) && f->nlink > 1 && ovl == ovl_sbs_.end()) {
    const std::pair<uint64_t, uint64_t> key{f->dev, f->ino};
    if (auto it = links_.find(key); it != links_.end()) {
      const InodeId ino = it->second;
      if (w.inode(ino).mode != 0 && w.inode(ino).sb == sb) {
        ++stats_.hard_links;
        SetAttrs(w, ino, *f);
        return w.Link(d, name, ino);
      }
    }
    const InodeId ino = NewInodeFor(w, sb, *f);
    links_[key] = ino;
    link_key_[ino] = key;
    return w.Link(d, name, ino);
  }
  const InodeId ino = NewInodeFor(w, sb, *f);
  if (S_ISDIR(f->mode) && ovl != ovl_sbs_.end()) {
    std::optional<OvlDir> layers;
    std::string why;
    if (auto p = ovl_dirs_.find(dino); p != ovl_dirs_.end())
      layers = OvlChild(ovl->second, p->second, name, &why);
    SetOvlDir(w, ino, std::move(layers));
  }
  return w.Link(d, name, ino);
}

Result<void, std::string> HostBackend::Lookup(World& w, PathPos dir, std::string_view name) {
  const DentryId d = dir.dentry;
  const InodeId dino = w.inode_of(d);
  if (w.inode(dino).flags & (kInodeOpaque | kInodeUnseen)) return {};
  if (w.Lookup(d, name) != kNone || w.KnownAbsent(d, name)) return {};
  std::optional<HostPath> hp = HostPathOf(w, d);
  if (!hp) {
    MarkOpaque(w, dino, kInodeUnseen,
               fmt::format("no mount visible on the host reaches {}", w.DisplayPathOf(dir, w.root())));
    return {};
  }
  auto r = FillName(w, d, *hp, name);
  if (!r) return Unexpected(r.error());
  return {};
}

Result<void, std::string> HostBackend::ListInto(World& w, PathPos dir,
                                                std::vector<DentryId>* children) {
  const DentryId d = dir.dentry;
  const InodeId dino = w.inode_of(d);
  if (w.inode(dino).flags & (kInodeOpaque | kInodeUnseen))
    return Unexpected(UnknownWhy(w, dino));
  std::optional<HostPath> hp = HostPathOf(w, d);
  if (!hp) {
    MarkOpaque(w, dino, kInodeUnseen,
               fmt::format("no mount visible on the host reaches {}", w.DisplayPathOf(dir, w.root())));
    return Unexpected(UnknownWhy(w, dino));
  }
  // Opening a directory has no side effect but its access time, which
  // O_NOATIME spares where the caller owns it or has CAP_FOWNER.
  int fd = open(hp->path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM)
    fd = open(hp->path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return Unexpected(fmt::format("the host does not let pathwarden (uid {}) list {}: {}",
                                  geteuid(), hp->path, std::strerror(errno)));
  ++stats_.listings;
  // The directory opened must be the one the world holds.
  {
    struct statx stx {};
    ++stats_.statx_calls;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &stx) != 0 ||
        (hp->mnt != 0 && (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != hp->mnt) ||
        (fingerprints_.get(dino) != 0 &&
         fingerprints_.get(dino) !=
             Fingerprint(makedev(stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino))) {
      close(fd);
      return Unexpected(fmt::format("{} changed on the host since it was read", hp->path));
    }
  }
  auto names = internal::ReadDirNames(fd);
  if (!names) {
    close(fd);
    return Unexpected(fmt::format("listing {}: {}", hp->path, std::strerror(names.error())));
  }
  std::unordered_set<DentryId> listed;
  for (const std::string& name : *names) {
    DentryId c = w.Lookup(d, name);
    if (c == kNone) {
      // What the model removed stays removed; but where the host is read
      // again as it changes (NamesMayGo()), an absence read before may be
      // a name made since.
      if (w.FindNegative(d, name) != kNone) {
        if (!revalidates_) continue;
        w.DropNegative(d, name);
      }
      if (JoinHostPath(hp->path, name).size() >= PATH_MAX) {
        // Names are read by path, and this path is ENAMETOOLONG to every
        // call that takes one (Linux reaches the object only relative to
        // a directory): it is there, of the type fstatat() gives, and
        // unknown. Enough for the listing to be whole (rmdir's emptiness).
        struct statx stx {};
        ++stats_.statx_calls;
        if (statx(fd, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE,
                  &stx) != 0) {
          if (errno == ENOENT) continue;  // gone since listed
          const int err = errno;
          close(fd);
          return Unexpected(fmt::format("statx {} in {}: {}", name, hp->path, std::strerror(err)));
        }
        c = Synthetic(w, d, name, stx.stx_mode & S_IFMT,
                      "its path on the host is PATH_MAX bytes or longer: pathwarden reads "
                      "objects by path");
      } else {
        auto r = FillName(w, d, *hp, name);
        if (!r) {
          close(fd);
          return Unexpected(r.error());
        }
        if (w.inode(dino).flags & kInodeUnseen) {
          close(fd);
          return Unexpected(UnknownWhy(w, dino));
        }
        c = *r;
      }
    }
    if (c != kNone) listed.insert(c);
    if (children != nullptr && c != kNone) children->push_back(c);
  }
  close(fd);
  if (revalidates_) {
    // A name read from the host before and gone from it now (d_revalidate()
    // would find it so): forgotten, as Revalidate() forgets it. What the
    // model made itself has no fingerprint and stays.
    for (DentryId c : w.HashedChildren(d)) {
      if (listed.count(c) || w.dentry(c).mounts() != 0) continue;
      const InodeId cino = w.inode_of(c);
      if (cino != kNone && fingerprints_.get(cino) != 0) w.Forget(c);
    }
  }
  w.SetFlags(dino, 0, kInodeIncomplete);
  return {};
}

Result<void, std::string> HostBackend::List(World& w, PathPos dir) {
  return ListInto(w, dir, nullptr);
}

void HostBackend::WillMove(World& w, DentryId d) {
  if (anchors_.count(d)) return;
  if (std::optional<HostPath> hp = HostPathOf(w, d)) SetAnchor(w, d, std::move(*hp));
}

std::string HostBackend::WhyOpaque(const World& w, InodeId ino) const {
  if (auto it = why_.find(ino); it != why_.end()) return it->second;
  const SbInfo& sb = sbs_[w.inode(ino).sb];
  if (!sb.why_not.empty()) return sb.why_not;
  return "the model cannot see it on the host";
}

void HostBackend::Forgotten(InodeId ino) {
  why_.erase(ino);
  ovl_dirs_.erase(ino);
  fingerprints_.clear(ino);
  if (auto it = link_key_.find(ino); it != link_key_.end()) {
    if (auto l = links_.find(it->second); l != links_.end() && l->second == ino) links_.erase(l);
    link_key_.erase(it);
  }
  if (auto it = anchor_of_.find(ino); it != anchor_of_.end()) {
    anchors_.erase(it->second);
    anchor_of_.erase(it);
  }
}

Result<DentryId, std::string> HostBackend::Reach(World& w, DentryId from, std::string_view rel) {
  DentryId cur = from;
  size_t i = 0;
  while (i < rel.size()) {
    size_t end = rel.find('/', i);
    if (end == std::string_view::npos) end = rel.size();
    const std::string_view name = rel.substr(i, end - i);
    i = end + 1;
    if (name.empty() || name == ".") continue;
    DentryId child = w.Lookup(cur, name);
    const InodeId cino = w.inode_of(cur);
    if (child == kNone && !(w.inode(cino).flags & (kInodeOpaque | kInodeUnseen)) &&
        !w.KnownAbsent(cur, name)) {
      if (std::optional<HostPath> hp = HostPathOf(w, cur)) {
        auto r = FillName(w, cur, *hp, name);
        if (!r) return Unexpected(r.error());
        child = *r;
      }
    }
    if (child == kNone) {
      child = Synthetic(w, cur, name, S_IFDIR,
                        "not visible on the host: it leads to a mount point or a mount's root "
                        "that other mounts hide");
    }
    cur = child;
  }
  return cur;
}

Result<uint64_t, std::string> HostBackend::FillBelow(
    World& w, PathPos top, const std::function<void(uint64_t)>& progress) {
  uint64_t entries = 1;
  std::vector<PathPos> stack{top};
  std::vector<DentryId> kids;
  while (!stack.empty()) {
    const PathPos dir = stack.back();
    stack.pop_back();
    const InodeId dino = w.inode_of(dir.dentry);
    if (w.inode(dino).flags & (kInodeOpaque | kInodeUnseen)) continue;
    kids.clear();
    if (w.inode(dino).flags & kInodeIncomplete) {
      if (auto r = ListInto(w, dir, &kids); !r) {
        if (w.inode(dino).flags & (kInodeOpaque | kInodeUnseen)) continue;
        return Unexpected(r.error());
      }
    } else {
      continue;  // complete already: filled by an earlier listing, or not the host's
    }
    entries += kids.size();
    if (progress) progress(entries);
    for (DentryId c : kids) {
      PathPos p{dir.mnt, c};
      // Into the mounts on it, as the walk goes.
      while (w.dentry(p.dentry).mounts() != 0) {
        const MountId m = w.LookupMount(p.mnt, p.dentry);
        if (m == kNone) break;
        p = {m, w.mount(m).root};
      }
      if (S_ISDIR(w.inode_at(p.dentry).mode)) stack.push_back(p);
    }
  }
  return entries;
}

Result<bool, std::string> HostBackend::Revalidate(World& w, PathPos dir, std::string_view name) {
  const DentryId d = dir.dentry;
  const InodeId dino = w.inode_of(d);
  if (w.inode(dino).flags & (kInodeOpaque | kInodeUnseen)) return false;
  std::optional<HostPath> hp = HostPathOf(w, d);
  if (!hp) return false;
  const DentryId e = w.Lookup(d, name);
  const bool negative = w.FindNegative(d, name) != kNone;
  if (e == kNone && !negative) return false;  // a miss fills it fresh
  ++stats_.revalidated;
  if (e != kNone && w.dentry(e).mounts() != 0) return false;  // the mount's root is asked
  if (e != kNone && fingerprints_.get(w.inode_of(e)) == 0)
    return false;  // synthetic: nothing on the host to compare
  const std::string path = JoinHostPath(hp->path, name);
  int err = 0;
  std::optional<Found> f = Read(AT_FDCWD, path, path, &err);
  if (!f && err != ENOENT && err != ENOTDIR)
    return Unexpected(fmt::format("statx {}: {}", path, std::strerror(err)));
  if (e == kNone) {
    if (!f) return false;
    w.DropNegative(d, name);
    auto r = FillName(w, d, *hp, name);
    if (!r) return Unexpected(r.error());
    ++stats_.refreshed;
    return true;
  }
  const InodeId ino = w.inode_of(e);
  const bool same = f && ((f->mode ^ w.inode(ino).mode) & S_IFMT) == 0 &&
                    fingerprints_.get(ino) == Fingerprint(f->dev, f->ino) &&
                    !(f->mnt_id != 0 && hp->mnt != 0 && f->mnt_id != hp->mnt);
  if (!same) {
    w.Forget(e);
    if (w.inode(dino).flags & kInodeIncomplete) {
      if (!f) w.LinkNegative(d, name);
    }
    if (f) {
      auto r = FillName(w, d, *hp, name);
      if (!r) return Unexpected(r.error());
    }
    ++stats_.refreshed;
    return true;
  }
  bool changed = SetAttrs(w, ino, *f);
  if (S_ISDIR(f->mode) && !(w.inode(ino).flags & kInodeIncomplete)) {
    // New names may have come: they are looked up again on a miss.
    w.SetFlags(ino, kInodeIncomplete, 0);
  }
  if (changed) ++stats_.refreshed;
  return changed;
}

Result<bool, std::string> HostBackend::RevalidateRoot(World& w, MountId m) {
  const DentryId root = w.mount(m).root;
  auto it = anchors_.find(root);
  if (it == anchors_.end()) return false;
  const InodeId ino = w.inode_of(root);
  if (!sbs_[w.inode(ino).sb].why_not.empty()) return false;
  ++stats_.revalidated;
  int err = 0;
  std::optional<Found> f = Read(AT_FDCWD, it->second.path, it->second.path, &err);
  if (!f) return Unexpected(fmt::format("statx {}: {}", it->second.path, std::strerror(err)));
  if (fingerprints_.get(ino) != 0 && fingerprints_.get(ino) != Fingerprint(f->dev, f->ino))
    return Unexpected(fmt::format("the mount on {} was replaced on the host", it->second.path));
  const bool changed = SetAttrs(w, ino, *f);
  if (changed) ++stats_.refreshed;
  return changed;
}

}  // namespace pathwarden::vfs
