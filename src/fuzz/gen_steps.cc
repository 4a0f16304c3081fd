// The generator's steps: every operation of the format, by every process,
// with random flags, modes, owners and paths. Names the steps create join
// the tree the later steps aim at, and fds opened with a name are used by
// the fd operations (and passed between processes).

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>

#include "pathwarden/acl.h"
#include "pathwarden/uapi.h"
#include "src/fuzz/gen_internal.h"
#include "src/scenario/names.h"

namespace pathwarden::fuzz::gen_internal {
namespace {

struct OpWeight {
  Op op;
  int weight;
};
constexpr OpWeight kOps[] = {
    {Op::kOpen, 16},     {Op::kClose, 2},       {Op::kStat, 5},          {Op::kLstat, 3},
    {Op::kAccess, 5},    {Op::kMkdir, 5},       {Op::kMknod, 3},         {Op::kSymlink, 3},
    {Op::kLink, 4},      {Op::kUnlink, 4},      {Op::kRmdir, 3},         {Op::kRename, 7},
    {Op::kTruncate, 3},  {Op::kFtruncate, 2},   {Op::kChmod, 4},         {Op::kChown, 3},
    {Op::kLchown, 2},    {Op::kReadlink, 2},    {Op::kChdir, 2},         {Op::kFchdir, 1},
    {Op::kExecCheck, 3}, {Op::kIoctl, 2},       {Op::kBindTcp, 1},       {Op::kConnectTcp, 1},
    {Op::kSignal, 2},    {Op::kConnectAbstract, 2}, {Op::kSendFd, 1},    {Op::kMountTmpfs, 1},
    {Op::kBindMount, 1}, {Op::kUmount, 1},      {Op::kRestrict, 3},      {Op::kUtimensat, 2},
    {Op::kChroot, 1},    {Op::kGetxattr, 2},    {Op::kSetxattr, 3},      {Op::kListxattr, 1},
    {Op::kRemovexattr, 2}, {Op::kFallocate, 2}, {Op::kFchmod, 2},        {Op::kFchown, 2},
    {Op::kFutimens, 1},  {Op::kMountSetattr, 1},
};

// Attribute names of every namespace, the ACL names, and names the calls
// refuse (no namespace, no suffix, empty).
constexpr std::string_view kXattrNames[] = {
    "user.a", "user.b", "user.a", "trusted.t", "security.s", "security.capability",
    "system.posix_acl_access", "system.posix_acl_default", "system.x", "foo.bar", "user.", ""};
constexpr std::string_view kXattrNamesInUserNs[] = {"user.a", "user.b", "trusted.t",
                                                     "system.x", "foo.bar", "user.", ""};

// The calls whose answer, for a process in a user namespace, hangs on a
// capability over a namespace the model does not hold (Cred::CapableOver()).
bool OutsideTheNsModel(Op op) {
  return op == Op::kMountTmpfs || op == Op::kBindMount || op == Op::kUmount ||
         op == Op::kMountSetattr || op == Op::kBindTcp || op == Op::kSignal;
}

// ACLs in setfacl's short form, valid and not.
constexpr std::string_view kAcls[] = {
    "u::rw-,g::r--,o::---", "u::rwx,u:1000:r-x,g::r-x,m::r-x,o::---",
    "u::rwx,g::rwx,g:50:rw-,m::rwx,o::r--", "u::rw-,u:2000:rw-,g::---,m::r--,o::---",
    "u::rw-,o::---", ""};

// A security.capability value: a v2 one (revision 2, effective, no
// capabilities), or bytes that are not one.
std::string FileCapsValue(Rng& rng) {
  if (rng.Percent(40)) return rng.Percent(50) ? "" : "junk";
  std::string v(20, '\0');
  v[0] = 1;  // VFS_CAP_FLAGS_EFFECTIVE
  v[3] = 2;  // VFS_CAP_REVISION_2
  return v;
}

// Harmless commands only: nothing that freezes or changes a filesystem.
constexpr std::string_view kIoctls[] = {"FIONREAD", "FIOCLEX", "FIONCLEX", "FIONBIO",
                                        "FIOASYNC", "FIOQSIZE", "FIGETBSZ", "FS_IOC_GETFLAGS",
                                        "TCGETS"};

uint32_t CreateMode(Rng& rng) {
  static constexpr uint32_t kModes[] = {0644, 0600, 0666, 0755, 0777, 0700, 0444, 04755, 02755, 01777, 0};
  if (rng.Percent(10)) return static_cast<uint32_t>(rng.Below(010000));
  return rng.Pick(kModes);
}

int64_t Owner(Rng& rng, std::span<const uint32_t> pool) {
  if (rng.Percent(20)) return -1;
  return pool[rng.Below(pool.size())];
}

const FdInfo* PickFd(GenState& g, ProcInfo& actor) {
  if (actor.fds.empty() || g.rng.Percent(5)) return nullptr;
  return &actor.fds[g.rng.Below(actor.fds.size())];
}

std::string FdName(GenState& g, ProcInfo& actor) {
  const FdInfo* f = PickFd(g, actor);
  return f ? f->name : "nofd";
}

bool IsDir(GenState& g, const std::string& path) {
  for (const Known& k : g.tree)
    if (k.path == path) return k.type == "dir";
  return false;
}

uint64_t OpenFlags(Rng& rng) {
  uint64_t f = 0;
  const int acc = rng.Range(0, 99);
  f |= acc < 50 ? O_RDONLY : acc < 75 ? O_WRONLY : acc < 98 ? O_RDWR : 3;
  if (rng.Percent(25)) f |= O_CREAT;
  if (rng.Percent((f & O_CREAT) ? 25 : 3)) f |= O_EXCL;
  if (rng.Percent(12)) f |= O_TRUNC;
  if (rng.Percent(10)) f |= O_DIRECTORY;
  if (rng.Percent(10)) f |= O_NOFOLLOW;
  if (rng.Percent(8)) f |= O_PATH;
  if (rng.Percent(8)) f |= O_APPEND;
  if (rng.Percent(3)) f |= O_NOATIME;
  if (rng.Percent(5)) f |= O_CLOEXEC;
  return f;
}

// Most fds the generator names are closed or failed to open by the time
// an fd operation runs: half the time, the operation gets a fresh one,
// opened just before it (`acc` O_RDONLY, O_RDWR or O_PATH) on a known
// regular file. Else, or without a file, any fd name.
std::string FreshFileFd(GenState& g, ProcInfo& actor, uint64_t acc) {
  if (!g.rng.Percent(50)) return FdName(g, actor);
  std::vector<const Known*> files;
  for (const Known& k : g.tree)
    if (k.type == "file") files.push_back(&k);
  if (files.empty()) return FdName(g, actor);
  StepSpec open;
  open.op = Op::kOpen;
  open.as = actor.name;
  open.path = files[g.rng.Below(files.size())]->path;
  open.flags = acc;
  open.mode = 0644;
  open.fd = "fd" + std::to_string(g.next_fd++);
  actor.fds.push_back({open.fd, open.path, false});
  std::string name = open.fd;
  g.s->steps.push_back(std::move(open));
  return name;
}

}  // namespace

void GenerateSteps(GenState& g) {
  Rng& rng = g.rng;
  Scenario& s = *g.s;
  std::vector<int> weights;
  for (const auto& o : kOps) weights.push_back(o.weight);
  const int n = rng.Range(g.options.steps_min, std::max(g.options.steps_min, g.options.steps_max));
  for (int i = 0; i < n; ++i) {
    StepSpec st;
    st.op = kOps[rng.Weighted(weights)].op;
    const size_t who = g.procs.size() == 1 || rng.Percent(15) ? 0 : 1 + rng.Below(g.procs.size() - 1);
    ProcInfo& actor = g.procs[who];
    // In a user namespace the engine answers unknown what a capability
    // over a namespace it does not hold decides (mounts, low ports, other
    // processes): such a process makes other calls.
    while (actor.userns && OutsideTheNsModel(st.op)) st.op = kOps[rng.Weighted(weights)].op;
    st.as = actor.name;
    auto other = [&]() -> const std::string& { return g.procs[rng.Below(g.procs.size())].name; };
    std::string abs;
    switch (st.op) {
      case Op::kOpen: {
        st.flags = OpenFlags(rng);
        const bool creat = st.flags & O_CREAT;
        const int pick = rng.Range(0, 99);
        st.path = PickPath(g, actor, creat && pick < 50 ? Want::kNew : pick < 70 ? Want::kFile : pick < 85 ? Want::kDir : Want::kAny,
                           &st, &abs);
        st.mode = creat && rng.Percent(60) ? CreateMode(rng) : 0644;
        if (creat) AddKnown(g, abs, "file");
        if (rng.Percent(50)) {
          st.fd = "fd" + std::to_string(g.next_fd++);
          actor.fds.push_back({st.fd, abs, IsDir(g, abs)});
        }
        break;
      }
      case Op::kClose:
      case Op::kFtruncate:
      case Op::kFchdir: st.fd = FdName(g, actor); break;
      case Op::kStat:
      case Op::kLstat:
      case Op::kUtimensat:
        st.path = PickPath(g, actor, Want::kAny, &st);
        if (st.op != Op::kLstat && rng.Percent(12)) st.flags |= AT_SYMLINK_NOFOLLOW;
        if (st.op != Op::kLstat && rng.Percent(4) && !actor.fds.empty()) {
          st.flags |= AT_EMPTY_PATH;
          st.path = "";
          st.dirfd = actor.fds[rng.Below(actor.fds.size())].name;
        }
        if (st.op == Op::kUtimensat && rng.Percent(65)) {
          static constexpr TimeSpec kTimes[] = {TimeSpec::kNow, TimeSpec::kOmit, TimeSpec::kSet};
          st.times = std::array<TimeSpec, 2>{rng.Pick(kTimes), rng.Pick(kTimes)};
        }
        break;
      case Op::kAccess:
        st.path = PickPath(g, actor, Want::kAny, &st);
        if (rng.Percent(40)) st.access_mode |= R_OK;
        if (rng.Percent(35)) st.access_mode |= W_OK;
        if (rng.Percent(30)) st.access_mode |= X_OK;
        if (rng.Percent(20)) st.flags |= AT_EACCESS;
        if (rng.Percent(10)) st.flags |= AT_SYMLINK_NOFOLLOW;
        break;
      case Op::kMkdir:
        st.path = PickPath(g, actor, rng.Percent(80) ? Want::kNew : Want::kAny, &st, &abs);
        st.mode = rng.Percent(50) ? CreateMode(rng) : 0755;
        AddKnown(g, abs, "dir");
        break;
      case Op::kMknod: {
        st.path = PickPath(g, actor, rng.Percent(85) ? Want::kNew : Want::kAny, &st, &abs);
        st.mode = rng.Percent(50) ? CreateMode(rng) : 0644;
        static constexpr NodeType kTypes[] = {NodeType::kFile, NodeType::kFifo, NodeType::kSocket,
                                              NodeType::kChar, NodeType::kFile, NodeType::kFifo,
                                              NodeType::kBlock, NodeType::kDir};
        st.mknod_type = rng.Pick(kTypes);
        if (st.mknod_type == NodeType::kChar) {
          static constexpr std::pair<uint32_t, uint32_t> kChar[] = {{1, 3}, {1, 5}, {1, 7}, {42, 0}};
          std::tie(st.rdev_major, st.rdev_minor) = rng.Pick(kChar);
        } else if (st.mknod_type == NodeType::kBlock) {
          st.rdev_major = 42;
          st.rdev_minor = 1;
        }
        AddKnown(g, abs, std::string(NodeTypeName(st.mknod_type)));
        break;
      }
      case Op::kSymlink: {
        st.path = PickPath(g, actor, rng.Percent(85) ? Want::kNew : Want::kAny, &st, &abs);
        std::string dest;
        PickPath(g, actor, Want::kAny, nullptr, &dest);
        st.target = rng.Percent(50) ? dest : Relative(Dirname(abs), dest);
        if (rng.Percent(8)) st.target = "/nonexistent";
        if (st.target.empty()) st.target = ".";
        AddKnown(g, abs, "symlink");
        break;
      }
      case Op::kLink:
      case Op::kRename: {
        std::string from;
        st.path = PickPath(g, actor, Want::kExisting, &st, &from);
        const int r = rng.Range(0, 99);
        // path2 is relative to the cwd, never to dirfd.
        st.path2 = PickPath(g, actor, r < 60 ? Want::kNew : Want::kExisting, nullptr, &abs);
        if (st.op == Op::kLink) {
          if (rng.Percent(20)) st.flags |= AT_SYMLINK_FOLLOW;
          AddKnown(g, abs, "file");
        } else {
          const int f = rng.Range(0, 99);
          if (f < 10) st.flags = RENAME_NOREPLACE;
          else if (f < 22) st.flags = RENAME_EXCHANGE;
          else if (f < 25) st.flags = RENAME_WHITEOUT;
          else if (f < 26) st.flags = RENAME_EXCHANGE | RENAME_NOREPLACE;
          std::string type;
          for (const Known& k : g.tree)
            if (k.path == from) type = k.type;
          AddKnown(g, abs, type);
        }
        break;
      }
      case Op::kUnlink:
        st.path = PickPath(g, actor, rng.Percent(70) ? Want::kExisting : Want::kAny, &st);
        if (rng.Percent(12)) st.flags = AT_REMOVEDIR;
        break;
      case Op::kRmdir: st.path = PickPath(g, actor, Want::kDir, &st); break;
      case Op::kTruncate: st.path = PickPath(g, actor, Want::kFile, nullptr); break;
      case Op::kChmod:
        st.path = PickPath(g, actor, Want::kExisting, &st);
        st.mode = CreateMode(rng);
        if (rng.Percent(6)) st.flags = AT_SYMLINK_NOFOLLOW;
        break;
      case Op::kChown:
      case Op::kLchown:
        st.path = PickPath(g, actor, Want::kExisting, &st);
        st.uid = Owner(rng, kUids);
        st.gid = Owner(rng, kGids);
        if (st.op == Op::kChown && rng.Percent(8)) st.flags = AT_SYMLINK_NOFOLLOW;
        break;
      case Op::kReadlink: st.path = PickPath(g, actor, Want::kSymlink, &st); break;
      case Op::kChdir:
      case Op::kChroot:
        st.path = PickPath(g, actor, Want::kDir, nullptr, &abs);
        break;
      case Op::kExecCheck:
        st.path = PickPath(g, actor, Want::kFile, &st);
        if (rng.Percent(10)) st.flags = AT_SYMLINK_NOFOLLOW;
        break;
      case Op::kIoctl:
        st.fd = FdName(g, actor);
        st.cmd_text = std::string(rng.Pick(kIoctls));
        break;
      case Op::kBindTcp:
      case Op::kConnectTcp: st.port = rng.Pick(kPorts); break;
      case Op::kSignal:
      case Op::kConnectAbstract: st.target = other(); break;
      case Op::kSendFd: {
        st.fd = FdName(g, actor);
        st.target = other();
        for (const FdInfo& f : actor.fds)
          if (f.name == st.fd)
            for (ProcInfo& p : g.procs)
              if (p.name == st.target && &p != &actor) p.fds.push_back(f);
        break;
      }
      case Op::kMountTmpfs:
        st.path = PickPath(g, actor, Want::kDir, nullptr, &abs);
        if (rng.Percent(15)) st.flags |= MS_RDONLY;
        if (rng.Percent(15)) st.flags |= MS_NOEXEC;
        if (rng.Percent(10)) st.flags |= MS_NOSUID;
        if (rng.Percent(10)) st.flags |= MS_NODEV;
        if (rng.Percent(10)) st.flags |= kMsNosymfollow;
        g.mounts.push_back(abs);
        break;
      case Op::kBindMount:
        st.path = PickPath(g, actor, rng.Percent(80) ? Want::kDir : Want::kFile, nullptr);
        st.path2 = PickPath(g, actor, Want::kDir, nullptr, &abs);
        if (rng.Percent(30)) st.flags = MS_REC;
        g.mounts.push_back(abs);
        break;
      case Op::kUmount:
        st.path = PickPath(g, actor, Want::kMount, nullptr);
        if (rng.Percent(30)) st.flags |= MNT_DETACH;
        if (rng.Percent(8)) st.flags |= UMOUNT_NOFOLLOW;
        if (rng.Percent(4)) st.flags |= MNT_FORCE;
        break;
      case Op::kMountSetattr: {
        st.path = PickPath(g, actor, rng.Percent(80) ? Want::kMount : Want::kDir, nullptr);
        if (rng.Percent(20)) st.flags |= kAtRecursive;
        if (rng.Percent(5)) st.flags |= AT_SYMLINK_NOFOLLOW;
        // The model's flags, and now and then the atime modes or a partial
        // atime mask (EINVAL).
        constexpr uint64_t kAttrs[] = {kMountAttrRdonly, kMountAttrNosuid, kMountAttrNodev,
                                       kMountAttrNoexec, kMountAttrNosymfollow};
        for (uint64_t a : kAttrs) {
          if (rng.Percent(20)) st.attr_set |= a;
          if (rng.Percent(15)) st.attr_clr |= a;
        }
        if (rng.Percent(8)) {
          st.attr_clr |= kMountAttrAtime;
          if (rng.Percent(60)) st.attr_set |= rng.Percent(50) ? kMountAttrNoatime : kMountAttrStrictatime;
        }
        if (rng.Percent(3)) st.attr_set |= kMountAttrNoatime;
        if (rng.Percent(2)) st.attr_clr |= kMountAttrNoatime;
        break;
      }
      case Op::kRestrict: st.layer = RandomLayer(g, actor, true); break;
      case Op::kGetxattr:
      case Op::kSetxattr:
      case Op::kListxattr:
      case Op::kRemovexattr: {
        st.path = PickPath(g, actor, Want::kExisting, &st);
        if (rng.Percent(15)) st.flags |= AT_SYMLINK_NOFOLLOW;
        if (rng.Percent(6) && !actor.fds.empty()) {
          st.flags |= AT_EMPTY_PATH;
          st.path = "";
          st.dirfd = actor.fds[rng.Below(actor.fds.size())].name;
        }
        if (st.op == Op::kListxattr) break;
        // In a user namespace, security.* and the ACL names are converted
        // or owned by the superblock's namespace: unknown to the engine.
        st.xattr_name = std::string(actor.userns ? rng.Pick(kXattrNamesInUserNs) : rng.Pick(kXattrNames));
        if (st.op != Op::kSetxattr) break;
        if (st.xattr_name == "system.posix_acl_access" || st.xattr_name == "system.posix_acl_default") {
          st.xattr_acl = std::string(rng.Pick(kAcls));
          auto entries = PosixAcl::ParseEntries(*st.xattr_acl);
          st.xattr_value = entries && !entries->empty() ? AclEntriesToXattr(*entries) : "";
        } else if (st.xattr_name == "security.capability") {
          st.xattr_value = FileCapsValue(rng);
        } else {
          static constexpr std::string_view kValues[] = {"", "v", "value 2"};
          st.xattr_value = std::string(rng.Pick(kValues));
        }
        if (rng.Percent(15)) st.xattr_flags |= 0x1;  // XATTR_CREATE
        if (rng.Percent(15)) st.xattr_flags |= 0x2;  // XATTR_REPLACE
        break;
      }
      case Op::kFallocate: {
        st.fd = FreshFileFd(g, actor, rng.Percent(70) ? O_RDWR : O_RDONLY);
        static constexpr uint64_t kModes[] = {0, 0, 0x01, 0x03, 0x02, 0x10, 0x40, 0x08, 0x09, 0x80};
        st.flags = rng.Pick(kModes);
        static constexpr int64_t kOffsets[] = {0, 0, 7, 4096, -1};
        static constexpr int64_t kLens[] = {1, 10, 100, 8192, 0};
        st.offset = rng.Pick(kOffsets);
        st.len = rng.Pick(kLens);
        break;
      }
      case Op::kFchmod:
        st.fd = FreshFileFd(g, actor, rng.Percent(60) ? O_RDONLY : O_PATH);
        st.mode = CreateMode(rng);
        break;
      case Op::kFchown:
        st.fd = FreshFileFd(g, actor, rng.Percent(60) ? O_RDONLY : O_PATH);
        st.uid = Owner(rng, kUids);
        st.gid = Owner(rng, kGids);
        break;
      case Op::kFutimens:
        st.fd = FreshFileFd(g, actor, rng.Percent(60) ? O_RDONLY : O_PATH);
        if (rng.Percent(65)) {
          static constexpr TimeSpec kTimes[] = {TimeSpec::kNow, TimeSpec::kOmit, TimeSpec::kSet};
          st.times = std::array<TimeSpec, 2>{rng.Pick(kTimes), rng.Pick(kTimes)};
        }
        break;
    }
    if (st.op == Op::kChdir && st.path.size() < 300) actor.cwd = abs.empty() ? actor.cwd : abs;
    if (st.op == Op::kIoctl) st.cmd = scenario_internal::IoctlFromName(st.cmd_text).value_or(0);
    s.steps.push_back(std::move(st));
  }
}

}  // namespace pathwarden::fuzz::gen_internal
