// The live host's overlayfs mounts: when one is modelled, and which of
// its directories have a lower layer under them.
// Linux: fs/overlayfs/namei.c ovl_lookup() (upper first; a whiteout or a
// non-directory ends the lookup, an opaque directory hides the layers
// below), fs/overlayfs/inode.c ovl_permission(), fs/overlayfs/params.c
// (the options and their defaults), fs/overlayfs/dir.c ovl_can_move().

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "src/vfs/host.h"

namespace pathwarden::vfs {
namespace {

// The xattr overlay keeps on a layer's directory `what` ("opaque",
// "redirect"): its value, "" when absent, nullopt when it cannot be read.
std::optional<std::string> OwnXattr(const std::string& path, bool userxattr, const char* what) {
  const std::string name = fmt::format("{}.overlay.{}", userxattr ? "user" : "trusted", what);
  char buf[256];
  const ssize_t n = lgetxattr(path.c_str(), name.c_str(), buf, sizeof buf);
  if (n >= 0) return std::string(buf, static_cast<size_t>(n));
  if (errno == ENODATA || errno == EOPNOTSUPP) return std::string();
  return std::nullopt;
}

// Whether this process sees trusted.* xattrs: without CAP_SYS_ADMIN in
// the initial namespace getxattr() says ENODATA for every one of them
// (xattr_permission()), which would read as "not opaque".
bool SeesTrustedXattrs() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("CapEff:")) continue;
    const uint64_t eff = std::stoull(line.substr(7), nullptr, 16);
    return (eff >> 21) & 1;  // CAP_SYS_ADMIN
  }
  return false;
}

// Whether the module's default is redirect_dir=on (an option at its
// default is not printed): nullopt when the parameter cannot be read.
std::optional<bool> RedirectDirDefault() {
  std::ifstream in("/sys/module/overlay/parameters/redirect_dir");
  std::string v;
  if (!(in >> v)) return std::nullopt;
  return v == "Y";
}

}  // namespace

std::optional<bool> MountNsOfInitialUserNs(const std::string& mountinfo) {
  // /proc/PID/mountinfo: the namespace is /proc/PID/ns/mnt.
  constexpr std::string_view kTail = "/mountinfo";
  if (!mountinfo.starts_with("/proc/") || !mountinfo.ends_with(kTail)) return std::nullopt;
  return NsOfInitialUserNs(mountinfo.substr(0, mountinfo.size() - kTail.size()) + "/ns/mnt");
}

std::optional<bool> NsOfInitialUserNs(const std::string& ns) {
  // The initial user namespace is known only from inside it.
  std::ifstream map("/proc/self/uid_map");
  uint64_t inside = 1, outside = 1, count = 0;
  if (!(map >> inside >> outside >> count) || inside != 0 || outside != 0 ||
      count != 4294967295u)
    return std::nullopt;
  struct stat self {};
  if (stat("/proc/self/ns/user", &self) != 0) return std::nullopt;
  const int fd = open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const int owner = ioctl(fd, NS_GET_USERNS);
  close(fd);
  if (owner < 0) return std::nullopt;
  struct stat st {};
  const bool ok = fstat(owner, &st) == 0;
  close(owner);
  if (!ok) return std::nullopt;
  return st.st_dev == self.st_dev && st.st_ino == self.st_ino;
}

std::string HostBackend::OverlayFor(const MountInfo& m, const std::string& host_mp,
                                    const std::string& root_dir, std::optional<bool> initial_ns,
                                    std::span<const MountInfo> mounts, OvlSb* out) {
  if (!m.overlay) return "overlayfs whose options could not be read";
  const OverlayOptions& o = *m.overlay;
  if (initial_ns != true)
    return initial_ns == false
               ? "an overlay in a mount namespace of another user namespace: it may have been "
                 "mounted there, with that namespace's credentials, and ovl_permission() checks "
                 "the real inode with the mounter's; which credentials is not shown"
               : "an overlay whose mount namespace's user namespace cannot be read: whether its "
                 "mounter was root of the initial namespace, whose credentials "
                 "ovl_permission() uses on the real inode, is not known";
  if (o.default_permissions) return "an overlay with default_permissions: not modelled";
  if (o.lower.empty()) return "an overlay whose lower layers mountinfo does not show";
  // The layers as the mounter named them: absolute, and found here, in
  // this process's view (a container engine mounts its containers' roots
  // in its own namespace) or else in the one the table is of (an overlay
  // mounted inside the container). The upper found must be this
  // overlay's (below).
  std::vector<std::string> layers = o.lower;
  if (!o.upper.empty()) layers.push_back(o.upper);
  for (std::string& l : layers) {
    if (l.empty() || l[0] != '/')
      return fmt::format("an overlay layer \"{}\" named relative to the mounter's working "
                         "directory, which the host does not show",
                         l);
    constexpr unsigned kMask = STATX_TYPE | STATX_INO | STATX_MNT_ID;
    struct statx stx {}, there {};
    int err = statx(AT_FDCWD, l.c_str(), AT_SYMLINK_NOFOLLOW, kMask, &stx) ? errno : 0;
    const bool in_table_view =
        !root_dir.empty() &&
        statx(AT_FDCWD, (root_dir + l).c_str(), AT_SYMLINK_NOFOLLOW, kMask, &there) == 0;
    // Found in both views as different directories (a directory of the
    // table's namespace mounted over, or a container holding the same
    // path): which one the mounter meant is not shown.
    if (err == 0 && in_table_view &&
        (stx.stx_dev_major != there.stx_dev_major || stx.stx_dev_minor != there.stx_dev_minor ||
         stx.stx_ino != there.stx_ino))
      return fmt::format("the overlay layer {} names different directories here and in the "
                         "mount namespace the overlay is in: which one its mounter meant is not "
                         "shown",
                         l);
    if (err != 0 && in_table_view) {
      l = root_dir + l;
      stx = there;
      err = 0;
    }
    if (err != 0)
      return fmt::format("the overlay layer {} cannot be read here ({})", l, std::strerror(err));
    if (!S_ISDIR(stx.stx_mode))
      return fmt::format("the overlay layer {} is not a directory here", l);
    for (const MountInfo& x : mounts)
      if (x.id == stx.stx_mnt_id && x.idmapped)
        return fmt::format("the overlay layer {} is on an idmapped mount: not modelled", l);
  }
  const std::string upper = o.upper.empty() ? std::string() : layers.back();
  if (!o.upper.empty()) {
    // The upper layer's filesystem read-only: writes fail in overlay's
    // own code (ovl_want_write()), at points the model does not hold.
    // statvfs() also says so for a read-only view of a writable one, so
    // that is unknown too.
    struct statvfs sv {};
    if (statvfs(upper.c_str(), &sv) != 0)
      return fmt::format("the overlay's upper layer {} cannot be read here ({})", upper,
                         std::strerror(errno));
    if (sv.f_flag & ST_RDONLY)
      return fmt::format("the overlay's upper layer {} is read-only here: whether its "
                         "filesystem is, which refuses writes in overlay's own code, is not "
                         "known",
                         upper);
    // The upper named is this overlay's: a merged directory shows its
    // upper directory's inode number (ovl_getattr()).
    struct statx merged {}, top {};
    if (statx(AT_FDCWD, host_mp.c_str(), AT_SYMLINK_NOFOLLOW, STATX_INO, &merged) == 0 &&
        m.root == "/" &&
        statx(AT_FDCWD, upper.c_str(), AT_SYMLINK_NOFOLLOW, STATX_INO, &top) == 0 &&
        !m.HasSuperOption("xino") && merged.stx_ino != top.stx_ino)
      return fmt::format("the upper layer {} found here is not this overlay's (another "
                         "directory by that name in the mounter's view)",
                         upper);
  }
  out->lower.assign(layers.begin(),
                    layers.begin() + static_cast<ptrdiff_t>(o.lower.size() - o.data_only));
  out->upper = upper;
  out->userxattr = o.userxattr;
  if (o.redirect_dir == "on") {
    out->redirect_on = true;
  } else if (!o.redirect_dir.empty()) {
    out->redirect_on = false;
  } else if (std::optional<bool> def = RedirectDirDefault()) {
    out->redirect_on = *def;
  } else {
    out->redirect_unknown = true;
  }
  out->sees_own_xattrs = o.userxattr || SeesTrustedXattrs();
  return "";
}

std::optional<HostBackend::OvlDir> HostBackend::OvlChild(const OvlSb& sb, const OvlDir& parent,
                                                         std::string_view name,
                                                         std::string* why) {
  if (!sb.sees_own_xattrs) {
    *why = "pathwarden cannot read trusted.overlay.* (it lacks CAP_SYS_ADMIN)";
    return std::nullopt;
  }
  OvlDir out;
  bool opaque = false;
  auto look = [&](const std::string& dir, bool upper) -> int {
    // 1: a directory taken, 0: absent, -1: ends the lookup, -2: unknown.
    const std::string p = JoinHostPath(dir, name);
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return 0;
      *why = fmt::format("{}: {}", p, std::strerror(errno));
      return -2;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (upper) {
        *why = fmt::format("{} is not a directory in the upper layer", p);
        return -2;
      }
      return -1;  // a whiteout or a file hides what is below
    }
    auto o = OwnXattr(p, sb.userxattr, "opaque");
    auto r = OwnXattr(p, sb.userxattr, "redirect");
    if (!o || !r) {
      *why = fmt::format("{}: its overlay attributes cannot be read", p);
      return -2;
    }
    if (!r->empty()) {
      *why = fmt::format("{} has a redirect, which the model does not follow", p);
      return -2;
    }
    opaque = *o == "y";
    return 1;
  };
  if (!parent.upper.empty()) {
    const int u = look(parent.upper, true);
    if (u == -2) return std::nullopt;
    if (u == 1) out.upper = JoinHostPath(parent.upper, name);
    if (u == 1 && opaque) return out;
  }
  for (size_t k = 0; k < parent.lower.size(); ++k) {
    opaque = false;
    const int r = look(parent.lower[k], false);
    if (r == -2) return std::nullopt;
    if (r == -1) break;
    if (r == 1) {
      out.lower.push_back(JoinHostPath(parent.lower[k], name));
      out.lower_at.push_back(parent.lower_at[k]);
      if (opaque) break;
    }
  }
  if (out.upper.empty() && out.lower.empty()) {
    *why = fmt::format("no layer holds the directory {}", name);
    return std::nullopt;
  }
  return out;
}

void HostBackend::SetOvlDir(World& w, InodeId ino, std::optional<OvlDir> state) {
  const OvlSb& sb = ovl_sbs_.at(w.inode(ino).sb);
  uint32_t flags = 0;
  if (!state) {
    ovl_dirs_.erase(ino);
    if (!sb.redirect_on) flags = kInodeOvlPinnedUnknown;
  } else {
    if (!sb.redirect_on && !state->lower.empty()) flags = kInodeOvlPinned;
    if (sb.redirect_unknown && !state->lower.empty()) flags = kInodeOvlPinnedUnknown;
    ovl_dirs_[ino] = std::move(*state);
  }
  constexpr uint32_t kBoth = kInodeOvlPinned | kInodeOvlPinnedUnknown;
  w.SetFlags(ino, flags, kBoth & ~flags);
}

std::string HostBackend::Layer(const World& w, DentryId d) const {
  const InodeId ino = w.inode_of(d);
  // A directory: the layers its lookup found.
  if (auto it = ovl_dirs_.find(ino); it != ovl_dirs_.end()) {
    std::string layer = it->second.upper.empty() ? "" : "upper";
    for (size_t k : it->second.lower_at)
      layer += fmt::format("{}lower {}", layer.empty() ? "" : " + ", k);
    return layer;
  }
  // Anything else: the upper layer's name if there is one, else the
  // topmost lower's, as ovl_lookup() takes them.
  const Dentry& de = w.dentry(d);
  if (S_ISDIR(w.inode(ino).mode) || de.parent == kNone || de.parent == d) return "";
  auto parent = ovl_dirs_.find(w.inode_of(de.parent));
  if (parent == ovl_dirs_.end()) return "";
  const OvlDir& p = parent->second;
  const std::string_view name = w.str(de.name);
  struct stat st {};
  if (!p.upper.empty() && lstat(JoinHostPath(p.upper, name).c_str(), &st) == 0) return "upper";
  for (size_t k = 0; k < p.lower.size(); ++k)
    if (lstat(JoinHostPath(p.lower[k], name).c_str(), &st) == 0)
      return fmt::format("lower {}", p.lower_at[k]);
  return "";
}

}  // namespace pathwarden::vfs
