// Model::FromHost() and its companions: the live host as the model's
// backend (src/vfs/host.h), its sysctls, preloading and revalidation.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/vfs/backend.h"
#include "src/vfs/host.h"
#include "src/vfs/mountinfo.h"

namespace pathwarden {
namespace {

using vfs::DentryId;
using vfs::PathPos;

Result<std::string, std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Unexpected(fmt::format("{}: read error", path));
  return ss.str();
}

}  // namespace

HeldFiles::~HeldFiles() {
  for (int fd : fds) close(fd);
}

namespace {

// The host's protected_* sysctls; a value that cannot be read keeps the
// strictest the kernel knows (fail closed: the hardening refuses more).
// With `held`, the files are opened once and read with pread() after.
Result<Sysctls, std::string> ReadSysctls(const std::string& dir, HeldFiles* held = nullptr) {
  Sysctls s;
  size_t k = 0;
  for (const SysctlField& f : kSysctlFields) {
    const std::string path = fmt::format("{}/{}", dir, f.name);
    Result<std::string, std::string> text = std::string();
    if (held) {
      if (held->fds.size() <= k) {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
        held->fds.push_back(fd);
      }
      char buf[64];
      const ssize_t n = pread(held->fds[k], buf, sizeof buf, 0);
      if (n < 0) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
      text = std::string(buf, static_cast<size_t>(n));
    } else {
      text = ReadText(path);
    }
    ++k;
    if (!text) return Unexpected(text.error());
    int v = 0;
    std::string_view t = *text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    size_t i = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9' && v <= f.max; ++i) v = v * 10 + (t[i] - '0');
    if (t.empty() || i != t.size() || v > f.max)
      return Unexpected(fmt::format("{}:1:1: \"{}\" is not a value of {} (0 to {})", path, t,
                                    f.name, f.max));
    s.*(f.value) = v;
  }
  return s;
}

// The lexical d_revalidate() walk: each component of `path` from
// `start`, checked against the host before it is used; symlinks followed
// (all but a last one when !follow_last), mounts crossed. Stops where the
// world does not hold the name (a miss fills it fresh). Returns where it
// ended, nullopt when it stopped early.
struct Revalidator {
  vfs::World& w;
  vfs::HostBackend& host;
  PathPos root;
  int changed = 0;
  int links = 0;
  std::string error;

  void Count(Result<bool, std::string> r) {
    if (!r) {
      if (error.empty()) error = r.error();
      return;
    }
    if (*r) ++changed;
  }

  void Cross(PathPos* p) {
    while (w.dentry(p->dentry).mounts() != 0) {
      const vfs::MountId m = w.LookupMount(p->mnt, p->dentry);
      if (m == vfs::kNone) return;
      Count(host.RevalidateRoot(w, m));
      *p = {m, w.mount(m).root};
    }
  }

  std::optional<PathPos> Walk(PathPos start, std::string_view path, bool follow_last) {
    PathPos cur = path.starts_with('/') ? root : start;
    size_t i = 0;
    while (i < path.size()) {
      while (i < path.size() && path[i] == '/') ++i;
      if (i == path.size()) break;
      size_t end = path.find('/', i);
      if (end == std::string_view::npos) end = path.size();
      const std::string_view name = path.substr(i, end - i);
      i = end;
      size_t rest = i;
      while (rest < path.size() && path[rest] == '/') ++rest;
      const bool last = rest == path.size();
      if (name == ".") continue;
      if (name == "..") {
        if (cur == root) continue;
        while (cur.dentry == w.mount(cur.mnt).root && w.mount(cur.mnt).parent != vfs::kNone)
          cur = {w.mount(cur.mnt).parent, w.mount(cur.mnt).mountpoint};
        cur.dentry = w.dentry(cur.dentry).parent;
        continue;
      }
      if (!S_ISDIR(w.inode_at(cur.dentry).mode)) return std::nullopt;
      Count(host.Revalidate(w, cur, name));
      const DentryId child = w.Lookup(cur.dentry, name);
      if (child == vfs::kNone) return std::nullopt;
      PathPos next{cur.mnt, child};
      Cross(&next);
      const vfs::Inode& ino = w.inode_at(next.dentry);
      if (S_ISLNK(ino.mode) && (!last || follow_last)) {
        if (++links > 40) return std::nullopt;
        const std::string body(w.str(ino.data));
        std::optional<PathPos> to = Walk(cur, body, true);
        if (!to) return std::nullopt;
        next = *to;
      }
      cur = next;
    }
    return cur;
  }
};

}  // namespace

namespace {

// A process chrooted below a mount's root (a build chroot, `chroot DIR`)
// has no line for the mount its root is on: /proc/PID/mountinfo leaves
// out what its root cannot reach, and the mounts inside its root name
// that one as their parent. That mount is this process's own when the
// two share a mount namespace: it is added as the root of `mounts`,
// from the chroot's directory down. "" when done or not needed, else why
// the table has no root.
std::string AddChrootRoot(const HostOptions& o, std::vector<vfs::MountInfo>* mounts) {
  std::set<uint32_t> ids;
  for (const vfs::MountInfo& m : *mounts) ids.insert(m.id);
  for (const vfs::MountInfo& m : *mounts)
    if (m.mountpoint == "/" && !ids.count(m.parent)) return "";
  if (o.root_dir.empty()) return "";  // Attach() says what is missing
  struct statx stx {};
  char link[PATH_MAX];
  const ssize_t n = readlink(o.root_dir.c_str(), link, sizeof link - 1);
  if (statx(AT_FDCWD, o.root_dir.c_str(), 0, STATX_MNT_ID, &stx) != 0 ||
      !(stx.stx_mask & STATX_MNT_ID) || n <= 0)
    return fmt::format("{} cannot be read", o.root_dir);
  const std::string root(link, static_cast<size_t>(n));
  auto own_text = ReadText("/proc/self/mountinfo");
  if (!own_text) return own_text.error();
  auto own = vfs::ParseMountInfo(*own_text, "/proc/self/mountinfo");
  if (!own) return own.error();
  for (const vfs::MountInfo& m : *own) {
    if (m.id != stx.stx_mnt_id) continue;
    std::optional<std::string> rest = vfs::HostPathBelow(root, m.mountpoint);
    if (!rest) break;
    vfs::MountInfo r = m;
    r.mountpoint = "/";
    if (!rest->empty()) r.root = vfs::JoinHostPath(m.root, *rest);
    // A parent outside the table, as a root's is.
    r.parent = 0;
    while (ids.count(r.parent) || r.parent == r.id) ++r.parent;
    mounts->insert(mounts->begin(), std::move(r));
    return "";
  }
  return fmt::format("the root {} ({}) is inside mount {}, which neither its mount table nor "
                     "this process's shows (a chroot in another mount namespace)",
                     root, o.root_dir, stx.stx_mnt_id);
}

}  // namespace

Result<Model, std::string> Model::FromHost(const HostOptions& options, int abi) {
  auto text = ReadText(options.mountinfo);
  if (!text) return Unexpected(text.error());
  auto mounts = vfs::ParseMountInfo(*text, options.mountinfo);
  if (!mounts) return Unexpected(mounts.error());
  if (std::string e = AddChrootRoot(options, &*mounts); !e.empty())
    return Unexpected(fmt::format("{}: no root mount: {}", options.mountinfo, e));
  auto sysctls = ReadSysctls(options.sysctl_dir);
  if (!sysctls) return Unexpected(sysctls.error());
  Model m = NewModel(EngineOptions{}, abi);
  Impl& impl = *m.impl_;
  auto host = impl.engine.AsWriter(
      [&] { return vfs::HostBackend::Attach(impl.engine.world(), *mounts, options); });
  if (!host) {
    impl.engine.world().SetBackend(nullptr);
    return Unexpected(host.error());
  }
  impl.host = std::move(*host);
  impl.host_options = options;
  if (impl.engine.world().any_fuse()) impl.special |= Model::Impl::kFuse;
  // Unreadable: as if outside the initial namespace (unknowns, never a
  // wrong answer).
  auto reader = ReadUserNamespace("/proc/self");
  if (reader) {
    impl.reader_userns = *reader;
  } else {
    auto ns = std::make_shared<UserNamespace>();
    ns->overflow_shown = true;
    impl.reader_userns = std::move(ns);
  }
  if (options.consistency == HostOptions::Consistency::kRevalidate)
    impl.special |= Model::Impl::kRevalidates;
  if (options.lsm.read) {
    impl.lsms = std::make_shared<const SecurityModules>(ReadSecurityModules(options.lsm));
    if (impl.lsms->MayRefuse()) impl.special |= Model::Impl::kLsm;
  }
  m.SetSysctls(*sysctls);
  // fs.mount-max, where the directory has it (a test's stand-in may not:
  // the kernel's default stays).
  const std::string max_path = options.sysctl_dir + "/mount-max";
  if (access(max_path.c_str(), F_OK) == 0) {
    auto max_text = ReadText(max_path);
    if (!max_text) return Unexpected(max_text.error());
    std::string_view t = *max_text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    uint64_t v = 0;
    size_t i = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9' && v <= UINT32_MAX; ++i)
      v = v * 10 + static_cast<uint64_t>(t[i] - '0');
    if (t.empty() || i != t.size() || v > UINT32_MAX)
      return Unexpected(fmt::format("{}:1:1: \"{}\" is not a value of mount-max", max_path, t));
    impl.engine.AsWriter(
        [&] { impl.engine.world().set_mount_max(static_cast<uint32_t>(v)); });
  }
  return m;
}

bool Model::is_host() const { return impl_->host != nullptr; }

const SecurityModules* Model::security_modules() const { return impl_->lsms.get(); }

Result<void, int> Model::ReadSecurityModulesOf(Process p, int pid) {
  if (!Has(p)) return Unexpected(ESRCH);
  if (!impl_->lsms) return Unexpected(EINVAL);
  SecurityModuleSources from = impl_->host_options.lsm;
  from.pid = pid;
  auto m = std::make_shared<const SecurityModules>(ReadSecurityModules(from));
  if (m->MayRefuse()) impl_->special |= Impl::kLsm;
  impl_->process_lsms[p.index] = std::move(m);
  return {};
}

Result<uint64_t, std::string> Model::Preload(std::string_view path,
                                             const std::function<void(uint64_t)>& progress) {
  if (!impl_->host) return Unexpected(std::string("Preload(): not a host model"));
  auto at = Lookup(path, true);
  if (!at) {
    return Unexpected(at.error() == -1
                          ? fmt::format("{}: the model cannot say what it is", path)
                          : fmt::format("{}: {}", path, std::strerror(at.error())));
  }
  Engine& e = impl_->engine;
  const PathPos pos{at->mount, at->dentry};
  if (!S_ISDIR(e.world().inode_at(pos.dentry).mode))
    return Unexpected(fmt::format("{}: not a directory", path));
  return e.AsWriter([&] { return impl_->host->FillBelow(e.world(), pos, progress); });
}

Result<bool, std::string> RefreshSysctls(Model::Impl& impl) {
  Engine& e = impl.engine;
  auto sysctls = ReadSysctls(impl.host_options.sysctl_dir, &impl.sysctl_files);
  if (!sysctls) return Unexpected(sysctls.error());
  if (*sysctls == e.tasks().sysctl()) return false;
  e.AsWriter([&] { e.tasks().set_sysctl(*sysctls); });
  return true;
}

Result<int, std::string> RevalidatePaths(Model::Impl& impl, int task, Fd dirfd, bool sysctls,
                                         std::initializer_list<std::string_view> paths) {
  Engine& e = impl.engine;
  if (sysctls) {
    if (auto r = RefreshSysctls(impl); !r) return Unexpected(r.error());
  }
  const Task& t = e.tasks().task(task);
  return e.AsWriter([&]() -> Result<int, std::string> {
    Revalidator r{e.world(), *impl.host, t.root, 0, 0, {}};
    impl.host->ForgetHeldFiles();
    PathPos start = t.cwd;
    if (dirfd.num != kAtFdcwd.num) {
      auto it = t.fds.find(dirfd.num);
      if (it == t.fds.end()) return 0;  // EBADF, or an absolute path: the walk says
      start = it->second->path;
    }
    for (std::string_view path : paths)
      if (!path.empty()) (void)r.Walk(start, path, true);
    if (!r.error.empty()) return Unexpected(r.error);
    return r.changed;
  });
}

Result<int, std::string> Model::Revalidate(Process p, std::string_view path) {
  if (!impl_->host) return Unexpected(std::string("Revalidate(): not a host model"));
  if (!Has(p)) return Unexpected(std::string("Revalidate(): no such process"));
  return RevalidatePaths(*impl_, p.index, kAtFdcwd, true, {path});
}

HostCounts Model::host_counts() const {
  HostCounts c;
  if (!impl_->host) return c;
  const vfs::HostStats& s = impl_->host->stats();
  c.lookups = s.lookups;
  c.negatives = s.negatives;
  c.hard_links = s.hard_links;
  c.listings = s.listings;
  c.syscalls = s.statx_calls + s.xattr_calls + s.readlink_calls;
  c.revalidated = s.revalidated;
  c.refreshed = s.refreshed;
  return c;
}

}  // namespace pathwarden
