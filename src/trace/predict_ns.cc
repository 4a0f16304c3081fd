// Traced threads in mount namespaces other than the tracer's: each
// namespace read as a host model of its own, and the policy's rules
// carried onto the objects they are on (predict_state.h, NsView).
// Linux: fs/d_path.c d_path() (a descriptor's path, named from the root
// of its namespace's mount tree when the reader's root is elsewhere),
// security/landlock/fs.c is_access_to_paths_allowed() (the walk up the
// mount tree that meets the rules).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "src/trace/predict_state.h"
#include "src/vfs/host.h"

namespace pathwarden::trace {
namespace {

Result<std::vector<vfs::MountInfo>, std::string> ReadMounts(const std::string& file) {
  std::ifstream in(file);
  if (!in) return Unexpected(fmt::format("{} cannot be read", file));
  std::stringstream text;
  text << in.rdbuf();
  return vfs::ParseMountInfo(text.str(), file);
}

struct Object {
  uint32_t major = 0, minor = 0;
  uint64_t ino = 0;
  uint64_t mnt_id = 0;
};

std::optional<Object> StatObject(const std::string& path, int flags) {
  struct statx stx {};
  if (statx(AT_FDCWD, path.c_str(), flags, STATX_INO | STATX_MNT_ID, &stx) != 0) return std::nullopt;
  return Object{stx.stx_dev_major, stx.stx_dev_minor, stx.stx_ino,
                (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0};
}

// The view read afresh through thread `tid`: the model, its processes
// and the policy's layers built on it.
void Build(Predictor::State& st, NsView& v, pid_t tid) {
  v.model.reset();
  if (v.root_fd >= 0) close(v.root_fd);
  v.stale = false;
  ++v.gen;
  v.why_not.clear();
  v.lost.assign(st.built.size(), {});
  const std::string proc = fmt::format("/proc/{}", tid);
  v.root_fd = open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (v.root_fd < 0) {
    v.why_not = fmt::format("its mount namespace's root cannot be opened ({}/root: {})", proc,
                            ErrnoName(errno));
    return;
  }
  HostOptions o = st.host_options;
  o.mountinfo = proc + "/mountinfo";
  o.root_dir = fmt::format("/proc/self/fd/{}", v.root_fd);
  auto mounts = ReadMounts(o.mountinfo);
  if (!mounts) {
    v.why_not = "its mount namespace's table cannot be read: " + mounts.error();
    return;
  }
  v.mounts = *mounts;
  auto m = Model::FromHost(o);
  if (!m) {
    v.why_not = "its mount namespace cannot be read: " + m.error();
    return;
  }
  v.model.emplace(std::move(*m));
  Model& model = *v.model;
  const Process setup = model.Spawn("setup", Cred::ForUser(0, 0));
  v.base_plain = model.Spawn("traced", st.self, setup);
  v.base_layered = model.Spawn("traced", st.self, setup);
  for (size_t i = 0; i < st.built.size(); ++i) {
    LandlockRuleset r = st.built[i].ruleset;
    r.rules.clear();
    for (const LandlockRule& rule : st.built[i].ruleset.rules) {
      if (rule.type != landlock::kRulePathBeneath) {
        r.rules.push_back(rule);
        continue;
      }
      std::string at;
      switch (rule.nofollow ? NsPlace::kUnknown : NsPathOf(rule.path, o.root_dir, *mounts, &at)) {
        case NsPlace::kReached: {
          LandlockRule moved = rule;
          moved.path = std::move(at);
          r.rules.push_back(std::move(moved));
          break;
        }
        case NsPlace::kNever: break;  // no walk in the namespace meets it
        case NsPlace::kUnknown: v.lost[i].push_back(rule.path); break;
      }
    }
    const Decision d = model.Apply(v.base_layered, Restrict{std::move(r)});
    if (!d.allowed()) {
      v.why_not = fmt::format("the policy's layer {} cannot be built in its mount namespace: {}",
                              i + 1, d.ToText());
      return;
    }
  }
}

}  // namespace

NsView::~NsView() {
  model.reset();
  if (root_fd >= 0) close(root_fd);
}

namespace {

// An object, its filesystem (the device mountinfo gives its mounts: an
// overlay over several filesystems shows a file's layer's device to
// stat), and its path inside that filesystem.
struct Located {
  Object obj;
  uint32_t sb_major = 0, sb_minor = 0;
  std::string in_fs;
};

// The object the path `full` (one the tracer can stat) reaches, and its
// path inside its filesystem: `path` (the same object's canonical path in
// the namespace whose mounts are `mounts`) below its mount's point, after
// that mount's root.
std::optional<Located> Locate(const std::string& full, const std::string& path,
                              std::span<const vfs::MountInfo> mounts) {
  const std::optional<Object> obj = StatObject(full, AT_SYMLINK_NOFOLLOW);
  if (!obj || obj->mnt_id == 0) return std::nullopt;
  for (const vfs::MountInfo& m : mounts) {
    if (m.id != obj->mnt_id) continue;
    std::optional<std::string> rest = vfs::HostPathBelow(path, m.mountpoint);
    if (!rest) return std::nullopt;
    return Located{*obj, m.major, m.minor,
                   rest->empty() ? m.root : vfs::JoinHostPath(m.root, *rest)};
  }
  return std::nullopt;
}

// Where the namespace whose root is `root` ("" for the tracer's own) and
// whose mounts are `mounts` has `l`: each mount of that filesystem whose
// root is at or above it, the first whose path reaches the same object.
// Landlock's walk meets the object only inside such a mount: it goes up
// to the mount's root, then to where that is mounted, skipping the
// mount point itself (a rule on a directory a mount covers is not met
// from the mount: seen on 6.18). A path hidden by a mount is met only
// through a descriptor opened before the mount hid it: taken as never,
// which can make a refusal of the model's wrong, never an allow.
NsPlace Place(const Located& l, const std::string& root, std::span<const vfs::MountInfo> mounts,
              std::string* at) {
  for (const vfs::MountInfo& m : mounts) {
    if (m.major != l.sb_major || m.minor != l.sb_minor) continue;
    std::optional<std::string> rest = vfs::HostPathBelow(l.in_fs, m.root);
    if (!rest) continue;
    std::string p = rest->empty() ? m.mountpoint : vfs::JoinHostPath(m.mountpoint, *rest);
    const std::optional<Object> seen = StatObject(root + p, AT_SYMLINK_NOFOLLOW);
    if (seen && seen->major == l.obj.major && seen->minor == l.obj.minor && seen->ino == l.obj.ino) {
      *at = std::move(p);
      return NsPlace::kReached;
    }
  }
  return NsPlace::kNever;
}

}  // namespace

NsPlace NsPathOf(const std::string& path, const std::string& ns_root,
                 std::span<const vfs::MountInfo> mounts, std::string* at) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) return NsPlace::kUnknown;
  auto own = ReadMounts("/proc/self/mountinfo");
  if (!own) return NsPlace::kUnknown;
  const std::optional<Located> l = Locate(real, real, *own);
  if (!l) return NsPlace::kUnknown;
  return Place(*l, ns_root, mounts, at);
}

std::string ViewPath(const NsView& v, const std::string& path) {
  return fmt::format("/proc/self/fd/{}{}", v.root_fd, path);
}

std::optional<std::string> TracerPathOf(const NsView& v, const std::string& path) {
  auto own = ReadMounts("/proc/self/mountinfo");
  if (!own) return std::nullopt;
  const std::optional<Located> l = Locate(ViewPath(v, path), path, v.mounts);
  std::string at;
  if (!l || Place(*l, "", *own, &at) != NsPlace::kReached) return std::nullopt;
  return at;
}

bool SameInView(const NsView& v, const std::string& path, const std::string& proc_obj) {
  struct stat a, b;
  return stat(proc_obj.c_str(), &a) == 0 &&
         lstat(ViewPath(v, path).c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string ViewFor(Predictor::State& st, const std::string& mnt, pid_t tid, NsView** out) {
  std::unique_ptr<NsView>& slot = st.views[mnt];
  if (!slot) slot = std::make_unique<NsView>();
  NsView& v = *slot;
  v.own = mnt == st.own_mnt_ns;
  if (v.stale) Build(st, v, tid);
  *out = &v;
  return v.why_not;
}

}  // namespace pathwarden::trace
