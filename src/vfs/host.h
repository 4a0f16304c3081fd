// The live host as a backend: the world fills itself from the real
// machine on demand, as the dcache fills from ->lookup, and never changes
// the machine.
//
// What is read, and how: statx(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) of
// one name per miss (type, mode, owner, link count, device number, the
// mount it is on, and the immutable and append-only attributes where
// stx_attributes_mask says they are reported); lgetxattr() of
// system.posix_acl_access (and system.posix_acl_default for directories);
// readlink() of symlinks; a directory listing only when one is asked for
// (rmdir, rename over a directory, an eager fill), with O_NOATIME where
// allowed. Nothing is ever opened but a directory to list it: opening a
// device or a FIFO has side effects, and contents are never read.
//
// Inode identity is the host's (st_dev, st_ino): a name whose inode the
// world already holds (a hard link) joins it, and every mount of one
// filesystem shares its dentries, so a Landlock rule attached through one
// path holds through every other. Filesystems whose permissions are not
// their modes (WhyNotModelled()) are mounted opaque: every check in them
// is unknown, with the reason.

#ifndef PATHWARDEN_SRC_VFS_HOST_H_
#define PATHWARDEN_SRC_VFS_HOST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pathwarden/acl.h"
#include "pathwarden/model.h"
#include "pathwarden/result.h"
#include "src/base/arena.h"
#include "src/vfs/backend.h"
#include "src/vfs/mountinfo.h"
#include "src/vfs/world.h"

namespace pathwarden::vfs {

// MountNsOfInitialUserNs()
//
// Whether the mount namespace whose table `mountinfo` is
// (/proc/PID/mountinfo) belongs to the initial user namespace
// (NS_GET_USERNS); nullopt when that cannot be read (another file, or
// this process is not in the initial user namespace).
std::optional<bool> MountNsOfInitialUserNs(const std::string& mountinfo);

// NsOfInitialUserNs()
//
// The same for namespace file `ns` (/proc/self/ns/net).
std::optional<bool> NsOfInitialUserNs(const std::string& ns);

// JoinHostPath()
//
// `dir` + "/" + `name`, as the host backend reads a name below a
// directory (one '/' between them).
std::string JoinHostPath(std::string_view dir, std::string_view name);

// HostPathBelow()
//
// The components of `path` below `base` ("" when equal); nullopt when
// `path` is not below `base`.
std::optional<std::string> HostPathBelow(std::string_view path, std::string_view base);

// ReadMountIdmap()
//
// The idmapping of the idmapped mount on `host_mp` (its mountinfo id
// `mnt_id`), as statmount(STATMOUNT_MNT_UIDMAP | STATMOUNT_MNT_GIDMAP)
// shows it to this process. Errors: another mount there, a kernel
// before 6.15, a map not of the kernel's shape.
Result<SbIdmap, std::string> ReadMountIdmap(const std::string& host_mp, uint32_t mnt_id);

// HostStats
//
// What the backend asked the host, for the cost figures.
struct HostStats {
  uint64_t lookups = 0;       // names filled on a miss (or by a listing)
  uint64_t negatives = 0;     // of which absent on the host
  uint64_t hard_links = 0;    // of which joined an inode already held
  uint64_t listings = 0;      // directories listed
  uint64_t statx_calls = 0;
  uint64_t xattr_calls = 0;
  uint64_t readlink_calls = 0;
  uint64_t acls = 0;          // ACL xattrs found (access and default)
  uint64_t revalidated = 0;   // entries checked against the host again
  uint64_t refreshed = 0;     // of which changed in the world
  uint64_t unseen = 0;        // directories the host would not let us see into
};

// HostBackend
//
// The single writer calls every non-const method, inside a WriteGuard.
class HostBackend final : public Backend {
 public:
  // Attach()
  //
  // Makes fresh world `w` (its root, no mounts, no positions held) the
  // mount namespace `mounts` describes (ParseMountInfo() of
  // /proc/PID/mountinfo, paths relative to the calling process's root),
  // and sets itself as its backend. Mount points and mount roots are
  // filled; everything else waits for a miss. Errors: a mount table
  // without a root mount.
  //
  // `options.overflow`: the host read from inside a user namespace
  // (HostOptions::Overflow): the inodes it names are made opaque.
  // `options.running_programs`: regular files get kInodeDenyWrite, or
  // kInodeDenyWriteUnknown, from the processes' /proc/PID/exe.
  static Result<std::unique_ptr<HostBackend>, std::string> Attach(
      World& w, std::span<const MountInfo> mounts, const HostOptions& options = {});
  ~HostBackend() override;

  Result<void, std::string> Lookup(World& w, PathPos dir, std::string_view name) override;
  Result<void, std::string> List(World& w, PathPos dir) override;
  void WillMove(World& w, DentryId d) override;
  std::string WhyOpaque(const World& w, InodeId ino) const override;
  std::string Layer(const World& w, DentryId d) const override;
  // HostOptions::Consistency::kRevalidate: the host changes under the
  // model, and a listing drops what it no longer has.
  bool NamesMayGo() const override { return revalidates_; }
  void Forgotten(InodeId ino) override;

  // FillBelow()
  //
  // The eager fill: every name below directory `dir`, listed and filled
  // (ACLs included), into the mounts below it too. `progress`, when set,
  // is told the number of entries filled so far, now and then. Returns
  // the number of entries (the top directory included).
  Result<uint64_t, std::string> FillBelow(World& w, PathPos dir,
                                          const std::function<void(uint64_t)>& progress);

  // Revalidate()
  //
  // d_revalidate(): checks the entry `name` of directory `dir` against
  // the host again: a name gone is forgotten (a negative entry now), a
  // name that names another inode is filled again, changed attributes
  // (mode, owner, ACLs, attributes, link count, symlink body) are
  // refreshed, and a negative entry whose name now exists is filled. A
  // listed directory forgets it was complete, so new names are seen.
  // Returns whether the world changed.
  Result<bool, std::string> Revalidate(World& w, PathPos dir, std::string_view name);

  // RevalidateRoot()
  //
  // The same for the root of a mount, which has no name in its parent.
  Result<bool, std::string> RevalidateRoot(World& w, MountId m);

  // ForgetHeldFiles()
  //
  // The next regular file read asks the processes again which programs
  // they run, and /proc/swaps which files are swapped on (revalidation:
  // a program started or ended since, a swapon or swapoff).
  void ForgetHeldFiles() {
    executing_ = RunningPrograms{};
    swaps_ = Swaps{};
  }

  const HostStats& stats() const noexcept { return stats_; }

  // bytes()
  //
  // What the backend holds beside the world, for the import benchmark's
  // bytes per entry: the per-inode fingerprints, the superblock table,
  // and the maps (anchors, hard links, reasons), at their allocation
  // sizes (node payload and links, buckets; strings' heap buffers).
  size_t bytes() const noexcept;

  // HostPathOf()
  //
  // The host path through which dentry `d` is read, and the host mount
  // it must be on; nullopt when no visible mount reaches it.
  struct HostPath {
    std::string path;
    uint64_t mnt = 0;  // host mount id (statx STATX_MNT_ID)
  };
  std::optional<HostPath> HostPathOf(const World& w, DentryId d) const;

 private:
  struct SbInfo {
    uint32_t major = 0, minor = 0;
    std::string fstype;
    std::string why_not;  // "" when modelled
    bool btrfs = false;   // its inodes belong to subvolumes (SubvolFlags())
    bool fuse = false;    // FUSE with default_permissions (FuseFor()): kInodeFuse on
                          // every inode, the gate in World::sb_fuse()
    bool proc = false;       // procfs (ProcFlags())
    std::string proc_root;   // procfs: the host path of its root, "" until seen
    // The namespace-dependent sysctls (net/, the IPC ones, fs/mqueue/,
    // user/): modelled only where the askers share the reader's
    // namespaces and those belong to the initial user namespace.
    bool proc_same_ns = false;
    std::optional<bool> proc_net, proc_ipc, proc_user;
  };
  // What one statx and its companions found.
  struct Found;

  HostBackend() = default;
  // Reads `path` (statx, ACLs, symlink body); nullopt with *err set
  // (ENOENT, EACCES, ...) when the host refuses.
  std::optional<Found> Read(int dirfd, const std::string& name, const std::string& path,
                            int* err);
  // Fills `name` of directory dentry `d` reached as `hp` (already known
  // absent from the world). Returns the new dentry, or kNone for a
  // negative entry.
  Result<DentryId, std::string> FillName(World& w, DentryId d, const HostPath& hp,
                                         std::string_view name);
  // Sets the attributes of `ino` from `f`; whether anything changed.
  bool SetAttrs(World& w, InodeId ino, const Found& f);
  InodeId NewInodeFor(World& w, SbId sb, const Found& f);
  // A dentry for `name` in `d` that the host cannot show (a mount root's
  // ancestors, a covered mount point): opaque, with `why`.
  DentryId Synthetic(World& w, DentryId d, std::string_view name, uint32_t mode,
                     std::string why);
  // The dentry at relative path `rel` below `from`, filled or synthetic.
  Result<DentryId, std::string> Reach(World& w, DentryId from, std::string_view rel);
  void MarkOpaque(World& w, InodeId ino, uint32_t flag, std::string why);
  void SetAnchor(const World& w, DentryId d, HostPath hp);
  // Lists `dir` (reached as `hp`), filling what the world lacks; the
  // dentries of every name listed in *children when not null.
  Result<void, std::string> ListInto(World& w, PathPos dir, std::vector<DentryId>* children);
  static uint32_t Fingerprint(uint64_t dev, uint64_t ino);
  // Whether a process this one can read runs file (dev, ino); the
  // processes are read once (executing_), and never without
  // HostOptions::running_programs (then nothing runs, nothing is unseen).
  bool Executing(uint64_t dev, uint64_t ino);
  // Whether file (dev, ino) is an active swap file; /proc/swaps is read
  // once (swaps_).
  bool Swapping(uint64_t dev, uint64_t ino);

  // An overlay superblock the model holds (src/vfs/host_overlay.cc): its
  // lookup layers, topmost first, as host paths.
  struct OvlSb {
    std::vector<std::string> lower;
    std::string upper;             // "" without an upper layer
    bool redirect_on = false;      // redirect_dir=on: directories move freely
    bool redirect_unknown = false; // the module's default could not be read
    bool userxattr = false;
    bool sees_own_xattrs = false;  // this process reads overlay.opaque
  };
  // The layers' directories that make up one overlay directory.
  struct OvlDir {
    std::string upper;               // "" when it has no upper directory
    std::vector<std::string> lower;  // topmost first
    std::vector<size_t> lower_at;    // each one's layer: 1 the topmost lower
  };
  // "" and *out filled when overlay mount `m` is modelled; otherwise why
  // not. `initial_ns`: whether the mount namespace belongs to the initial
  // user namespace (nullopt: not known).
  // `host_mp`: its mount point as this process reaches it; `root_dir`:
  // HostOptions::root_dir.
  static std::string OverlayFor(const MountInfo& m, const std::string& host_mp,
                                const std::string& root_dir, std::optional<bool> initial_ns,
                                std::span<const MountInfo> mounts, OvlSb* out);
  // The layers of directory `name` in the overlay directory `parent`
  // (ovl_lookup()); nullopt with *why when they cannot be read.
  static std::optional<OvlDir> OvlChild(const OvlSb& sb, const OvlDir& parent,
                                        std::string_view name, std::string* why);
  // Records overlay directory `ino`'s layers (nullopt: unknown) and sets
  // kInodeOvlPinned / kInodeOvlPinnedUnknown from them.
  void SetOvlDir(World& w, InodeId ino, std::optional<OvlDir> state);

  std::unordered_map<SbId, OvlSb> ovl_sbs_;
  std::unordered_map<InodeId, OvlDir> ovl_dirs_;
  std::optional<HostOptions::Overflow> overflow_;
  uint32_t overflow_uid_ = 65534, overflow_gid_ = 65534;  // /proc/sys/kernel/overflow?id
  std::set<uint64_t> idmapped_mnts_;  // host mount ids of the idmapped mounts modelled
  std::vector<SbInfo> sbs_;                          // by SbId
  std::unordered_map<DentryId, HostPath> anchors_;   // mount roots, moved directories
  std::map<std::pair<uint64_t, uint64_t>, InodeId> links_;  // (dev, ino), multiply linked
  std::unordered_map<InodeId, std::pair<uint64_t, uint64_t>> link_key_;
  std::unordered_map<InodeId, DentryId> anchor_of_;  // inodes whose dentry is anchored
  // Fingerprint(dev, ino) by InodeId, 0 for none: a flat array reserved
  // once and committed as it grows, as the world's inode arena is, so it
  // costs four bytes an inode (a vector's doubling cost up to eight).
  class Fingerprints {
   public:
    Fingerprints() : region_(size_t{internal::StableArena<uint32_t>::kMaxIds} * sizeof(uint32_t)) {}
    uint32_t get(InodeId ino) const noexcept {
      return ino < size_ ? reinterpret_cast<const uint32_t*>(region_.base())[ino] : 0;
    }
    void set(InodeId ino, uint32_t v) {
      if (ino >= size_) {
        region_.Commit((size_t{ino} + 1) * sizeof(uint32_t));
        size_ = region_.committed() / sizeof(uint32_t);
      }
      reinterpret_cast<uint32_t*>(region_.base())[ino] = v;
    }
    void clear(InodeId ino) noexcept {
      if (ino < size_) reinterpret_cast<uint32_t*>(region_.base())[ino] = 0;
    }
    size_t bytes() const noexcept { return region_.committed(); }

   private:
    internal::ReservedRegion region_;
    size_t size_ = 0;
  };
  Fingerprints fingerprints_;
  std::unordered_map<InodeId, std::string> why_;     // opaque and unseen inodes
  // The (dev, ino) of every process's /proc/PID/exe, read on the first
  // regular file (kInodeDenyWrite). `unseen` counts the processes whose
  // executable could not be read (another user's, one an LSM hides, all
  // of them outside this PID namespace; SIZE_MAX when /proc cannot be
  // read): then any file with an execute bit may be running
  // (kInodeDenyWriteUnknown), unless the caller says no such process runs
  // what it asks about (HostOptions::assume_unseen_run_nothing).
  struct RunningPrograms {
    bool read = false;
    std::set<std::pair<uint64_t, uint64_t>> files;
    size_t unseen = 0;
  };
  RunningPrograms executing_;
  // The (dev, ino) of every active swap file /proc/swaps lists, read on
  // the first regular file (kInodeSwapfile). `unseen` counts the listed
  // files that could not be found (a name deleted, or out of this
  // process's reach; SIZE_MAX when /proc/swaps cannot be read): then any
  // regular file may be one (kInodeSwapfileUnknown).
  struct Swaps {
    bool read = false;
    std::set<std::pair<uint64_t, uint64_t>> files;
    size_t unseen = 0;
  };
  Swaps swaps_;
  // btrfs subvolumes, by the st_dev each shows (one anonymous device per
  // subvolume): the slot its inodes hold (kInodeSubvolShift), whether it
  // is read-only, or why its flags could not be read.
  struct Subvol {
    uint32_t slot = 0;
    bool readonly = false;
    std::string why;
  };
  std::unordered_map<uint64_t, Subvol> subvols_;
  // The read-only flag of the subvolume directory `path` is in, into *s
  // (s->why, else "", on failure); an automount point is not opened.
  static void ReadSubvolFlags(const std::string& path, bool automount, Subvol* s);
  // The kInodeSubvol* flags of btrfs inode `f`; "" or why they are not
  // known in *why (src/vfs/host_btrfs.cc).
  uint32_t SubvolFlags(const Found& f, std::string* why);
  // For FUSE mount `m` with default_permissions, in a mount namespace of
  // the initial user namespace or not (`initial_ns`): "" and its gate in
  // *gate; or why it is not modelled (src/vfs/host_fuse.cc).
  static std::string FuseFor(const MountInfo& m, std::optional<bool> initial_ns,
                             std::optional<SbFuse>* gate);
  // The kInodeProcSys* flags of procfs inode `f`, and kInodeImmutable for
  // a process's directory; "" or why it is not modelled in *why
  // (src/vfs/host_proc.cc).
  static uint32_t ProcFlags(const SbInfo& sb, const Found& f, std::string* why);
  bool running_programs_ = true;  // HostOptions::running_programs
  bool assume_unseen_run_nothing_ = false;
  bool revalidates_ = false;
  HostStats stats_;
};

// What one statx and its companions found.
struct HostBackend::Found {
  uint32_t mode = 0;
  uint32_t uid = 0, gid = 0;
  uint32_t nlink = 0;
  uint32_t rdev = 0;
  uint64_t dev = 0, ino = 0;
  uint64_t mnt_id = 0;        // 0 when statx did not say
  uint32_t attrs = 0;         // kInodeImmutable, kInodeAppend
  bool attrs_known = true;    // stx_attributes_mask covers both
  std::optional<PosixAcl> acl, default_acl;
  std::string bad_acl;        // why an ACL xattr could not be read
  std::string link;           // symlink body
  bool automount = false;     // STATX_ATTR_AUTOMOUNT: opening it would mount
  std::string_view path;      // what was read; valid until SetAttrs()
};

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_HOST_H_
