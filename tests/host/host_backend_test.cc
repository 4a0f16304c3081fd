// The live host backend against the machine: a scratch tree with every
// kind of object (src/kernel/scratch_host.h), built in a private mount
// namespace of this test process, read by Model::FromHost() lazily and
// eagerly; the model's attributes against lstat, the ACL xattrs, statx
// and mountinfo; its decisions against each other and against the real
// kernel (src/kernel/host_probe.h) for several identities, with and
// without Landlock; what it cannot see; and a listing of the host before
// and after, to show reading changed nothing (revalidation and readers:
// host_backend_changes_test.cc; the fixture: host_backend_fixture.h).
// Root only; skipped elsewhere.

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
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/uapi.h"
#include "src/api/model_impl.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/guardian.h"
#include "src/kernel/scratch_host.h"
#include "src/vfs/mountinfo.h"
#include "tests/host/host_backend_fixture.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden {
namespace {

using namespace host_backend_testing;  // the fixture and its helpers


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

}  // namespace
}  // namespace pathwarden
