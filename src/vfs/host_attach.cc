// The host's mount table attached to the world: a superblock for each
// filesystem tree the mounts show (an idmapped mount, one of its own;
// an overlay, its layers), then each mount on its mount point, in the
// table's order from the root.
// Linux: fs/namespace.c (the mount tree), fs/proc_namespace.c
// show_mountinfo() (what the table says of each).

#include "src/vfs/host.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <fstream>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace pathwarden::vfs {

Result<std::unique_ptr<HostBackend>, std::string> HostBackend::Attach(
    World& w, std::span<const MountInfo> mounts, const HostOptions& options) {
  std::unordered_map<uint32_t, size_t> by_id;
  for (size_t i = 0; i < mounts.size(); ++i) by_id.emplace(mounts[i].id, i);
  // The root: mounted on "/" under a parent outside the table.
  size_t root = mounts.size();
  for (size_t i = 0; i < mounts.size() && root == mounts.size(); ++i)
    if (mounts[i].mountpoint == "/" && !by_id.count(mounts[i].parent)) root = i;
  if (root == mounts.size())
    return Unexpected(std::string("the mount table has no root mount (on \"/\", its parent "
                                  "outside the table)"));
  std::unordered_map<uint32_t, std::vector<size_t>> children;
  for (size_t i = 0; i < mounts.size(); ++i)
    if (i != root) children[mounts[i].parent].push_back(i);
  std::vector<size_t> order{root};
  for (size_t k = 0; k < order.size(); ++k)
    for (size_t c : children[mounts[order[k]].id]) order.push_back(c);

  std::unique_ptr<HostBackend> b(new HostBackend());
  b->overflow_ = options.overflow;
  for (auto [path, id] : {std::pair{"/proc/sys/kernel/overflowuid", &b->overflow_uid_},
                          std::pair{"/proc/sys/kernel/overflowgid", &b->overflow_gid_}}) {
    std::ifstream in(path);
    uint64_t v = 0;
    if (in >> v && v <= UINT32_MAX) *id = static_cast<uint32_t>(v);
  }
  b->running_programs_ = options.running_programs;
  b->assume_unseen_run_nothing_ = options.assume_unseen_run_nothing;
  b->revalidates_ = options.consistency == HostOptions::Consistency::kRevalidate;
  w.SetBackend(b.get());
  // Superblocks: one per device and mount root tree.
  // An idmapped mount gets a superblock of its own, every inode of it
  // opaque (WhyNotModelled()): the same files through another mount stay
  // modelled (a Landlock rule on one is then not seen through the other:
  // a missed grant, never a false one).
  struct Group {
    uint32_t major, minor;
    std::string root;  // the filesystem path of the superblock's root dentry
    SbId sb;
    bool attrs_read = false;
    bool idmapped = false;
  };
  std::vector<Group> groups;
  std::unordered_map<uint32_t, MountId> model_of;  // host mount id -> model mount
  std::optional<bool> initial_ns;  // MountNsOfInitialUserNs(), read when first needed
  bool initial_ns_read = false;
  for (size_t k = 0; k < order.size(); ++k) {
    const MountInfo& m = mounts[order[k]];
    Group* g = nullptr;
    for (Group& x : groups)
      if (x.major == m.major && x.minor == m.minor && !x.idmapped && !m.idmapped &&
          HostPathBelow(m.root, x.root))
        g = &x;
    if (g == nullptr) {
      const SbId sb = k == 0 ? w.inode_at(w.root().dentry).sb.get()
                             : w.NewSuperblock(S_IFDIR, 0, 0);
      groups.push_back({m.major, m.minor, m.root, sb, false, m.idmapped});
      g = &groups.back();
      if (b->sbs_.size() <= sb) b->sbs_.resize(sb + 1);
      std::string why = WhyNotModelled(m);
      // An idmapped mount of a modelled type: its idmapping, where this
      // kernel shows it; its inodes hold the ids the mount shows.
      std::optional<SbIdmap> idmap;
      if (m.idmapped && !m.overlay) {
        MountInfo plain = m;
        plain.idmapped = false;
        // The idmapping's rules also ask the superblock's user namespace
        // (fsuidgid_has_mapping(), vfsuid_has_fsmapping()), which the
        // model takes as the initial one: true of a block filesystem, and
        // of a tmpfs, ramfs or devpts (which a user namespace may mount)
        // in a mount namespace of the initial user namespace (as for
        // overlays: MountNsOfInitialUserNs()).
        const bool userns_mountable =
            m.fstype == "tmpfs" || m.fstype == "ramfs" || m.fstype == "devpts";
        if (userns_mountable && !initial_ns_read) {
          initial_ns = MountNsOfInitialUserNs(options.mountinfo);
          initial_ns_read = true;
        }
        if (userns_mountable && initial_ns != true) {
          why = fmt::format("an idmapped mount of a {} in a mount namespace that may hold mounts "
                            "made inside a user namespace: the idmapping's rules also ask the "
                            "filesystem's user namespace, which is not shown",
                            m.fstype);
        } else if (WhyNotModelled(plain).empty()) {
          auto im = ReadMountIdmap(options.root_dir + m.mountpoint, m.id);
          if (im) {
            idmap = std::move(*im);
            why.clear();
          } else {
            why += fmt::format(" (its idmapping cannot be read: {})", im.error());
          }
        }
      }
      // FUSE: who may enter, where the mount table shows it.
      std::optional<SbFuse> fuse;
      if (why.empty() &&
          (m.fstype == "fuse" || m.fstype == "fuseblk" || m.fstype.starts_with("fuse."))) {
        if (!initial_ns_read) initial_ns = MountNsOfInitialUserNs(options.mountinfo);
        initial_ns_read = true;
        why = FuseFor(m, initial_ns, &fuse);
        if (!why.empty()) fuse.reset();
      }
      OvlSb ovl;
      if (m.overlay && why.empty()) {
        if (!initial_ns_read) initial_ns = MountNsOfInitialUserNs(options.mountinfo);
        initial_ns_read = true;
        why = OverlayFor(m, options.root_dir + m.mountpoint, options.root_dir, initial_ns, mounts,
                         &ovl);
      }
      const bool btrfs = m.fstype == "btrfs" && why.empty();
      SbInfo& info = b->sbs_[sb];
      info = SbInfo{};
      info.major = m.major;
      info.minor = m.minor;
      info.fstype = m.fstype;
      info.why_not = why;
      info.btrfs = btrfs;
      info.fuse = fuse.has_value();
      if (fuse) w.SetSbFuse(sb, *fuse);
      if (m.fstype == "proc" && why.empty()) {
        info.proc = true;
        info.proc_same_ns = options.askers_share_sysctl_namespaces;
        info.proc_net = NsOfInitialUserNs("/proc/self/ns/net");
        info.proc_ipc = NsOfInitialUserNs("/proc/self/ns/ipc");
        // nullopt exactly where this process is not in the initial user
        // namespace, whose user/ sysctls it then does not see.
        info.proc_user = info.proc_net.has_value();
      }
      uint32_t sb_flags = m.sb_readonly ? kSbReadonly : 0;
      if (btrfs) sb_flags |= kSbBtrfs;
      if (m.fstype == "proc" && why.empty()) sb_flags |= kSbProc;
      if (m.overlay && why.empty())
        sb_flags |= kSbOverlay | (ovl.userxattr ? kSbOverlayUserXattr : 0);
      if (idmap) {
        b->idmapped_mnts_.insert(m.id);
        sb_flags |= kSbIdmapped;
        w.SetSbIdmap(sb, std::move(*idmap));
      }
      w.SetSbFlags(sb, sb_flags);
      const InodeId rino = w.inode_of(w.sb(sb).root);
      w.SetFlags(rino, kInodeIncomplete | (fuse ? kInodeFuse : 0), 0);
      if (sb_flags & kSbOverlay) {
        // The layers' roots make the overlay's root; a mount of a
        // directory inside an overlay starts where they are not known.
        std::optional<OvlDir> top;
        if (m.root == "/") {
          top = OvlDir{ovl.upper, ovl.lower, {}};
          for (size_t at = 1; at <= ovl.lower.size(); ++at) top->lower_at.push_back(at);
        }
        b->ovl_sbs_[sb] = std::move(ovl);
        b->SetOvlDir(w, rino, std::move(top));
      }
    }
    const SbId sb = g->sb;
    const DentryId sb_root = w.sb(sb).root;
    // The mount point as this process reaches it (HostOptions::root_dir).
    const std::string host_mp = options.root_dir + m.mountpoint;
    // Visible: the mount point on the host is this mount.
    struct statx stx {};
    const bool visible = statx(AT_FDCWD, host_mp.c_str(), AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW,
                               STATX_BASIC_STATS | STATX_MNT_ID, &stx) == 0 &&
                         (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == m.id;
    ++b->stats_.statx_calls;
    DentryId root_dentry = sb_root;
    if (m.root != g->root) {
      auto r = b->Reach(w, sb_root, *HostPathBelow(m.root, g->root));
      if (!r) return Unexpected(r.error());
      root_dentry = *r;
    }
    MountId model;
    if (k == 0) {
      model = w.root().mnt;
      w.SetMountFlags(model, m.flags);
    } else {
      auto pit = model_of.find(m.parent);
      if (pit == model_of.end()) continue;
      const MountInfo& pm = mounts[by_id.at(m.parent)];
      std::optional<std::string> rel = HostPathBelow(m.mountpoint, pm.mountpoint);
      if (!rel) continue;  // not below its parent's mount point: not reachable
      const DentryId proot = w.mount(pit->second).root;
      auto mp = b->Reach(w, proot, *rel);
      if (!mp) return Unexpected(mp.error());
      model = w.Attach({pit->second, *mp}, sb, root_dentry, m.flags);
    }
    model_of[m.id] = model;
    if (!visible) continue;
    // procfs: its names are classified by their path below its root.
    if (b->sbs_[sb].proc && root_dentry == sb_root && b->sbs_[sb].proc_root.empty())
      b->sbs_[sb].proc_root = host_mp;
    // The root's attributes, and the anchor its names are read through.
    const InodeId rino = w.inode_of(root_dentry);
    int err = 0;
    if (root_dentry == sb_root ? !g->attrs_read : (w.inode(rino).flags & kInodeOpaque) != 0) {
      if (std::optional<Found> f = b->Read(AT_FDCWD, host_mp, host_mp, &err)) {
        if (root_dentry == sb_root) g->attrs_read = true;
        // A synthetic ancestor made opaque loses it: it is seen now.
        if (b->sbs_[sb].why_not.empty()) {
          w.SetFlags(rino, 0, kInodeOpaque | kInodeUnseen);
          b->why_.erase(rino);
        }
        b->SetAttrs(w, rino, *f);
      }
    }
    if (!b->anchors_.count(root_dentry)) b->SetAnchor(w, root_dentry, {host_mp, m.id});
  }
  // A superblock whose root no visible mount shows is opaque.
  for (const Group& g : groups) {
    if (g.attrs_read) continue;
    const InodeId rino = w.inode_of(w.sb(g.sb).root);
    if (!(w.inode(rino).flags & kInodeOpaque))
      b->MarkOpaque(w, rino, kInodeOpaque | kInodeUnseen,
                    fmt::format("the root of filesystem {}:{} ({}) is not visible on the host",
                                g.major, g.minor, b->sbs_[g.sb].fstype));
  }
  return b;
}

}  // namespace pathwarden::vfs
