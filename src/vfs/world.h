// The filesystem model: inodes, dentries, mounts and superblocks of tmpfs
// filesystems, as the VFS of Linux 6.18 holds them.
// Linux: fs/dcache.c, fs/inode.c, fs/namespace.c, mm/shmem.c

#ifndef PATHWARDEN_SRC_VFS_WORLD_H_
#define PATHWARDEN_SRC_VFS_WORLD_H_

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <atomic>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "src/base/arena.h"
#include "src/base/id_hash.h"
#include "src/base/seqlock.h"
#include "src/base/string_pool.h"

namespace pathwarden::vfs {

using internal::Published;
using internal::SeqField;
using internal::StrId;

using InodeId = uint32_t;
using DentryId = uint32_t;
using MountId = uint32_t;
using SbId = uint32_t;
using AclId = uint32_t;

// Id 0 of every arena means "none".
inline constexpr uint32_t kNone = 0;

// Inode::flags
inline constexpr uint32_t kInodeFastSearch = 1u << 0;  // anyone may search
inline constexpr uint32_t kInodeImmutable = 1u << 1;   // chattr +i
inline constexpr uint32_t kInodeAppend = 1u << 2;      // chattr +a
inline constexpr uint32_t kInodeDead = 1u << 3;        // IS_DEADDIR
// A directory of a backend that fills on demand (src/vfs/backend.h) whose
// names are not all known: a lookup that finds nothing asks the backend,
// unless a negative entry says the name is absent.
inline constexpr uint32_t kInodeIncomplete = 1u << 4;
// What the model cannot decide for this inode: its filesystem decides
// permissions itself, or the backend could not see it. Every permission
// check on it, and every lookup in it that finds nothing, is unknown
// (src/vfs/backend.h kErrUnknown); never a guess.
inline constexpr uint32_t kInodeOpaque = 1u << 5;
// A directory whose names the backend cannot see (the host refuses
// pathwarden itself): every lookup in it that finds nothing is unknown.
// Its own attributes are known.
inline constexpr uint32_t kInodeUnseen = 1u << 6;
// A regular file a process of the host executes: its i_writecount is held
// negative (Linux: fs/exec.c exe_file_deny_write_access()), so an open
// for writing or a truncate is ETXTBSY (get_write_access()). Set by the
// host backend from the processes it can read.
inline constexpr uint32_t kInodeDenyWrite = 1u << 7;
// A regular file with an execute bit while some process's program cannot
// be read (HostOptions::unseen_programs): it may be running, so an open
// for writing or a truncate is unknown.
inline constexpr uint32_t kInodeDenyWriteUnknown = 1u << 8;
// An active swap file (Linux: S_SWAPFILE, set by swapon(2)): removing or
// renaming a name of it, or renaming onto one, is EPERM (may_delete());
// changing its size is ETXTBSY (notify_change() for truncate, O_TRUNC
// and ftruncate, after the LSM's truncate check; vfs_fallocate()). Set
// by the host backend from /proc/swaps.
inline constexpr uint32_t kInodeSwapfile = 1u << 9;
// A regular file while some swap file /proc/swaps lists could not be
// found: it may be that one, so the calls above are unknown.
inline constexpr uint32_t kInodeSwapfileUnknown = 1u << 10;
// An fs-verity file (STATX_ATTR_VERITY; ext4, f2fs, btrfs): its
// filesystem refuses to open it for writing and to change its size
// (EPERM: fsverity_file_open(), fsverity_prepare_setattr(), after the
// LSM hooks). The kernel this was built against has no CONFIG_FS_VERITY,
// so neither could be confirmed: such writes are unknown. Set by the host
// backend from statx.
inline constexpr uint32_t kInodeVerity = 1u << 11;
// An overlayfs directory with a lower layer under it (merged, or lower
// only): renaming it needs redirect_dir=on, without which ovl_rename()
// answers EXDEV ("don't copy up directory trees"; ovl_can_move()). Set by
// the host backend, which reads the layers (src/vfs/host.cc).
inline constexpr uint32_t kInodeOvlPinned = 1u << 12;
// An overlayfs directory whose layers could not be read: whether a rename
// of it is EXDEV is unknown.
inline constexpr uint32_t kInodeOvlPinnedUnknown = 1u << 13;
// An inode of a read-only btrfs subvolume or snapshot
// (btrfs_root_readonly()): a write to a regular file, directory or
// symlink is EROFS after the immutable check (btrfs_permission()), and
// every attribute or extended attribute change is EROFS before the
// owner checks (btrfs_setattr(), btrfs_xattr_handler_set()). Set by the
// host backend (BTRFS_IOC_GET_SUBVOL_INFO).
inline constexpr uint32_t kInodeSubvolReadonly = 1u << 14;
// The root directory of a btrfs subvolume (BTRFS_FIRST_FREE_OBJECTID): it
// alone may move between subvolumes (btrfs_rename()).
inline constexpr uint32_t kInodeSubvolRoot = 1u << 15;
// An inode of a FUSE mount with default_permissions (World::sb_fuse()):
// its ->permission, getattr, setattr and listxattr first ask whether the
// caller may enter (fuse_allow_current_process(): without allow_other,
// only the mounter), EACCES if not; what the kernel then lets through
// goes to the server, which answers last (an evaluation that met one is
// marked: perm::tls_fuse_met). The walk never takes the fast search path
// through it.
inline constexpr uint32_t kInodeFuse = 1u << 16;
// A /proc/sys inode: proc_sys_permission() decides instead of
// generic_permission(): no execution of a file; the sysctl's mode (the
// inode's) read as owner bits for euid 0, group bits for a task in group
// 0, other bits for the rest, capabilities not counted (test_perm()).
// Under net/, CAP_NET_ADMIN gives everyone the owner bits
// (net_ctl_permissions()); under user/, CAP_SYS_RESOURCE does, and the
// rest get at most read (set_permissions()). Set by the host backend
// (src/vfs/host_proc.cc), for the reader's own namespaces.
inline constexpr uint32_t kInodeProcSys = 1u << 17;
inline constexpr uint32_t kInodeProcSysNet = 1u << 18;
inline constexpr uint32_t kInodeProcSysUser = 1u << 19;
// The high bits: which subvolume of its filesystem an inode belongs to
// (SubvolOf()), 0 where the filesystem has none. A hard link or a rename
// of anything but a subvolume's root between subvolumes is EXDEV
// (btrfs_link(), btrfs_rename()). New inodes take their directory's.
inline constexpr uint32_t kInodeSubvolShift = 20;
inline constexpr uint32_t kInodeSubvolMax = 0xfffu;
inline constexpr uint32_t kInodeSubvolMask = kInodeSubvolMax << kInodeSubvolShift;
inline uint32_t SubvolOf(uint32_t inode_flags) { return inode_flags >> kInodeSubvolShift; }

// Mount::flags (MNT_*)
inline constexpr uint32_t kMntReadonly = 1u << 0;
inline constexpr uint32_t kMntNoexec = 1u << 1;
inline constexpr uint32_t kMntNosuid = 1u << 2;
inline constexpr uint32_t kMntNodev = 1u << 3;
inline constexpr uint32_t kMntNosymfollow = 1u << 4;

// Superblock::flags
inline constexpr uint32_t kSbReadonly = 1u << 0;
// An overlayfs superblock (Linux: fs/overlayfs/), modelled where its
// mounter is root of the initial user namespace: with every capability,
// its own check on the real inode (ovl_permission()) refuses nothing the
// check on the overlay inode allows (docs/architecture.md). What overlay
// answers itself: its own xattr prefix alone (trusted.overlay., or
// user.overlay. with kSbOverlayUserXattr) is EINVAL, a whiteout (a
// character device 0:0) cannot be made (EPERM), a rename takes no
// RENAME_WHITEOUT (EINVAL), and a directory with a lower layer moves only
// with redirect_dir=on (kInodeOvlPinned).
inline constexpr uint32_t kSbOverlay = 1u << 1;
inline constexpr uint32_t kSbOverlayUserXattr = 1u << 2;
// An idmapped mount's own superblock (the host backend gives each one its
// own, Linux: fs/mnt_idmapping.c): its inodes' owners, groups and ACL
// entries are held as the mount shows them, mapped down through its
// idmapping (i_uid_into_vfsuid()), kInvalidId where it maps them nowhere;
// sb_idmap() holds the idmapping, whose outside ids a caller's fsuid and
// fsgid must be among to create there (fsuidgid_has_mapping(): EOVERFLOW).
inline constexpr uint32_t kSbIdmapped = 1u << 3;
// A btrfs superblock (Linux: fs/btrfs/): generic checks, and its
// subvolumes (kInodeSubvol*) and properties (btrfs.* attributes).
inline constexpr uint32_t kSbBtrfs = 1u << 4;
// procfs (Linux: fs/proc/): its files have no extended attributes and set
// their own attributes (proc_setattr()); /proc/sys inodes are
// kInodeProcSys.
inline constexpr uint32_t kSbProc = 1u << 5;

// SbFuse
//
// Who a FUSE mount admits (fuse_allow_current_process(), Linux:
// fs/fuse/dir.c): with allow_other (`gated` false), every task of the
// mount's user namespace, which the model takes as the initial one;
// without it (fuse_permissible_uidgid()), a task whose real, effective and
// saved uids are all `uid` and gids all `gid`, and one with CAP_SYS_ADMIN
// only where the fuse module's allow_sys_admin_access says so
// (`sys_admin`: nullopt when it could not be read).
struct SbFuse {
  bool gated = false;
  uint32_t uid = 0, gid = 0;
  std::optional<bool> sys_admin;
};
// INVALID_VFSUID, INVALID_VFSGID: an id an idmapped mount maps nowhere.
// Never a caller's id, never capable over (Cred::CapableWrtInode()).
inline constexpr uint32_t kInvalidId = 0xFFFFFFFFu;

// SbIdmap
//
// An idmapped mount's idmapping, as its user namespace's uid_map and
// gid_map: an inode's id `inside` shows as `outside` through the mount;
// a caller's id goes back up (IdInside()) or, outside every range, has
// no id of the filesystem (nullptr: the same, failing closed).
struct SbIdmap {
  std::vector<IdRange> uids, gids;
  static bool GivesUid(const SbIdmap* m, uint32_t uid) {
    return m != nullptr && IdInside(m->uids, uid).has_value();
  }
  static bool GivesGid(const SbIdmap* m, uint32_t gid) {
    return m != nullptr && IdInside(m->gids, gid).has_value();
  }
};

// IsSpecialFile()
//
// special_file() (include/linux/fs.h): devices, FIFOs and sockets, whose
// opens for writing take no write access on their mount.
inline bool IsSpecialFile(uint32_t mode) {
  return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode);
}

// fs.mount-max's default (fs/namespace.c sysctl_mount_max): the most
// mounts a mount namespace holds.
inline constexpr uint32_t kMountMaxDefault = 100000;

class Backend;

// Dentry::flags: whether it is hashed; what the walk needs of its inode,
// mirrored so that a component costs one dentry read; and the number of
// mounts on the dentry above kDentryMountShift.
inline constexpr uint32_t kDentryHashed = 1u << 0;  // linked under its parent
// Mirrors of the inode: its type (fixed for its life), and for a directory
// (whose one dentry this is) kInodeFastSearch and kInodeDead. Kept by the
// World's writers: Link(), SetModeAndAcl(), SetFlags(); Verify() checks.
inline constexpr uint32_t kDentryDir = 1u << 1;
inline constexpr uint32_t kDentrySymlink = 1u << 2;
inline constexpr uint32_t kDentryFastSearch = 1u << 3;
inline constexpr uint32_t kDentryDeadDir = 1u << 4;
// A negative entry (inode kNone) of an incomplete directory: the name is
// known to be absent. Kept in their own hash, never found by Lookup().
inline constexpr uint32_t kDentryNegative = 1u << 5;
inline constexpr uint32_t kDentryInodeMirror =
    kDentryDir | kDentrySymlink | kDentryFastSearch | kDentryDeadDir;
inline constexpr uint32_t kDentryMountShift = 8;

// Inode
//
// One tmpfs inode. Every field may be read by a reader thread while the
// writer changes it (see src/base/seqlock.h); `mode` and the ACLs change
// only through World::SetModeAndAcl(), which keeps kInodeFastSearch exact.
struct Inode {
  SeqField<uint32_t> mode;   // S_IFMT | 07777; 0 for a free slot
  SeqField<uint32_t> uid;
  SeqField<uint32_t> gid;
  SeqField<uint32_t> nlink;
  // Devices: makedev(). Directories use the same word for their number
  // of hashed children, nchildren(): no inode is both.
  SeqField<uint32_t> rdev;
  Published<AclId> acl;     // access ACL, kNone when none
  Published<AclId> default_acl;
  SeqField<uint32_t> sb;
  SeqField<uint32_t> flags;  // kInode*
  Published<StrId> data;    // symlink body, or regular file content
  SeqField<uint32_t> dentry;     // directories: their one dentry
  SeqField<uint32_t> refs;       // live dentries pointing here, and pins (PinInode())
  // Open files with FMODE_READ (low 16 bits) and FMODE_WRITE (high 16).
  SeqField<uint32_t> open_counts;
  SeqField<uint32_t> landlock_object;  // kNone until a rule tags it

  SeqField<uint32_t>& nchildren() noexcept { return rdev; }
  const SeqField<uint32_t>& nchildren() const noexcept { return rdev; }
  uint32_t readers() const noexcept { return open_counts & 0xffff; }
  uint32_t writers() const noexcept { return open_counts >> 16; }
};

// Dentry
//
// A name in a directory. Unlinked dentries stay alive (unhashed) while an
// open file, a working directory or a child still refers to them, keeping
// their last parent, as Linux's do.
struct Dentry {
  // internal::NameKey() of the name: a lookup compares short names here,
  // without reading the string.
  SeqField<uint64_t> name_key;
  SeqField<uint32_t> parent;  // itself for the root of a filesystem
  Published<StrId> name;
  SeqField<uint32_t> inode;
  SeqField<uint32_t> flags;   // kDentry*, and the mount count
  SeqField<uint32_t> refs;
  // For a directory's dentry: its inode's Landlock object, mirrored so a
  // Landlock walk up the directories reads one object per level. (Files
  // may have several dentries; walks read their inode.)
  SeqField<uint32_t> dir_object;

  // Mounts whose mountpoint this is.
  uint32_t mounts() const noexcept { return flags >> kDentryMountShift; }
};

// The import benchmark's memory budget (at most 120 bytes per inode plus
// dentry, names excluded) rests on these.
static_assert(sizeof(Inode) == 56, "Inode grew: check bench import's bytes_per_inode");
static_assert(sizeof(Dentry) == 32, "Dentry grew: check bench import's bytes_per_inode");

// Mount
//
// A vfsmount: which dentry of which superblock is its root, and where it
// is attached (parent mount and mountpoint dentry in the parent's
// filesystem). The root mount has parent kNone.
struct Mount {
  SeqField<uint32_t> parent;
  SeqField<uint32_t> mountpoint;
  SeqField<uint32_t> root;
  SeqField<uint32_t> sb;
  SeqField<uint32_t> flags;     // kMnt*
  SeqField<uint32_t> refs;      // open files, working and root directories
  SeqField<uint32_t> children;  // mounts attached to this one
  SeqField<uint32_t> attached;  // 1 while in the mount tree
  // The attached children in the order they were attached (mnt_mounts):
  // the writer's walks of a mount tree (copy_tree(), umount_tree()) touch
  // only the mounts they copy or detach. kNone ends each list.
  SeqField<uint32_t> first_child;
  SeqField<uint32_t> last_child;
  SeqField<uint32_t> next_sibling;
  SeqField<uint32_t> prev_sibling;
};

struct Superblock {
  SeqField<uint32_t> flags;  // kSb*
  SeqField<uint32_t> root;   // root dentry
  SeqField<uint32_t> mounts; // mounts of this superblock
};

// PathPos
//
// A position in the namespace: Linux's struct path (mount, dentry).
struct PathPos {
  MountId mnt = kNone;
  DentryId dentry = kNone;
  friend bool operator==(const PathPos&, const PathPos&) = default;
};

// World
//
// The model of one mount namespace. One writer thread changes it through
// the non-const methods, bracketed by a WriteGuard; any number of readers
// use the const methods and validate their answer with seq() (see
// src/base/seqlock.h). Readers never block each other.
class World {
 public:
  World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Readers.

  const Inode& inode(InodeId id) const noexcept { return inodes_[id]; }
  const Dentry& dentry(DentryId id) const noexcept { return dentries_[id]; }
  const Mount& mount(MountId id) const noexcept { return mounts_[id]; }
  const Superblock& sb(SbId id) const noexcept { return sbs_[id]; }
  // Null for kNone and for an id no ACL was interned under (one past the
  // table: a dangling id, which the permission check fails closed on).
  const PosixAcl* acl(AclId id) const noexcept {
    return id < acls_.end() ? acls_[id].ptr.get() : nullptr;
  }
  std::string_view str(StrId id) const noexcept { return strings_.Get(id); }
  InodeId inode_of(DentryId d) const noexcept { return dentries_[d].inode; }
  // For walks reading many dentries by id (see StableArena::Cursor).
  using DentryCursor = internal::StableArena<Dentry>::Cursor;
  DentryCursor dentry_cursor() const noexcept { return DentryCursor(dentries_); }
  const Inode& inode_at(DentryId d) const noexcept {
    return inodes_[dentries_[d].inode];
  }

  // The root of the namespace: the root mount and its root dentry.
  PathPos root() const noexcept { return {root_mnt_, mounts_[root_mnt_].root}; }

  // Lookup()
  //
  // The hashed child of `parent` called `name`, or kNone (d_lookup()).
  DentryId Lookup(DentryId parent, std::string_view name) const noexcept {
    return Lookup(parent, name, internal::HashName(name), internal::HeadOf(name));
  }
  // The same with the name's internal::HashName() and HeadOf() known (the
  // walk computes both as it finds the name's end).
  DentryId Lookup(DentryId parent, std::string_view name, uint32_t name_hash,
                  uint64_t name_head) const noexcept {
    return DentryIndex(*this).Lookup(parent, name, name_hash, name_head);
  }

  // DentryIndex
  //
  // Lookup() for a reader that makes many in a row (a path walk): the
  // hash table's current view and the bases of the dentries and names in
  // registers, where the world's own fields would be reloaded after every
  // acquire load. Valid as long as the world; what it finds is validated
  // like any read.
  class DentryIndex {
   public:
    explicit DentryIndex(const World& w) noexcept
        : table_(w.dhash_.view()), dentries_(w.dentries_), strings_(&w.strings_) {}

    const Dentry& dentry(DentryId id) const noexcept { return dentries_(id); }

    [[gnu::always_inline]] DentryId Lookup(DentryId parent, std::string_view name,
                                           uint32_t name_hash,
                                           uint64_t name_head) const noexcept {
      return Lookup(parent, name.data(),
                    {name.size(), name_hash, name_head,
                     internal::NameKey(name_head, name.size())});
    }
    // The same for a scanned component whose bytes start at `name`. With
    // kCallFree, names longer than the name key are compared out of line,
    // so that a loop around the lookup has no inner loop (the compiler
    // would take registers from it) and calls nothing for short names.
    template <bool kCallFree = false>
    [[gnu::always_inline]] DentryId Lookup(DentryId parent, const char* name,
                                           const internal::Component& c) const noexcept {
      return table_.Find(internal::SaltHash(parent, c.hash), [&](uint32_t id) {
        const Dentry& d = dentries_(id);
        if (d.parent != parent || d.name_key != c.key) return false;
        if (c.len <= 7) return true;
        if constexpr (kCallFree) return LongNameEquals(*strings_, d, name, c);
        return strings_->Equals(d.name, {name, c.len}, c.head);
      });
    }

   private:
    [[gnu::noinline]] static bool LongNameEquals(const internal::StringPool& strings,
                                                 const Dentry& d, const char* name,
                                                 const internal::Component& c) noexcept {
      return strings.EqualsInline(d.name, {name, c.len}, c.head);
    }

    internal::IdHashTable::View table_;
    internal::StableArena<Dentry>::Cursor dentries_;
    const internal::StringPool* strings_;
  };

  // KnownAbsent()
  //
  // Lookup() found no `name` in directory dentry `parent`, and that is the
  // answer: the directory is complete (every tmpfs directory is), or a
  // negative entry records the name's absence. When false, the backend
  // must be asked (src/vfs/backend.h).
  bool KnownAbsent(DentryId parent, std::string_view name) const noexcept {
    if (!(inode_at(parent).flags & kInodeIncomplete)) return true;
    return FindNegative(parent, name) != kNone;
  }
  DentryId FindNegative(DentryId parent, std::string_view name) const noexcept;

  // backend()
  //
  // What fills this world's incomplete directories; null when none is.
  Backend* backend() const noexcept { return backend_; }

  // LookupMount()
  //
  // The mount attached on `mountpoint` inside `parent`, or kNone
  // (lookup_mnt()).
  MountId LookupMount(MountId parent, DentryId mountpoint) const noexcept;

  // IsDescendant()
  //
  // `d` is `ancestor` or below it in its filesystem (is_subdir()).
  bool IsDescendant(DentryId d, DentryId ancestor) const noexcept;

  // IsCurrent()
  //
  // `p` still names inode `ino` in the mount tree: its mount is attached,
  // and its dentry is hashed (or a filesystem's root) and names `ino`. A
  // handle to a removed, replaced or unmounted object is not.
  bool IsCurrent(PathPos p, InodeId ino) const noexcept;

  // xattrs()
  //
  // The extended attributes of inode `ino` other than its POSIX ACLs
  // (user.*, trusted.*, security.*), encoded (src/vfs/xattr.h); "" when
  // it has none. Kept beside the inodes, for the few that have any.
  std::string_view xattrs(InodeId ino) const noexcept;

  // PathOf()
  //
  // The absolute path of a position as seen from `root` (d_path()).
  // Unlinked dentries get " (deleted)".
  std::string PathOf(PathPos p, PathPos root) const;
  std::string PathOf(PathPos p) const { return PathOf(p, root()); }

  // DisplayPathOf()
  //
  // PathOf() for reasons and messages: a path longer than
  // kDisplayPathMax bytes is shown by its last components after "…"
  // (no call can name it whole: it is past PATH_MAX; its tail is what
  // tells it apart). Naming every path whole made each reason cost its
  // depth, and a deep chain's checks quadratic.
  static constexpr size_t kDisplayPathMax = 4096;
  std::string DisplayPathOf(PathPos p, PathPos root) const;

  // ClearDisplayCache()
  //
  // Forgets the display paths this thread made (DisplayPathOf() keeps
  // the last few, per world, root and shape generation): for a reader
  // whose read section raced a write, as it may have read a torn tree.
  static void ClearDisplayCache();

  const internal::SeqCount& seq() const noexcept { return seq_; }

  // ReadLock
  //
  // The slow path of a reader that keeps racing writes (the kernel's
  // read_seqbegin_or_lock()): holds writers off while it reads, so it
  // needs no validation. Readers holding it never block each other.
  class ReadLock {
   public:
    explicit ReadLock(const World& w) : lock_(w.change_mutex_) {}

   private:
    std::shared_lock<std::shared_mutex> lock_;
  };

  // shape_gen()
  //
  // Moves whenever the tree's shape changes in a way that could change the
  // walk up from some position: a rename, a dentry freed (its id may be
  // reused), a mount or an unmount. Caches of per-position walk results
  // (the memoized Landlock evaluation) are valid for one generation.
  uint64_t shape_gen() const noexcept { return shape_gen_; }

  // instance_id()
  //
  // Unique to this world among all made in the process (a world made
  // where a freed one was gets another): what a per-thread cache of walk
  // results keys on beside seq(), which two worlds may share.
  uint64_t instance_id() const noexcept { return instance_id_; }

  // Writers.

  // WriteGuard
  //
  // Brackets one change so readers retry across it, and waits for
  // readers on the slow path (ReadLock). Nests: only the outermost guard
  // locks and moves the sequence counter.
  class WriteGuard {
   public:
    // The writer's thread owns the nesting depth: a guard on another thread
    // (a reader filling from a backend while the builder writes) waits for
    // the lock instead of joining a change in flight.
    explicit WriteGuard(World& w) : w_(w) {
      if (w_.writer_.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
        w_.change_mutex_.lock();
        w_.writer_.store(std::this_thread::get_id(), std::memory_order_relaxed);
        w_.seq_.WriteBegin();
      }
      ++w_.write_depth_;
    }
    ~WriteGuard() {
      if (--w_.write_depth_ == 0) {
        w_.seq_.WriteEnd();
        w_.writer_.store(std::thread::id(), std::memory_order_relaxed);
        w_.change_mutex_.unlock();
      }
    }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

   private:
    World& w_;
  };

  StrId Intern(std::string_view s) { return strings_.Intern(s); }
  AclId InternAcl(const PosixAcl& acl);

  // NewSuperblock()
  //
  // A fresh tmpfs with a root directory of the given mode and owner.
  SbId NewSuperblock(uint32_t root_mode, uint32_t uid, uint32_t gid);

  // NewInode()
  //
  // An inode of `sb`, not yet linked anywhere.
  InodeId NewInode(SbId sb, uint32_t mode, uint32_t uid, uint32_t gid,
                   uint32_t rdev = 0);

  // SetModeAndAcl()
  //
  // The one place that changes an inode's mode or ACLs, so the cached
  // "anyone may search" bit is recomputed whenever its inputs change
  // (seed patch "permission check avoidance during lookup", v2).
  void SetModeAndAcl(InodeId ino, uint32_t mode, AclId acl);
  void SetDefaultAcl(InodeId ino, AclId acl);
  void SetOwner(InodeId ino, uint32_t uid, uint32_t gid);
  void SetFlags(InodeId ino, uint32_t set, uint32_t clear);
  void SetData(InodeId ino, StrId data);
  void SetNlink(InodeId ino, uint32_t nlink);
  // SetRdev(): a device's number, for a backend that read the inode as
  // another type first (a mount's root made before it was seen: a device
  // file bound on its own). Not for a directory, whose field it shares.
  void SetRdev(InodeId ino, uint32_t rdev);
  // AddOpenCounts()
  //
  // False (and no change) when a count would leave 0..65535.
  bool AddOpenCounts(InodeId ino, int readers, int writers);
  void SetLandlockObject(InodeId ino, uint32_t object);
  // SetXattrs()
  //
  // Replaces the xattr set of `ino` (encoded; "" for none).
  void SetXattrs(InodeId ino, std::string_view encoded);

  // Link()
  //
  // A new hashed dentry `name` in directory dentry `parent` for `ino`
  // (d_instantiate). Does not touch nlink.
  DentryId Link(DentryId parent, std::string_view name, InodeId ino);

  // Unhash()
  //
  // Removes `d` from its parent's names (d_delete); it lives on while
  // referenced. In an incomplete directory the name becomes a negative
  // entry, so the backend never brings back what the model removed;
  // Forget() (revalidation: the source changed) leaves no such entry.
  void Unhash(DentryId d);
  void Forget(DentryId d);

  // HashedChildren()
  //
  // The hashed children of `parent`. The world keeps no list of them: a
  // scan of every dentry, for the rare caller (a revalidating backend's
  // listing).
  std::vector<DentryId> HashedChildren(DentryId parent) const;

  // LinkNegative() / DropNegative()
  //
  // Record, or forget, that incomplete directory `parent` has no `name`.
  void LinkNegative(DentryId parent, std::string_view name);
  void DropNegative(DentryId parent, std::string_view name);

  // SetBackend()
  //
  // The backend that fills incomplete directories (it must outlive the
  // world, or be reset to null first).
  void SetBackend(Backend* b) { backend_ = b; }

  // Move()
  //
  // Renames `d` to `name` in `new_parent` (d_move).
  void Move(DentryId d, DentryId new_parent, std::string_view name);

  // Exchange()
  //
  // Swaps the names of two dentries (d_exchange).
  void Exchange(DentryId a, DentryId b);

  // PinInode() / UnpinInode()
  //
  // An extra reference that keeps an inode alive with no name (a Landlock
  // object holds its inode while rules use it, as Linux's does).
  void PinInode(InodeId ino);
  void UnpinInode(InodeId ino);

  // RemountReadonlyBusy()
  //
  // Why superblock `sb` cannot turn read-only (sb_prepare_remount_
  // readonly()): a file open for writing on it, or an inode with no name
  // left that is still alive (a pending removal). Empty when it can.
  std::string RemountReadonlyBusy(SbId sb) const;

  // GetPath() / PutPath()
  //
  // Pin or release a position (open file, working or root directory).
  void GetPath(PathPos p);
  void PutPath(PathPos p);

  // Mounts.
  MountId NewRootMount(SbId sb);
  MountId Attach(PathPos mountpoint, SbId sb, DentryId root, uint32_t flags);
  void Detach(MountId m);
  void SetMountFlags(MountId m, uint32_t flags);
  void SetSbFlags(SbId sb, uint32_t flags);
  // A FUSE superblock's gate (kInodeFuse on its inodes); set once, before
  // any reader, by the host backend. nullptr for any other.
  void SetSbFuse(SbId sb, SbFuse f) { fuses_[sb] = f; }
  const SbFuse* sb_fuse(SbId sb) const {
    auto it = fuses_.find(sb);
    return it == fuses_.end() ? nullptr : &it->second;
  }
  // Whether any superblock is FUSE's: the calls that ask its gate skip it
  // in one load where none is (stat is on the hot path).
  bool any_fuse() const noexcept { return !fuses_.empty(); }
  // An idmapped superblock's idmapping (kSbIdmapped); set once, before
  // any reader, by the host backend. nullptr for any other.
  void SetSbIdmap(SbId sb, SbIdmap map) { idmaps_[sb] = std::move(map); }
  const SbIdmap* sb_idmap(SbId sb) const {
    auto it = idmaps_.find(sb);
    return it == idmaps_.end() ? nullptr : &it->second;
  }

  // Sizes for the import benchmark: inode and dentry arenas, the dentry
  // hashes (positive and negative) and the ACLs (names excluded).
  size_t bytes_inodes() const { return inodes_.bytes(); }
  // Every table the dentry hashes have had: superseded ones stay for
  // readers that may still probe them.
  size_t bytes_dentries() const { return dentries_.bytes() + dhash_.bytes() + neg_hash_.bytes(); }
  // The interned ACLs: their slots, objects and index (the index's keys
  // at their string capacity).
  size_t bytes_acls() const;
  size_t bytes_strings() const { return strings_.bytes(); }
  uint32_t live_inodes() const { return inodes_.live(); }
  uint32_t live_dentries() const { return dentries_.live(); }
  uint32_t dentry_end() const { return dentries_.end(); }

  // Verify()
  //
  // Checks what the World derives and caches against its definition: the
  // fast-search bit of every inode, each dentry's mirror of its inode (type,
  // fast-search, dead directory, Landlock object) and its name key, the
  // child count of directories and the mount count of mount points.
  // Returns "" or what is wrong (tests and --cross-check call it after
  // every step; a stale cache would be a wrong answer).
  std::string Verify() const;
  // Every mount id ever used is below mount_end() (for scans of the tree).
  uint32_t mount_end() const { return mounts_.end(); }
  // The mounts in the namespace now (mnt_namespace's mounts: detached ones
  // not, and one no path reaches: the namespace's own root, rootfs, under
  // the mount "/" is: init_mount_tree(); copied by every CLONE_NEWNS and
  // left under a pivot_root()), and the namespace's limit (fs.mount-max:
  // count_mounts() refuses what would pass it).
  uint32_t nr_mounts() const { return nr_mounts_; }
  uint32_t mount_max() const { return mount_max_; }
  void set_mount_max(uint32_t max) { mount_max_ = max; }

  // For tests that inject an inconsistency (src/engine/fail_closed_test.cc):
  // an inode or dentry to corrupt as a torn read or a bug would leave it,
  // past every writer's bookkeeping (no sequence bump, no mirrors, no
  // counts), and the end of the ACL table (the first dangling ACL id).
  Inode& inode_for_testing(InodeId id) noexcept { return inodes_[id]; }
  Dentry& dentry_for_testing(DentryId id) noexcept { return dentries_[id]; }
  AclId acl_end_for_testing() const noexcept { return acls_.end(); }

  // A callback when an inode is freed (Landlock releases its object).
  void set_on_inode_free(void (*fn)(void*, InodeId), void* arg) {
    on_inode_free_ = fn;
    on_inode_free_arg_ = arg;
  }

 private:
  struct AclSlot {
    std::unique_ptr<const PosixAcl> ptr;
  };
  // The xattr set of one inode (XattrSlotOf() finds it by inode).
  struct XattrSlot {
    SeqField<uint32_t> inode;
    Published<StrId> set;
  };
  static uint32_t XattrHash(InodeId ino) { return internal::MixHash(ino, 0x78617474u); }
  uint32_t XattrSlotOf(InodeId ino) const noexcept {
    return xattr_hash_.Find(XattrHash(ino),
                            [&](uint32_t id) { return xattr_slots_[id].inode == ino; });
  }

  uint32_t HashOf(DentryId d) const {
    return internal::SaltHash(dentries_[d].parent, strings_.Hash(dentries_[d].name));
  }
  void DentryGet(DentryId d);
  void DentryPut(DentryId d);
  void InodePut(InodeId i);
  void Hash(DentryId d);
  // The kDentryInodeMirror bits a dentry of `i` carries.
  static uint32_t MirrorOf(const Inode& i) {
    uint32_t m = 0;
    if (S_ISDIR(i.mode)) {
      m |= kDentryDir;
      if (i.flags & kInodeFastSearch) m |= kDentryFastSearch;
      if (i.flags & kInodeDead) m |= kDentryDeadDir;
    } else if (S_ISLNK(i.mode)) {
      m |= kDentrySymlink;
    }
    return m;
  }
  // A directory's one dentry follows its inode.
  void UpdateMirror(InodeId ino);
  // Names dentry `de` (the name and its key, together).
  void SetName(Dentry& de, StrId name) {
    de.name = name;
    const std::string_view n = strings_.Get(name);
    de.name_key = internal::NameKey(internal::HeadOf(n), n.size());
  }

  // Opaque inodes never take the fast path: their checks are unknown; nor
  // do those behind a FUSE mount's gate.
  static uint32_t FastSearch(uint32_t mode, AclId acl, uint32_t flags) {
    return S_ISDIR(mode) && (mode & 0111) == 0111 && acl == kNone &&
                   !(flags & (kInodeOpaque | kInodeFuse))
               ? kInodeFastSearch
               : 0;
  }

  internal::SeqCount seq_;
  mutable std::shared_mutex change_mutex_;
  internal::StableArena<Inode> inodes_;
  internal::StableArena<Dentry> dentries_;
  internal::StableArena<Mount> mounts_;
  internal::StableArena<Superblock> sbs_;
  std::unordered_map<SbId, SbIdmap> idmaps_;  // kSbIdmapped superblocks
  std::unordered_map<SbId, SbFuse> fuses_;    // FUSE superblocks
  internal::StableArena<AclSlot> acls_;
  internal::StringPool strings_;
  internal::IdHashTable dhash_;
  internal::IdHashTable mhash_;
  internal::IdHashTable neg_hash_;  // negative entries
  internal::StableArena<XattrSlot> xattr_slots_;
  internal::IdHashTable xattr_hash_;  // XattrSlot ids by inode
  Backend* backend_ = nullptr;
  std::unordered_map<std::string, AclId> acl_index_;
  MountId root_mnt_ = kNone;
  int write_depth_ = 0;  // the writer's own (under change_mutex_)
  std::atomic<std::thread::id> writer_{};  // who holds change_mutex_ for writing
  SeqField<uint64_t> shape_gen_{1};
  uint64_t instance_id_;
  SeqField<uint32_t> nr_mounts_{1};  // rootfs
  SeqField<uint32_t> mount_max_{kMountMaxDefault};
  void (*on_inode_free_)(void*, InodeId) = nullptr;
  void* on_inode_free_arg_ = nullptr;
};

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_WORLD_H_
