// The live host backend against the machine: a scratch tree with every
// kind of object (src/kernel/scratch_host.h), built in a private mount
// namespace of this test process, read by Model::FromHost() lazily and
// eagerly; the model's attributes against lstat, the ACL xattrs, statx
// and mountinfo; its decisions against each other and against the real
// kernel (src/kernel/host_probe.h) for several identities, with and
// without Landlock; revalidation; and a listing of the host before and
// after, to show reading changed nothing. Root only; skipped elsewhere.

#include <acl/libacl.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/acl.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <random>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/uapi.h"
#include "src/api/linearizability_test_util.h"
#include "src/api/model_impl.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/guardian.h"
#include "src/kernel/scratch_host.h"
#include "src/kernel/sysctl_guard.h"
#include "src/vfs/mountinfo.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden {
namespace {

using kernel_internal::ProbeHost;
using kernel_internal::ProbeIdentity;
using kernel_internal::ScratchHost;

// Every object below `root`, mounts crossed, symlinks not followed; the
// root first, then in sorted order.
std::vector<std::string> HostPaths(const std::string& root) {
  std::vector<std::string> out{root};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::none, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    out.push_back(it->path().string());
  std::sort(out.begin() + 1, out.end());
  return out;
}

// The ACL of `path` as PosixAcl::ToText() prints it ("" when none or the
// mode says it all), from libacl: the model's reading is not its own judge.
std::string HostAcl(const std::string& path, acl_type_t type) {
  acl_t a = acl_get_file(path.c_str(), type);
  if (a == nullptr) return "";
  std::string out;
  if (type == ACL_TYPE_ACCESS && acl_equiv_mode(a, nullptr) == 0) {
    acl_free(a);
    return "";
  }
  char* text = acl_to_any_text(a, nullptr, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
  if (text != nullptr) out = text;
  acl_free(text);
  acl_free(a);
  return out;
}

std::string ModelAcl(const vfs::World& w, vfs::AclId id) {
  if (id == vfs::kNone) return "";
  const PosixAcl* a = w.acl(id);
  return a ? a->ToText() : "?";
}

// The identities the decisions are compared for. "root" has the
// capabilities this machine can grant.
struct Who {
  std::string name;
  Cred cred;
};

std::vector<Who> Identities() {
  const uint64_t caps = kernel_internal::AvailableCaps();
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective &= caps;
  root.cap_permitted &= caps;
  Cred root_nocaps = Cred::ForUser(0, 0);
  root_nocaps.cap_effective = root_nocaps.cap_permitted = 0;
  Cred alice = Cred::ForUser(1000, 1000);
  Cred bob = Cred::ForUser(1001, 1001);
  bob.SetGroups({1000});
  return {{"root", root}, {"root without capabilities", root_nocaps}, {"uid 1000", alice},
          {"uid 1001 in group 1000", bob}};
}

// The read-only requests the kernel probe may make on `path` of type
// `mode` (it never opens devices, FIFOs or sockets but with O_PATH).
std::vector<Request> ReadOnlyRequests(const std::string& path, mode_t mode, bool writes = true) {
  std::vector<Request> r{Stat{.path = path},
                         Lstat{.path = path},
                         Access{.path = path, .mode = R_OK},
                         Access{.path = path, .mode = W_OK},
                         Access{.path = path, .mode = X_OK},
                         Open{.path = path, .flags = O_PATH},
                         Open{.path = path, .flags = O_PATH | O_NOFOLLOW},
                         Readlink{.path = path},
                         Chdir{.path = path},
                         ExecCheck{.path = path}};
  if (S_ISREG(mode) || S_ISDIR(mode)) {
    r.push_back(Open{.path = path, .flags = O_RDONLY});
    r.push_back(Open{.path = path, .flags = O_RDONLY | O_DIRECTORY});
  }
  // Opening for writing changes no data, but watchers see it: the
  // scratch tree only.
  if (S_ISREG(mode) && writes) r.push_back(Open{.path = path, .flags = O_WRONLY});
  if (S_ISDIR(mode)) r.push_back(Open{.path = path + "/missing", .flags = O_RDONLY});
  return r;
}

// Requests that would change the tree: only the model is asked (it never
// changes the host), the lazy model against the eager one.
std::vector<Request> ChangingRequests(const std::string& path) {
  return {Mkdir{.path = path + "/new"},
          Unlink{.path = path},
          Rmdir{.path = path},
          Rename{.oldpath = path, .newpath = path + ".moved"},
          Truncate{.path = path},
          Chmod{.path = path, .mode = 0600},
          Chown{.path = path, .uid = 1000, .gid = -1},
          Open{.path = path, .flags = O_WRONLY | O_CREAT, .mode = 0644},
          Symlink{.target = "x", .path = path + "/link"},
          Link{.oldpath = path, .newpath = path + ".link"}};
}

std::string Describe(const Request& r) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::string name = typeid(T).name();
        if constexpr (requires { x.path; }) return fmt::format("{} {}", name, x.path);
        if constexpr (requires { x.oldpath; }) return fmt::format("{} {}", name, x.oldpath);
        return name;
      },
      r);
}

// A Landlock layer: read everything below the scratch root's "home" and
// "links", execute below "bin", write below "tmp".
LandlockRuleset Layer(const std::string& root) {
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile | landlock::kFsReadDir | landlock::kFsExecute |
                         landlock::kFsWriteFile | landlock::kFsMakeReg | landlock::kFsMakeDir |
                         landlock::kFsRemoveFile | landlock::kFsTruncate;
  rs.AllowPath(root + "/home", landlock::kFsReadFile | landlock::kFsReadDir);
  rs.AllowPath(root + "/links", landlock::kFsReadFile | landlock::kFsReadDir);
  rs.AllowPath(root + "/bin", landlock::kFsExecute | landlock::kFsReadFile);
  rs.AllowPath(root + "/tmp", landlock::kFsWriteFile | landlock::kFsMakeReg |
                                  landlock::kFsRemoveFile | landlock::kFsTruncate);
  rs.AllowPath(root + "/ro", landlock::kFsReadFile);
  return rs;
}

// What `ask` says of a host model read by a child that is uid 1001 (so
// that the host refuses pathwarden what it refuses that user), as text:
// "could not ..." when the child could not read the host.
std::string ReadAsUid1001(const std::function<std::string(Model&)>& ask) {
  HostOptions o;
  o.lsm.trusted = RootIdleModules();
  int pipefd[2];
  if (pipe(pipefd) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(pipefd[0]);
    std::string out;
    if (setgroups(0, nullptr) != 0 || setresgid(1001, 1001, 1001) != 0 ||
        setresuid(1001, 1001, 1001) != 0) {
      out = "could not drop to uid 1001";
    } else if (auto h = Model::FromHost(o); !h) {
      out = "could not read the host: " + h.error();
    } else {
      out = ask(*h);
    }
    (void)!write(pipefd[1], out.data(), out.size());
    _exit(0);
  }
  close(pipefd[1]);
  std::string got;
  char buf[1024];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(pipefd[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "waitpid failed";
  return got;
}

class HostBackendTest : public ScratchHostTest {
 protected:
  void SetUp() override {
    ScratchHostTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    root_ = scratch_->root();
    auto before = kernel_internal::HostListing(root_);
    ASSERT_TRUE(before) << before.error();
    listing_before_ = *before;
  }

  void TearDown() override {
    // Whatever the test read, the host is as it was (atimes aside, which
    // the listing leaves out: reading a directory may move them).
    if (scratch_ && !changes_host_) ExpectUnchanged();
    ScratchHostTest::TearDown();
  }

  void ExpectUnchanged() {
    auto after = kernel_internal::HostListing(root_);
    ASSERT_TRUE(after) << after.error();
    EXPECT_EQ(listing_before_, *after) << "reading the host changed it";
  }

  static Model Host(HostOptions::Consistency c = HostOptions::Consistency::kSnapshot) {
    HostOptions o;
    o.consistency = c;
    // The scratch tree is this test's own, in its private mount namespace:
    // no process pathwarden cannot see runs a program from it.
    o.assume_unseen_run_nothing = true;
    auto m = Model::FromHost(o);
    EXPECT_TRUE(m) << m.error();
    return std::move(*m);
  }

  std::string root_;
  std::string listing_before_;
  bool changes_host_ = false;
};

TEST_F(HostBackendTest, AttributesAreTheHosts) {
  Model m = Host();
  auto n = m.Preload(root_);
  ASSERT_TRUE(n) << n.error();
  const std::vector<std::string> paths = HostPaths(root_);
  // Less one: ro/deep is data/sub/deep through the bind mount, read once.
  EXPECT_EQ(*n + 1, paths.size());
  const vfs::World& w = EngineOf(m).world();
  int checked = 0;
  for (const std::string& p : paths) {
    SCOPED_TRACE(p);
    struct stat st {};
    ASSERT_EQ(lstat(p.c_str(), &st), 0);
    auto node = m.Lookup(p, false);
    ASSERT_TRUE(node) << "lookup: " << node.error();
    const vfs::Inode& i = w.inode(node->inode);
    EXPECT_EQ(i.mode, st.st_mode);
    EXPECT_EQ(i.uid, st.st_uid);
    EXPECT_EQ(i.gid, st.st_gid);
    EXPECT_EQ(i.nlink, st.st_nlink);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      EXPECT_EQ(i.rdev, st.st_rdev);
    }
    EXPECT_FALSE(i.flags & (vfs::kInodeOpaque | vfs::kInodeUnseen));
    if (S_ISLNK(st.st_mode)) {
      std::string body(4096, '\0');
      const ssize_t len = readlink(p.c_str(), body.data(), body.size());
      ASSERT_GE(len, 0);
      body.resize(static_cast<size_t>(len));
      EXPECT_EQ(w.str(i.data), body);
      ++checked;
      continue;
    }
    EXPECT_EQ(ModelAcl(w, i.acl), HostAcl(p, ACL_TYPE_ACCESS));
    if (S_ISDIR(st.st_mode)) {
      EXPECT_EQ(ModelAcl(w, i.default_acl), HostAcl(p, ACL_TYPE_DEFAULT));
    }
    struct statx stx {};
    ASSERT_EQ(statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx), 0);
    EXPECT_EQ((i.flags & vfs::kInodeImmutable) != 0, (stx.stx_attributes & STATX_ATTR_IMMUTABLE) != 0);
    EXPECT_EQ((i.flags & vfs::kInodeAppend) != 0, (stx.stx_attributes & STATX_ATTR_APPEND) != 0);
    ++checked;
  }
  EXPECT_GT(checked, 60);
  // What the kinds are meant to show, shown.
  EXPECT_NE(ModelAcl(w, w.inode(m.Lookup(scratch_->Path("file_access_acl"))->inode).acl), "");
  EXPECT_NE(ModelAcl(w, w.inode(m.Lookup(scratch_->Path("dir_default_acl"))->inode).default_acl),
            "");
  EXPECT_TRUE(w.inode(m.Lookup(scratch_->Path("file_immutable"))->inode).flags &
              vfs::kInodeImmutable);
  EXPECT_TRUE(w.inode(m.Lookup(scratch_->Path("file_append_only"))->inode).flags &
              vfs::kInodeAppend);
  // Hard links are one inode.
  EXPECT_EQ(m.Lookup(scratch_->Path("hardlink_a"))->inode,
            m.Lookup(scratch_->Path("hardlink_b"))->inode);
  // Mount flags are mountinfo's.
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  auto mounts = vfs::ParseMountInfo(text.str(), "/proc/self/mountinfo");
  ASSERT_TRUE(mounts) << mounts.error();
  int mounts_checked = 0;
  for (const vfs::MountInfo& mi : *mounts) {
    if (!mi.mountpoint.starts_with(root_)) continue;
    auto at = m.Lookup(mi.mountpoint, false);
    ASSERT_TRUE(at) << mi.mountpoint;
    EXPECT_EQ(w.mount(at->mount).flags, mi.flags) << mi.mountpoint;
    EXPECT_EQ((w.sb(w.inode(at->inode).sb).flags & vfs::kSbReadonly) != 0, mi.sb_readonly);
    ++mounts_checked;
  }
  EXPECT_EQ(mounts_checked, 3);  // the tmpfs, the noexec tmpfs, the read-only bind
}

TEST_F(HostBackendTest, LazyAndEagerDecideAlike) {
  Model lazy = Host();
  Model eager = Host();
  ASSERT_TRUE(eager.Preload(root_));
  const auto eager_lookups = eager.host_counts().lookups;
  std::vector<std::string> paths = HostPaths(root_);
  paths.push_back(root_ + "/missing");
  paths.push_back(root_ + "/home/alice/missing");
  paths.push_back(root_ + "/links/dangling/x");
  int compared = 0;
  for (const Who& who : Identities()) {
    for (bool confined : {false, true}) {
      Process pl = lazy.Spawn(who.name, who.cred);
      Process pe = eager.Spawn(who.name, who.cred);
      if (confined) {
        const LandlockRuleset rs = Layer(root_);
        ASSERT_TRUE(lazy.Apply(pl, Restrict{rs}).allowed());
        ASSERT_TRUE(eager.Apply(pe, Restrict{rs}).allowed());
      }
      for (const std::string& p : paths) {
        struct stat st {};
        const mode_t mode = lstat(p.c_str(), &st) == 0 ? st.st_mode : 0;
        std::vector<Request> rs = ReadOnlyRequests(p, mode);
        for (Request& r : ChangingRequests(p)) rs.push_back(std::move(r));
        for (const Request& r : rs) {
          const Decision a = lazy.Evaluate(pl, r);
          const Decision b = eager.Evaluate(pe, r);
          ASSERT_EQ(a.verdict(), b.verdict()) << who.name << " " << Describe(r) << "\n  lazy: "
                                              << a.ToText() << "\n  eager: " << b.ToText();
          ASSERT_EQ(a.err(), b.err()) << who.name << " " << Describe(r);
          ASSERT_EQ(a.ToText(), b.ToText()) << who.name << " " << Describe(r);
          ASSERT_FALSE(a.unknown()) << who.name << " " << Describe(r) << ": " << a.ToText();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 5000);
  // The eager model had read everything below the scratch root: answering
  // asked the host nothing more but the two names renaming and linking
  // the root itself make beside it, in /tmp. The lazy one listed only
  // what rmdir needed to know empty.
  EXPECT_EQ(eager.host_counts().lookups, eager_lookups + 2);
  EXPECT_GT(lazy.host_counts().lookups, 0u);
  EXPECT_LT(lazy.host_counts().listings, eager.host_counts().listings);
}

// The kernel's answer once it is settled. A walk through many symlinks
// can fail with ELOOP on the kernel when its RCU walk restarts in
// ref-walk mode (a mount or rename anywhere on the machine moves the
// global mount_lock or rename_lock sequence meanwhile, as the other tests
// running beside this one do): the links counted by the first attempt
// stay counted (fs/namei.c: total_link_count is set per name, in
// __set_nameidata(), not per attempt). The model answers the walk of a
// quiet machine; the kernel is asked again, alone, when it said ELOOP and
// the model did not.
int SettledAnswer(const ProbeIdentity& id, const Request& r, int kernel, int model) {
  for (int again = 0; again < 5 && kernel == ELOOP && model != ELOOP; ++again) {
    const Request one[] = {r};
    auto k = ProbeHost(id, one);
    if (!k) break;
    kernel = (*k)[0];
  }
  return kernel;
}

// Every read-only decision of the model equals the kernel's, for each
// identity, unconfined and under a Landlock layer.
void ExpectKernelAgrees(Model& m, const std::vector<std::string>& paths, bool scratch,
                        const std::string& layer_root, int* compared, int* unknown) {
  const bool with_layer = scratch;
  for (const Who& who : Identities()) {
    for (bool confined : {false, true}) {
      if (confined && !with_layer) continue;
      Process p = m.Spawn(who.name, who.cred);
      ProbeIdentity id{who.cred, {}};
      if (confined) {
        const LandlockRuleset rs = Layer(layer_root);
        ASSERT_TRUE(m.Apply(p, Restrict{rs}).allowed());
        id.layers.push_back(rs);
      }
      std::vector<Request> requests;
      for (const std::string& path : paths) {
        struct stat st {};
        const mode_t mode = lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
        for (Request& r : ReadOnlyRequests(path, mode, scratch)) requests.push_back(std::move(r));
      }
      auto kernel = ProbeHost(id, requests);
      ASSERT_TRUE(kernel) << kernel.error();
      ASSERT_EQ(kernel->size(), requests.size());
      for (size_t k = 0; k < requests.size(); ++k) {
        const Decision d = m.Evaluate(p, requests[k]);
        if (d.unknown()) {
          ++*unknown;
          continue;
        }
        (*kernel)[k] = SettledAnswer(id, requests[k], (*kernel)[k], d.err());
        EXPECT_EQ(d.err(), (*kernel)[k])
            << who.name << (confined ? " (Landlock)" : "") << ": " << Describe(requests[k])
            << "\n  model: " << d.ToText();
        ++*compared;
      }
    }
  }
}

TEST_F(HostBackendTest, KernelAgreesOnTheScratchTree) {
  Model m = Host();
  int compared = 0, unknown = 0;
  std::vector<std::string> paths = HostPaths(root_);
  paths.push_back(root_ + "/home/alice/missing");
  ExpectKernelAgrees(m, paths, true, root_, &compared, &unknown);
  EXPECT_EQ(unknown, 0);
  EXPECT_GT(compared, 3000);
}

// A deterministic sample of the machine's own /usr, /etc and /var.
std::vector<std::string> RealSample() {
  std::vector<std::string> out;
  for (const char* dir : {"/usr", "/usr/bin", "/usr/include/linux", "/usr/lib", "/etc",
                          "/etc/ssl", "/etc/ssl/private", "/var", "/var/log", "/var/lib",
                          "/var/cache", "/var/spool"}) {
    std::vector<std::string> names;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      names.push_back(it->path().string());
    std::sort(names.begin(), names.end());
    out.push_back(dir);
    // Every seventh name, at most 40 a directory.
    for (size_t i = 0, n = 0; i < names.size() && n < 40; i += 7, ++n) out.push_back(names[i]);
  }
  return out;
}

TEST_F(HostBackendTest, KernelAgreesOnRealPaths) {
  Model m = Host();
  int compared = 0, unknown = 0;
  ExpectKernelAgrees(m, RealSample(), false, root_, &compared, &unknown);
  // /usr, /etc and /var are on modelled filesystems here.
  EXPECT_EQ(unknown, 0);
  EXPECT_GT(compared, 2000);
}

TEST_F(HostBackendTest, BindMountAndSourceShareLandlockRules) {
  Model m = Host();
  const std::string source = root_ + "/data/sub/deep";
  const std::string bound = root_ + "/ro/deep";
  for (const std::string& rule_on : {root_ + "/data/sub", root_ + "/ro"}) {
    LandlockRuleset rs;
    rs.handled_access_fs = landlock::kFsReadFile;
    rs.AllowPath(rule_on, landlock::kFsReadFile);
    Process p = m.Spawn("confined", Cred::ForUser(0, 0));
    ASSERT_TRUE(m.Apply(p, Restrict{rs}).allowed());
    std::vector<Request> rq{Open{.path = source}, Open{.path = bound},
                            Open{.path = root_ + "/data/file"}};
    for (const Request& r : rq) EXPECT_FALSE(m.Evaluate(p, r).unknown());
    EXPECT_TRUE(m.Evaluate(p, rq[0]).allowed()) << rule_on;
    EXPECT_TRUE(m.Evaluate(p, rq[1]).allowed()) << rule_on;
    EXPECT_EQ(m.Evaluate(p, rq[2]).err(), EACCES) << rule_on;
    Cred root = Cred::ForUser(0, 0);
    root.cap_effective &= kernel_internal::AvailableCaps();
    root.cap_permitted &= kernel_internal::AvailableCaps();
    auto kernel = ProbeHost({root, {rs}}, rq);
    ASSERT_TRUE(kernel) << kernel.error();
    EXPECT_EQ(*kernel, (std::vector<int>{0, 0, EACCES})) << rule_on;
  }
  // One inode through both mounts.
  EXPECT_EQ(m.Lookup(source)->inode, m.Lookup(bound)->inode);
  EXPECT_NE(m.Lookup(source)->mount, m.Lookup(bound)->mount);
}

TEST_F(HostBackendTest, WhatItCannotSeeOrDoesNotModelIsUnknown) {
  Model m = Host();
  Process p = m.Spawn("www", Cred::ForUser(33, 33));
  // procfs and sysfs decide themselves.
  for (const char* path : {"/proc/self/status", "/proc/1/environ", "/sys/kernel/mm"}) {
    const Decision d = m.Evaluate(p, Open{.path = path});
    EXPECT_TRUE(d.unknown()) << path << ": " << d.ToText();
    EXPECT_FALSE(d.allowed());
    EXPECT_NE(d.reason().unknown_why, "") << path;
  }
  // What decides without them is still answered: stat needs no
  // permission on the last component.
  EXPECT_TRUE(m.Evaluate(p, Stat{.path = "/proc"}).allowed());

  // A directory pathwarden itself may not search: a child that is uid
  // 1001 reads the host, and asks as root for a file inside
  // /home/alice (0700, uid 1000).
  const std::string secret = scratch_->Path("file_0600_1000");
  const std::string got = ReadAsUid1001([&](Model& h) {
    const Decision as_root = h.Evaluate(h.Init(), Stat{.path = secret});
    const Decision as_bob =
        h.Evaluate(h.Spawn("bob", Cred::ForUser(1001, 1001)), Stat{.path = secret});
    return fmt::format("{}|{}|{}|{}", VerdictName(as_root.verdict()),
                       as_root.reason().unknown_why, VerdictName(as_bob.verdict()), as_bob.err());
  });
  // Root could search it, but what is inside is unknown to a reader that
  // cannot; uid 1001 itself is refused at /home/alice, as the kernel does.
  EXPECT_TRUE(got.starts_with("unknown|the host does not let pathwarden (uid 1001) search"))
      << got;
  EXPECT_TRUE(got.ends_with("|denied|13")) << got;
}

// A program a process runs cannot be opened for writing or truncated:
// exec holds its write count negative, and get_write_access() answers
// ETXTBSY, after DAC and before the mount's EROFS and Landlock (seen on
// 6.18). A reader that cannot see every process's program answers unknown
// for a file with an execute bit (any could be running), and still knows
// a file without one.
TEST_F(HostBackendTest, ARunningProgramIsNotWritable) {
  changes_host_ = true;  // the program and a plain file, removed below
  const std::string prog = root_ + "/running_program";
  const std::string plain = root_ + "/plain_file";
  std::filesystem::copy_file("/bin/sleep", prog);
  ASSERT_EQ(chmod(prog.c_str(), 0755), 0);
  { std::ofstream(plain) << "data"; }
  ASSERT_EQ(chmod(plain.c_str(), 0644), 0);
  const pid_t runner = fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    execl(prog.c_str(), prog.c_str(), "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until the exec is done, /proc/PID/exe is this test's own binary.
  struct stat want {};
  ASSERT_EQ(stat(prog.c_str(), &want), 0);
  for (int i = 0; i < 2000; ++i) {
    struct stat got {};
    if (stat(fmt::format("/proc/{}/exe", runner).c_str(), &got) == 0 &&
        got.st_ino == want.st_ino && got.st_dev == want.st_dev)
      break;
    usleep(1000);
  }
  // The kernel first, for each write mode and truncate(); each is refused
  // before it changes anything.
  auto kernel_open = [](const std::string& path, int flags) {
    const int fd = open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0) return errno;
    close(fd);
    return 0;
  };
  Model m = Host();
  const Process root = m.Init();
  for (int flags : {O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC}) {
    const int kernel = kernel_open(prog, flags);
    EXPECT_EQ(kernel, ETXTBSY) << flags;
    const Decision d = m.Evaluate(root, Open{.path = prog, .flags = static_cast<uint64_t>(flags)});
    EXPECT_EQ(d.err(), kernel) << flags << ": " << d.ToText();
  }
  const int kernel_truncate = truncate(prog.c_str(), 0) == 0 ? 0 : errno;
  EXPECT_EQ(kernel_truncate, ETXTBSY);
  EXPECT_EQ(m.Evaluate(root, Truncate{.path = prog}).err(), kernel_truncate);
  EXPECT_EQ(kernel_open(prog, O_RDONLY), 0);
  EXPECT_TRUE(m.Evaluate(root, Open{.path = prog}).allowed());
  EXPECT_EQ(kernel_open(plain, O_WRONLY), 0);
  EXPECT_TRUE(m.Evaluate(root, Open{.path = plain, .flags = O_WRONLY}).allowed());
  // DAC comes first: another user is refused write permission.
  EXPECT_EQ(m.Evaluate(m.Spawn("bob", Cred::ForUser(1001, 1001)),
                       Open{.path = prog, .flags = O_WRONLY})
                .err(),
            EACCES);

  // Read by uid 1001, which cannot see root's processes' programs.
  const std::string got = ReadAsUid1001([&](Model& h) {
    const Decision p = h.Evaluate(h.Init(), Open{.path = prog, .flags = O_WRONLY});
    const Decision t = h.Evaluate(h.Init(), Truncate{.path = prog});
    const Decision f = h.Evaluate(h.Init(), Open{.path = plain, .flags = O_WRONLY});
    return fmt::format("{}|{}|{}|{}", VerdictName(p.verdict()), VerdictName(t.verdict()),
                       VerdictName(f.verdict()), p.reason().unknown_why);
  });
  EXPECT_TRUE(got.starts_with("unknown|unknown|allowed|whether a process is running")) << got;

  kill(runner, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(runner, &status, 0), runner);
  EXPECT_EQ(unlink(prog.c_str()), 0);
  EXPECT_EQ(unlink(plain.c_str()), 0);
}

// An active swap file (S_SWAPFILE): no name of it is removed or renamed
// (may_delete(): EPERM) and its size never changes (ETXTBSY: truncate,
// O_TRUNC, fallocate), while opening it for writing and reading it are
// allowed; seen on 6.18. swapon(2) acts on the whole machine, so the file
// is one every process can find (else the others' host models would
// answer unknown while it is on), in /var/tmp, and a guardian turns it
// off and removes it however this test ends.
TEST_F(HostBackendTest, AnActiveSwapFileIsNeitherRemovedNorResized) {
  char dir_tmpl[] = "/var/tmp/pathwarden-swap-XXXXXX";
  if (mkdtemp(dir_tmpl) == nullptr) GTEST_SKIP() << "no /var/tmp to swap on";
  const std::string dir = dir_tmpl, file = dir + "/swapfile";
  const auto remove = [&] {
    unlink(file.c_str());
    rmdir(dir.c_str());
  };
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) != 0 || (fs.f_type != 0xEF53 && fs.f_type != 0x58465342)) {
    remove();
    GTEST_SKIP() << "/var/tmp is not on ext4 or xfs, which the model decides and which swap on files";
  }
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  {
    std::ofstream out(file);
    const std::string mib(1 << 20, '\0');
    for (int i = 0; i < 16; ++i) out << mib;
  }
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  ASSERT_EQ(std::system(fmt::format("mkswap -q '{}' >/dev/null", file).c_str()), 0);
  auto guardian = kernel_internal::Guardian::Start({}, [&]() -> int {
    syscall(SYS_swapoff, file.c_str());
    remove();
    return 0;
  });
  ASSERT_TRUE(guardian) << guardian.error();
  if (syscall(SYS_swapon, file.c_str(), 0) != 0) {
    const int err = errno;
    guardian->Finish();
    GTEST_SKIP() << "swapon: " << ErrnoName(err);
  }

  // The kernel first; each refusal changes nothing.
  const int k_unlink = unlink(file.c_str()) == 0 ? 0 : errno;
  const int k_rename = rename(file.c_str(), (dir + "/moved").c_str()) == 0 ? 0 : errno;
  const int k_truncate = truncate(file.c_str(), 4096) == 0 ? 0 : errno;
  int fd = open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const int k_otrunc = fd < 0 ? errno : 0;
  if (fd >= 0) close(fd);
  fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
  const int k_write = fd < 0 ? errno : 0;
  const int k_fallocate = fd < 0 ? -1 : fallocate(fd, 0, 0, 4096) == 0 ? 0 : errno;
  if (fd >= 0) close(fd);
  EXPECT_EQ(k_unlink, EPERM);
  EXPECT_EQ(k_rename, EPERM);
  EXPECT_EQ(k_truncate, ETXTBSY);
  EXPECT_EQ(k_otrunc, ETXTBSY);
  EXPECT_EQ(k_write, 0);
  EXPECT_EQ(k_fallocate, ETXTBSY);

  Model m = Host();
  const Process root = m.Init();
  EXPECT_EQ(m.Evaluate(root, Unlink{.path = file}).err(), k_unlink);
  EXPECT_EQ(m.Evaluate(root, Rename{.oldpath = file, .newpath = dir + "/moved"}).err(), k_rename);
  EXPECT_EQ(m.Evaluate(root, Truncate{.path = file}).err(), k_truncate);
  const Decision otrunc = m.Evaluate(root, Open{.path = file, .flags = O_WRONLY | O_TRUNC});
  EXPECT_EQ(otrunc.err(), k_otrunc) << otrunc.ToText();
  EXPECT_NE(otrunc.ToText().find("is an active swap file"), std::string::npos) << otrunc.ToText();
  const Decision opened = m.Apply(root, Open{.path = file, .flags = O_WRONLY});
  EXPECT_EQ(opened.err(), k_write) << opened.ToText();
  EXPECT_EQ(m.Evaluate(root, Fallocate{.fd = opened.fd(), .len = 4096}).err(), k_fallocate);
  // Another file in the same directory is unaffected.
  EXPECT_TRUE(m.Evaluate(root, Open{.path = dir + "/other", .flags = O_WRONLY | O_CREAT,
                                    .mode = 0600})
                  .allowed());

  EXPECT_EQ(guardian->Finish(), 0);
  std::ifstream swaps("/proc/swaps");
  const std::string listed((std::istreambuf_iterator<char>(swaps)), {});
  EXPECT_EQ(listed.find(file), std::string::npos) << listed;
  EXPECT_NE(access(dir.c_str(), F_OK), 0) << "the guardian left " << dir;
}

// Whether another process holds a file open for writing (or a working
// directory) on a mount is not seen from the host: making the mount
// read-only and unmounting it are unknown, where the kernel may answer
// EBUSY (as it does here, for a writer the model does not hold).
TEST_F(HostBackendTest, WhatOtherProcessesHoldOnAMountIsUnknown) {
  changes_host_ = true;  // a file written, removed below
  const std::string file = root_ + "/held_for_writing";
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  struct {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
  } attr{kMountAttrRdonly, 0, 0, 0};
  const long r = syscall(SYS_mount_setattr, AT_FDCWD, root_.c_str(), 0, &attr, sizeof attr);
  EXPECT_EQ(r < 0 ? errno : 0, EBUSY);
  const std::string leaf = root_ + "/leaf_mount";
  ASSERT_EQ(mkdir(leaf.c_str(), 0755), 0);
  ASSERT_EQ(mount("tmpfs", leaf.c_str(), "tmpfs", 0, nullptr), 0);
  Model m = Host();
  const Decision ro =
      m.Evaluate(m.Init(), MountSetattr{.path = root_, .attr_set = kMountAttrRdonly});
  EXPECT_TRUE(ro.unknown()) << ro.ToText();
  EXPECT_NE(ro.reason().unknown_why.find("open for writing"), std::string::npos) << ro.ToText();
  // A mount with nothing mounted below it: whether anything uses it is
  // not seen.
  const Decision um = m.Evaluate(m.Init(), Umount{.path = leaf});
  EXPECT_TRUE(um.unknown()) << um.ToText();
  // The scratch root has mounts below it: EBUSY whatever others hold.
  EXPECT_EQ(m.Evaluate(m.Init(), Umount{.path = root_}).err(), EBUSY);
  // A writer the model holds itself (its open applied, on the model only)
  // decides, whatever others hold: EBUSY, as the kernel answered.
  ASSERT_TRUE(m.Apply(m.Init(), Open{.path = file, .flags = O_WRONLY}).allowed());
  EXPECT_EQ(m.Evaluate(m.Init(), MountSetattr{.path = root_, .attr_set = kMountAttrRdonly}).err(),
            EBUSY);
  // What the writers do not decide is still answered.
  EXPECT_TRUE(
      m.Evaluate(m.Init(), MountSetattr{.path = root_, .attr_set = kMountAttrNosuid}).allowed());
  EXPECT_EQ(m.Evaluate(m.Spawn("bob", Cred::ForUser(1001, 1001)),
                       MountSetattr{.path = root_, .attr_set = kMountAttrRdonly})
                .err(),
            EPERM);
  close(fd);
  EXPECT_EQ(unlink(file.c_str()), 0);
  EXPECT_EQ(umount2(leaf.c_str(), 0), 0);
  EXPECT_EQ(rmdir(leaf.c_str()), 0);
}

TEST_F(HostBackendTest, RevalidationSeesTheHostChange) {
  changes_host_ = true;  // this test changes its own scratch tree
  const std::string file = root_ + "/data/file";
  const std::string fresh = root_ + "/data/fresh";
  Model snap = Host();
  Model live = Host(HostOptions::Consistency::kRevalidate);
  Process ps = snap.Spawn("alice", Cred::ForUser(1000, 1000));
  Process pl = live.Spawn("alice", Cred::ForUser(1000, 1000));
  EXPECT_TRUE(snap.Evaluate(ps, Open{.path = file}).allowed());
  EXPECT_TRUE(live.Evaluate(pl, Open{.path = file}).allowed());
  EXPECT_EQ(snap.Evaluate(ps, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(pl, Stat{.path = fresh}).err(), ENOENT);
  // The host changes: the file is 0600 now, a new name exists.
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  { std::ofstream(fresh) << "new\n"; }
  // A snapshot keeps what it read; revalidate-on-use sees the change.
  EXPECT_TRUE(snap.Evaluate(ps, Open{.path = file}).allowed());
  EXPECT_EQ(snap.Evaluate(ps, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(pl, Open{.path = file}).err(), EACCES);
  EXPECT_TRUE(live.Evaluate(pl, Stat{.path = fresh}).allowed());
  // Revalidating the snapshot by hand.
  auto changed = snap.Revalidate(ps, file);
  ASSERT_TRUE(changed) << changed.error();
  // At least the file (other processes may change /tmp meanwhile).
  EXPECT_GE(*changed, 1);
  EXPECT_EQ(snap.Evaluate(ps, Open{.path = file}).err(), EACCES);
  ASSERT_TRUE(snap.Revalidate(ps, fresh));
  EXPECT_TRUE(snap.Evaluate(ps, Stat{.path = fresh}).allowed());
  // A replaced file is another inode: a Landlock rule on the old one no
  // longer holds, as in the kernel.
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile;
  rs.AllowPath(fresh, landlock::kFsReadFile);
  Process confined = live.Spawn("confined", Cred::ForUser(0, 0));
  ASSERT_TRUE(live.Apply(confined, Restrict{rs}).allowed());
  EXPECT_TRUE(live.Evaluate(confined, Open{.path = fresh}).allowed());
  const std::string tmp = root_ + "/data/fresh.tmp";
  { std::ofstream(tmp) << "replacement\n"; }
  ASSERT_EQ(rename(tmp.c_str(), fresh.c_str()), 0);
  EXPECT_EQ(live.Evaluate(confined, Open{.path = fresh}).err(), EACCES);
  // Removed on the host: gone after revalidation.
  ASSERT_EQ(unlink(fresh.c_str()), 0);
  EXPECT_EQ(live.Evaluate(pl, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_GE(live.host_counts().refreshed, 3u);
}

// rmdir's emptiness on a host that changes: the names a revalidating
// model read before may have gone, and names it read as absent may have
// come (a rename inside the directory, then a remove). Before, the model
// kept both: ENOTEMPTY for an emptied directory, and ok for one that
// still held the renamed file (a wrong "ok").
TEST_F(HostBackendTest, RevalidationSeesADirectoryEmptiedOrFilled) {
  changes_host_ = true;  // this test changes its own scratch tree
  const std::string dir = root_ + "/data/emptied";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  { std::ofstream(dir + "/n") << "x\n"; }
  Model live = Host(HostOptions::Consistency::kRevalidate);
  Process root = live.Init();
  EXPECT_TRUE(live.Evaluate(root, Stat{.path = dir + "/n"}).allowed());
  EXPECT_EQ(live.Evaluate(root, Stat{.path = dir + "/n3"}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(root, Rmdir{.path = dir}).err(), ENOTEMPTY);
  // Renamed on the host: the model's "n" is gone, its absent "n3" came.
  ASSERT_EQ(rename((dir + "/n").c_str(), (dir + "/n3").c_str()), 0);
  const Decision full = live.Evaluate(root, Rmdir{.path = dir});
  EXPECT_EQ(full.err(), ENOTEMPTY) << full.ToText();
  // Removed on the host: empty.
  ASSERT_EQ(unlink((dir + "/n3").c_str()), 0);
  const Decision empty = live.Evaluate(root, Rmdir{.path = dir});
  EXPECT_TRUE(empty.allowed()) << empty.ToText();
  // Renaming a directory over it asks the same.
  const std::string other = root_ + "/data/renamed-over";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  { std::ofstream(dir + "/back") << "x\n"; }
  EXPECT_EQ(live.Evaluate(root, Rename{.oldpath = other, .newpath = dir}).err(), ENOTEMPTY);
  ASSERT_EQ(unlink((dir + "/back").c_str()), 0);
  EXPECT_TRUE(live.Evaluate(root, Rename{.oldpath = other, .newpath = dir}).allowed());
  EXPECT_EQ(rmdir(other.c_str()), 0);
  EXPECT_EQ(rmdir(dir.c_str()), 0);
}

// Filesystems that decide themselves, mounted for the test: an overlay
// (ovl_permission() checks the lower inode with the mounter's
// credentials) answers unknown, with why.
TEST_F(HostBackendTest, AnOverlayIsModelledWhereItsLayersCanBeFound) {
  changes_host_ = true;  // its own scratch tree: the overlay's directories
  const std::string o = root_ + "/ovl";
  for (const char* d : {"", "/upper", "/work", "/merged", "/upper2", "/work2", "/rel"})
    ASSERT_EQ(mkdir((o + d).c_str(), 0755), 0) << d;
  const std::string opts =
      fmt::format("lowerdir={}/data,upperdir={}/upper,workdir={}/work", root_, o, o);
  if (mount("overlay", (o + "/merged").c_str(), "overlay", 0, opts.c_str()) != 0)
    GTEST_SKIP() << "no overlayfs here: " << std::strerror(errno);
  // Layers named relative to the mounter's working directory, which
  // mountinfo prints as given.
  // (Back by descriptor: the working directory's path may be hidden by
  // the private namespace's own /tmp.)
  const int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cwd, 0) << std::strerror(errno);
  ASSERT_EQ(chdir(root_.c_str()), 0);
  const int rel = mount("overlay", (o + "/rel").c_str(), "overlay", 0,
                        "lowerdir=data,upperdir=ovl/upper2,workdir=ovl/work2");
  const int rel_errno = errno;
  ASSERT_EQ(fchdir(cwd), 0) << std::strerror(errno);
  close(cwd);
  ASSERT_EQ(rel, 0) << std::strerror(rel_errno);
  Model m = Host();
  Process p = m.Spawn("alice", Cred::ForUser(1000, 1000));
  // The merged file is the lower layer's, its mode and owner with it.
  const Decision d = m.Evaluate(p, Open{.path = o + "/merged/file"});
  EXPECT_FALSE(d.unknown()) << d.ToText();
  EXPECT_EQ(d.allowed(), m.Evaluate(p, Open{.path = root_ + "/data/file"}).allowed());
  const Decision r = m.Evaluate(p, Open{.path = o + "/rel/file"});
  EXPECT_TRUE(r.unknown()) << r.ToText();
  EXPECT_NE(r.reason().unknown_why.find("relative to the mounter's working directory"),
            std::string::npos)
      << r.reason().unknown_why;
  ASSERT_EQ(umount2((o + "/rel").c_str(), MNT_DETACH), 0);
  ASSERT_EQ(umount2((o + "/merged").c_str(), MNT_DETACH), 0);
}

// The protected_* sysctls come from the host, and again on revalidation.
TEST_F(HostBackendTest, SysctlsAreReadAgainOnRevalidation) {
  char dir[] = "/tmp/pathwarden-sysctl.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto write = [&](const char* name, int v) { std::ofstream(std::string(dir) + "/" + name) << v << "\n"; };
  write("protected_symlinks", 1);
  write("protected_hardlinks", 1);
  write("protected_regular", 2);
  write("protected_fifos", 0);
  HostOptions o;
  o.sysctl_dir = dir;
  auto m = Model::FromHost(o);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 0}));
  write("protected_fifos", 1);
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 0}));
  ASSERT_TRUE(m->Revalidate(m->Init(), "/"));
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 1}));
  // A value the kernel would never hold is an error, with where.
  write("protected_regular", 7);
  auto bad = m->Revalidate(m->Init(), "/");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), std::string(dir) + "/protected_regular:1:1: \"7\" is not a value of "
                                            "protected_regular (0 to 2)");
  std::filesystem::remove_all(dir);
}

// Readers that miss fill concurrently (each fill a write), while the
// writer applies changes elsewhere: every answer equals the eager
// model's. Run under TSan by ./test's tsan phase.
TEST_F(HostBackendTest, ReadersFillConcurrently) {
  Model eager = Host();
  ASSERT_TRUE(eager.Preload(root_));
  Model lazy = Host();
  const std::vector<std::string> paths = HostPaths(root_);
  const Cred alice = Cred::ForUser(1000, 1000);
  Process pe = eager.Spawn("alice", alice);
  std::vector<Request> requests;
  for (const std::string& p : paths) {
    struct stat st {};
    const mode_t mode = lstat(p.c_str(), &st) == 0 ? st.st_mode : 0;
    for (Request& r : ReadOnlyRequests(p, mode)) requests.push_back(std::move(r));
  }
  std::vector<std::string> want;
  for (const Request& r : requests) want.push_back(eager.Evaluate(pe, r).ToText());
  constexpr int kReaders = 3;
  std::vector<Process> readers;
  for (int i = 0; i < kReaders; ++i) readers.push_back(lazy.Spawn("alice", alice));
  Process writer = lazy.Init();
  std::vector<int> wrong(kReaders, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      // Each reader its own order, so they miss on different names.
      for (size_t n = 0; n < requests.size(); ++n) {
        const size_t k = (n * (2 * i + 1) + static_cast<size_t>(i) * 7) % requests.size();
        if (lazy.Evaluate(readers[i], requests[k]).ToText() != want[k]) ++wrong[i];
      }
    });
  }
  auto tmp = lazy.Lookup(root_ + "/tmp");
  ASSERT_TRUE(tmp);
  for (int round = 0; round < 50; ++round) {
    const std::string d = fmt::format("{}/tmp/w{}", root_, round);
    EXPECT_TRUE(lazy.Apply(writer, Mkdir{.path = d}).allowed());
    EXPECT_TRUE(lazy.Apply(writer, Rmdir{.path = d}).allowed());
    // The builder writes too, while readers fill.
    ASSERT_TRUE(lazy.Mkdir(*tmp, fmt::format("b{}", round)));
    EXPECT_TRUE(lazy.Apply(writer, Rmdir{.path = fmt::format("{}/tmp/b{}", root_, round)}).allowed());
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kReaders; ++i) EXPECT_EQ(wrong[i], 0) << "reader " << i;
  // Asked again, single-threaded, to the same answers.
  for (size_t k = 0; k < requests.size(); ++k)
    EXPECT_EQ(lazy.Evaluate(readers[0], requests[k]).ToText(), want[k]) << Describe(requests[k]);
}

TEST_F(HostBackendTest, TheModelChangesOnlyItself) {
  Model m = Host();
  Process root = m.Init();
  const std::string dir = root_ + "/data";
  // Applied changes stay in the model: the host listing (TearDown)
  // proves the host saw none, and the model keeps them against the host.
  EXPECT_TRUE(m.Apply(root, Mkdir{.path = dir + "/made"}).allowed());
  EXPECT_TRUE(m.Apply(root, Unlink{.path = dir + "/file"}).allowed());
  EXPECT_TRUE(m.Apply(root, Rename{.oldpath = dir + "/sub", .newpath = dir + "/moved"}).allowed());
  EXPECT_TRUE(m.Evaluate(root, Stat{.path = dir + "/made"}).allowed());
  EXPECT_EQ(m.Evaluate(root, Stat{.path = dir + "/file"}).err(), ENOENT);
  EXPECT_EQ(m.Evaluate(root, Stat{.path = dir + "/sub"}).err(), ENOENT);
  // The moved directory is still read from where it is on the host.
  EXPECT_TRUE(m.Evaluate(root, Stat{.path = dir + "/moved/deep"}).allowed());
  // rmdir of a directory none of whose names was read lists it first.
  const uint64_t listings = m.host_counts().listings;
  EXPECT_EQ(m.Evaluate(root, Rmdir{.path = root_ + "/hard/a"}).err(), ENOTEMPTY);
  EXPECT_EQ(m.host_counts().listings, listings + 1);
  EXPECT_TRUE(m.Apply(root, Rmdir{.path = dir + "/made"}).allowed());
  struct stat st {};
  EXPECT_EQ(stat((dir + "/made").c_str(), &st), -1);
  EXPECT_EQ(stat((dir + "/file").c_str(), &st), 0);
}


// Linearizability with the host backend's own writes: the writer changes
// the host (create, remove, mkdir, rmdir, chmod, chown, setfacl, rename
// below the scratch tree's tmp/) and revalidates what it changed, and
// changes the model alone (Apply()), while readers ask every kind of
// question and fill what they miss from the host. Each reader's answer
// must be one a single-threaded replay gives at a state of its call's
// interval: the same operations on a second scratch tree built alike,
// read by a second model. ./test's tsan phase runs this too.
TEST_F(HostBackendTest, ReadersLinearizableUnderHostWrites) {
  constexpr size_t kOps = linearizability::kUnderTsan ? 300 : 3000;
  constexpr size_t kMaxAsked = 60000;  // per reader
  changes_host_ = true;
  auto second = ScratchHost::Build();
  ASSERT_TRUE(second) << second.error();
  std::unique_ptr<ScratchHost> replay_scratch = std::move(*second);
  ASSERT_EQ(replay_scratch->root().size(), root_.size());  // same name lengths

  struct Op {
    enum Kind { kCreate, kUnlink, kMkdir, kRmdir, kChmod, kChown, kSetfacl, kRename,
                kModelCreate, kModelMkdir, kModelUnlink, kModelChmod, kKinds };
    Kind kind;
    std::string path, path2;  // below the root
    uint32_t mode = 0, uid = 0, gid = 0;
  };
  std::mt19937 rng(20261201);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Op> ops;
  for (size_t i = 0; i < kOps; ++i) {
    Op op{static_cast<Op::Kind>(pick(Op::kKinds)), {}, {}};
    const bool model = op.kind >= Op::kModelCreate;
    op.path = fmt::format("/tmp/{}{}", model ? 'm' : 'h', pick(4));
    op.path2 = fmt::format("/tmp/h{}", pick(4));
    op.mode = std::array<uint32_t, 5>{0600, 0644, 0755, 0700, 04711}[pick(5)];
    op.uid = std::array<uint32_t, 3>{0, 1000, 1001}[pick(3)];
    op.gid = std::array<uint32_t, 2>{0, 1000}[pick(2)];
    ops.push_back(op);
  }
  // One operation: on the host below `root` and revalidated, or on the model.
  auto apply = [](Model& m, Process writer, const std::string& root, const Op& op) -> int {
    const std::string p = root + op.path, p2 = root + op.path2;
    int r = 0;
    auto sys = [&r](int rc) { r = rc == 0 ? 0 : errno; };
    switch (op.kind) {
      case Op::kCreate: {
        const int fd = open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, op.mode);
        r = fd >= 0 ? 0 : errno;
        if (fd >= 0) close(fd);
        break;
      }
      case Op::kUnlink: sys(unlink(p.c_str())); break;
      case Op::kMkdir: sys(mkdir(p.c_str(), op.mode)); break;
      case Op::kRmdir: sys(rmdir(p.c_str())); break;
      case Op::kChmod: sys(chmod(p.c_str(), op.mode)); break;
      case Op::kChown: sys(chown(p.c_str(), op.uid, op.gid)); break;
      case Op::kSetfacl: {
        acl_t a = acl_from_text(fmt::format("u::rwx,u:{}:rwx,g::r-x,m::rwx,o::---",
                                            op.uid == 0 ? 1001 : op.uid).c_str());
        sys(a ? acl_set_file(p.c_str(), ACL_TYPE_ACCESS, a) : -1);
        if (a) acl_free(a);
        break;
      }
      case Op::kRename: sys(rename(p.c_str(), p2.c_str())); break;
      case Op::kModelCreate:
        return m.Apply(writer, Open{.path = p, .flags = O_CREAT | O_EXCL | O_WRONLY, .mode = op.mode},
                       Model::Detail::kVerdictOnly).err();
      case Op::kModelMkdir:
        return m.Apply(writer, Mkdir{.path = p, .mode = op.mode}, Model::Detail::kVerdictOnly).err();
      case Op::kModelUnlink:
        return m.Apply(writer, Unlink{.path = p}, Model::Detail::kVerdictOnly).err();
      case Op::kModelChmod:
        return m.Apply(writer, Chmod{.path = p, .mode = op.mode}, Model::Detail::kVerdictOnly).err();
      case Op::kKinds: break;
    }
    // What changed on the host is revalidated, as a tracer does before
    // each call (the entries walked to it, the sysctls).
    for (const std::string& q : op.kind == Op::kRename ? std::vector{p, p2} : std::vector{p}) {
      auto n = m.Revalidate(writer, q);
      if (!n) ADD_FAILURE() << "Revalidate(" << q << "): " << n.error();
    }
    return r;
  };
  // The questions: every kind, on the names the writer changes and on
  // the scratch tree's other objects, as four identities and a confined one.
  std::vector<std::string> rel = {"/tmp", "/tmp/alice_file", "/home", "/bin", "/data"};
  for (int i = 0; i < 4; ++i) {
    rel.push_back(fmt::format("/tmp/h{}", i));
    rel.push_back(fmt::format("/tmp/m{}", i));
    rel.push_back(fmt::format("/tmp/h{}/x", i));
  }
  auto questions = [&rel](const std::string& root) {
    std::vector<Request> q;
    for (const std::string& r : rel) {
      const std::string p = root + r;
      for (Request& x : ReadOnlyRequests(p, S_IFREG)) q.push_back(std::move(x));
      for (Request& x : ChangingRequests(p)) q.push_back(std::move(x));
    }
    return q;
  };
  struct World {
    Model m;
    Process writer;
    std::vector<Process> procs;
    std::vector<Request> questions;
  };
  auto make = [&](const std::string& root) {
    World w{Host(), {}, {}, questions(root)};
    w.writer = w.m.Init();
    for (const Who& who : Identities()) w.procs.push_back(w.m.Spawn(who.name, who.cred));
    Process confined = w.m.Spawn("confined", Cred::ForUser(1000, 1000));
    EXPECT_EQ(w.m.Apply(confined, Restrict{.ruleset = Layer(root)}).err(), 0);
    w.procs.push_back(confined);
    return w;
  };

  World live = make(root_);
  using linearizability::Asked;

  std::vector<int> live_results(ops.size());
  const std::vector<std::vector<Asked>> asked = linearizability::LiveRun(
      7, kMaxAsked, 40, static_cast<uint32_t>(live.procs.size()),
      static_cast<uint32_t>(live.questions.size()), ops.size(),
      [&](uint32_t pi, uint32_t qi) {
        return live.m.Evaluate(live.procs[pi], live.questions[qi], Model::Detail::kVerdictOnly);
      },
      [&](size_t i) { live_results[i] = apply(live.m, live.writer, root_, ops[i]); });
  ASSERT_EQ(EngineOf(live.m).world().Verify(), "") << "after the live run";

  // The replay, one thread, on the second tree.
  World replay = make(replay_scratch->root());
  const linearizability::Outcome o = linearizability::Replay(
      asked, static_cast<uint32_t>(ops.size()),
      [&](uint32_t state) {
        const int got = apply(replay.m, replay.writer, replay_scratch->root(), ops[state - 1]);
        EXPECT_EQ(got, live_results[state - 1]) << "operation " << state << " answered otherwise";
        return got == live_results[state - 1];
      },
      [&](const Asked& a) {
        return replay.m.Evaluate(replay.procs[a.proc], replay.questions[a.question],
                                 Model::Detail::kVerdictOnly);
      },
      // Between a host change and its revalidation the model's entries
      // and the host disagree: a listing or a fill may find the host
      // otherwise than the model, and the engine says it cannot tell
      // (unknown, never allowed). Only then: an unknown while no host
      // change was in flight has no excuse.
      [&](const Asked& a) {
        if (a.verdict != Verdict::kUnknown) return false;
        for (uint32_t k = a.from + 1; k <= a.to && k <= ops.size(); ++k)
          if (ops[k - 1].kind < Op::kModelCreate) return true;
        return false;
      },
      [&](const Asked& a) {
        return fmt::format("{} as process {} during states {}..{}: got {} ({})",
                           Describe(live.questions[a.question]), a.proc, a.from, a.to,
                           ErrnoName(a.err), VerdictName(a.verdict));
      });
  EXPECT_EQ(o.unmatched, 0u);
  EXPECT_EQ(o.mismatches, 0u) << fmt::format("{}", fmt::join(o.failures, "\n"));
  EXPECT_EQ(o.checked, o.asked);
  EXPECT_GT(o.during, 100u) << "the readers hardly overlapped the writer";
  EXPECT_GT(live.m.host_counts().revalidated, 0u);
  EXPECT_EQ(replay_scratch->Cleanup(), "");
  RecordProperty("asked", static_cast<int>(o.asked));
  RecordProperty("unknown_in_flight", static_cast<int>(o.excused));
}

}  // namespace
}  // namespace pathwarden
