// Scenarios run on the real kernel: every expectation is what Linux 6.18
// answers (root and Landlock needed; skipped with the reason otherwise).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/kernel/sysctl_guard.h"

namespace pathwarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class KernelExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = KernelUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }

  static RunResult Run(std::string_view toml, bool capture_tree = false) {
    auto s = ParseScenario(toml, "t.toml", false);
    EXPECT_TRUE(s.has_value()) << s.error();
    if (!s) return RunResult{RunResult::Status::kError, s.error(), {}, {}};
    KernelOptions o;
    o.capture_tree = capture_tree;
    return RunInKernel(*s, o);
  }

  // The errno of every step, after checking that the scenario ran.
  static std::vector<int> Errs(std::string_view toml) {
    RunResult r = Run(toml);
    EXPECT_EQ(r.status, RunResult::Status::kRan) << r.message;
    std::vector<int> errs;
    for (const StepResult& s : r.steps) errs.push_back(s.err);
    return errs;
  }
};

TEST_F(KernelExecutor, DacDeniesOtherUserWithoutReadBit) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/secret"
mode = 0o600
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
as = "u"
op = "open"
path = "/secret"
expect = "EACCES"
[[step]]
op = "open"
path = "/secret"
expect = "ok"
)"),
              ElementsAre(EACCES, 0));
}

TEST_F(KernelExecutor, TrailingSlashOnRegularFileIsEnotdir) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/f"
[[step]]
op = "stat"
path = "/f/"
expect = "ENOTDIR"
[[step]]
op = "open"
path = "/f/"
expect = "ENOTDIR"
[[step]]
op = "stat"
path = "/f"
expect = "ok"
)"),
              ElementsAre(ENOTDIR, ENOTDIR, 0));
}

// The layer handles read_file and grants it beneath /allowed only; stat is
// no file access Landlock controls.
constexpr std::string_view kSandbox = R"(format = 1
[[node]]
path = "/allowed/a"
mode = 0o666
[[node]]
path = "/other/b"
mode = 0o666
[[process]]
name = "p"
uid = 1000
gid = 1000
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/allowed", access = ["read_file"] }]
)";

TEST_F(KernelExecutor, LandlockDeniesReadOutsideTheRule) {
  std::string toml = std::string(kSandbox) + R"(
[[step]]
as = "p"
op = "open"
path = "/allowed/a"
expect = "ok"
[[step]]
as = "p"
op = "open"
path = "/other/b"
expect = "EACCES"
[[step]]
as = "p"
op = "stat"
path = "/other/b"
expect = "ok"
[[step]]
as = "p"
op = "open"
path = "/other/b"
flags = "O_WRONLY"
expect = "ok"
)";
  EXPECT_THAT(Errs(toml), ElementsAre(0, EACCES, 0, 0));
}

TEST_F(KernelExecutor, ParentProcessPassesItsDomainAndLayersNest) {
  std::string toml = std::string(kSandbox) + R"(
[[node]]
path = "/allowed/sub/c"
mode = 0o666
[[process]]
name = "child"
parent = "p"
[[process]]
name = "grandchild"
parent = "child"
cwd = "/allowed"
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "sub", access = ["read_file"] }]
[[step]]
as = "child"
op = "open"
path = "/other/b"
expect = "EACCES"
[[step]]
as = "child"
op = "open"
path = "/allowed/a"
expect = "ok"
[[step]]
as = "grandchild"
op = "open"
path = "a"
expect = "EACCES"
[[step]]
as = "grandchild"
op = "open"
path = "sub/c"
expect = "ok"
[[step]]
as = "child"
op = "access"
path = "/other/b"
flags = "W_OK"
expect = "ok"
)";
  EXPECT_THAT(Errs(toml), ElementsAre(EACCES, 0, EACCES, 0, 0));
}

TEST_F(KernelExecutor, SignalAndAbstractSocketScopes) {
  EXPECT_THAT(Errs(R"(format = 1
[[process]]
name = "s"
uid = 1000
gid = 1000
[[process.layer]]
scoped = ["signal", "abstract_unix_socket"]
[[process]]
name = "t"
parent = "s"
[[process]]
name = "other"
uid = 1000
gid = 1000
[[step]]
as = "s"
op = "signal"
target = "other"
expect = "EPERM"
[[step]]
as = "other"
op = "signal"
target = "s"
expect = "ok"
[[step]]
as = "s"
op = "signal"
target = "t"
expect = "ok"
[[step]]
as = "s"
op = "connect_abstract"
target = "root"
expect = "EPERM"
[[step]]
as = "t"
op = "connect_abstract"
target = "s"
expect = "ok"
[[step]]
as = "other"
op = "signal"
target = "root"
expect = "EPERM"
)"),
              ElementsAre(EPERM, 0, 0, EPERM, 0, EPERM));
}

TEST_F(KernelExecutor, SendFdGivesTheTargetTheOpenFile) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/secret"
mode = 0o600
content = "data"
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
op = "open"
path = "/secret"
flags = "O_RDWR"
fd = "h"
expect = "ok"
[[step]]
as = "u"
op = "ftruncate"
fd = "h"
expect = "EBADF"
[[step]]
op = "send_fd"
fd = "h"
target = "u"
expect = "ok"
[[step]]
as = "u"
op = "ftruncate"
fd = "h"
expect = "ok"
[[step]]
as = "u"
op = "open"
path = "/secret"
flags = "O_RDWR"
expect = "EACCES"
[[step]]
as = "u"
op = "send_fd"
fd = "nothing"
target = "root"
expect = "EBADF"
)"),
              ElementsAre(0, EBADF, 0, 0, EACCES, EBADF));
}

TEST_F(KernelExecutor, ClosedOrFailedNamedFdIsEbadf) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/f"
[[node]]
path = "/d"
type = "dir"
[[step]]
op = "open"
path = "/f"
fd = "a"
expect = "ok"
[[step]]
op = "close"
fd = "a"
expect = "ok"
[[step]]
op = "close"
fd = "a"
expect = "EBADF"
[[step]]
op = "ftruncate"
fd = "a"
expect = "EBADF"
[[step]]
op = "open"
path = "/d"
flags = "O_DIRECTORY"
fd = "a"
expect = "ok"
[[step]]
op = "open"
path = "/missing"
fd = "a"
expect = "ENOENT"
[[step]]
op = "stat"
dirfd = "a"
path = "x"
expect = "EBADF"
[[step]]
op = "stat"
dirfd = "a"
path = "/f"
expect = "ok"
)"),
              ElementsAre(0, 0, EBADF, EBADF, 0, ENOENT, EBADF, 0));
}

TEST_F(KernelExecutor, DirfdResolvesRelativePaths) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/d/f"
[[step]]
op = "open"
path = "/d"
flags = "O_RDONLY|O_DIRECTORY"
fd = "d"
expect = "ok"
[[step]]
op = "stat"
dirfd = "d"
path = "f"
expect = "ok"
[[step]]
op = "stat"
path = "f"
expect = "ENOENT"
[[step]]
op = "mkdir"
dirfd = "d"
path = "new"
expect = "ok"
[[step]]
op = "stat"
path = "/d/new"
expect = "ok"
)"),
              ElementsAre(0, 0, ENOENT, 0, 0));
}

TEST_F(KernelExecutor, UmountOfABusyMountIsEbusy) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/mnt"
type = "tmpfs"
[[node]]
path = "/mnt/f"
[[process]]
name = "w"
cwd = "/mnt"
[[step]]
op = "umount"
path = "/mnt"
expect = "EBUSY"
[[step]]
as = "w"
op = "stat"
path = "f"
expect = "ok"
[[step]]
op = "umount"
path = "/mnt"
flags = "MNT_DETACH"
expect = "ok"
[[step]]
op = "stat"
path = "/mnt/f"
expect = "ENOENT"
[[step]]
as = "w"
op = "stat"
path = "f"
expect = "ok"
)"),
              ElementsAre(EBUSY, 0, 0, ENOENT, 0));
}

TEST_F(KernelExecutor, SeventeenthLayerIsE2big) {
  std::string toml = R"(format = 1
[[process]]
name = "r"
uid = 1000
gid = 1000
)";
  for (int i = 0; i < 17; ++i)
    toml += R"(
[[step]]
as = "r"
op = "restrict"
layer = { handled_fs = ["execute"] }
expect = "ok"
)";
  std::vector<int> want(16, 0);
  want.push_back(E2BIG);
  EXPECT_EQ(Errs(toml), want);
}

TEST_F(KernelExecutor, RestrictWithUnresolvedRuleEnforcesNothing) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/f"
mode = 0o666
[[process]]
name = "r"
uid = 1000
gid = 1000
[[step]]
as = "r"
op = "restrict"
layer = { handled_fs = ["read_file"], rule = [{ path = "/missing", access = ["read_file"] }] }
expect = "ENOENT"
[[step]]
as = "r"
op = "open"
path = "/f"
expect = "ok"
[[step]]
as = "r"
op = "restrict"
layer = { handled_fs = ["read_file"], rule = [{ path = "/", access = ["read_dir"] }] }
expect = "EINVAL"
[[step]]
as = "r"
op = "restrict"
layer = { handled_fs = ["read_file"] }
expect = "ok"
[[step]]
as = "r"
op = "open"
path = "/f"
expect = "EACCES"
)"),
              ElementsAre(ENOENT, 0, EINVAL, 0, EACCES));
}

TEST_F(KernelExecutor, NetworkRulesAndPrivilegedPorts) {
  EXPECT_THAT(Errs(R"(format = 1
[[process]]
name = "n"
uid = 1000
gid = 1000
[[process.layer]]
handled_net = ["bind_tcp", "connect_tcp"]
rule = [{ port = 8080, access = ["bind_tcp", "connect_tcp"] }]
[[process]]
name = "u"
uid = 1000
gid = 1000
[[step]]
as = "n"
op = "bind_tcp"
port = 8080
expect = "ok"
[[step]]
as = "n"
op = "bind_tcp"
port = 8081
expect = "EACCES"
[[step]]
as = "n"
op = "connect_tcp"
port = 8080
expect = "ok"
[[step]]
as = "n"
op = "connect_tcp"
port = 9000
expect = "EACCES"
[[step]]
as = "u"
op = "bind_tcp"
port = 80
expect = "EACCES"
[[step]]
op = "bind_tcp"
port = 80
expect = "ok"
)"),
              ElementsAre(0, EACCES, 0, EACCES, EACCES, 0));
}

TEST_F(KernelExecutor, IoctlReportsOnlyThePermissionVerdict) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/null"
type = "char"
rdev = "1:3"
mode = 0o666
[[process]]
name = "d"
uid = 1000
gid = 1000
[[process.layer]]
handled_fs = ["ioctl_dev"]
[[step]]
op = "open"
path = "/null"
fd = "n"
expect = "ok"
[[step]]
op = "ioctl"
fd = "n"
cmd = "TCGETS"
expect = "ok"
[[step]]
as = "d"
op = "open"
path = "/null"
fd = "n"
expect = "ok"
[[step]]
as = "d"
op = "ioctl"
fd = "n"
cmd = "FIONREAD"
expect = "EACCES"
[[step]]
as = "d"
op = "ioctl"
fd = "n"
cmd = "FIOCLEX"
expect = "ok"
[[step]]
as = "d"
op = "ioctl"
fd = "none"
cmd = "FIOCLEX"
expect = "EBADF"
)"),
              ElementsAre(0, 0, 0, EACCES, 0, EBADF));
}

TEST_F(KernelExecutor, MountFlagsAndKernelRefusals) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/ro"
type = "tmpfs"
mount_flags = ["ro"]
[[node]]
path = "/src/x"
mode = 0o755
[[node]]
path = "/nx"
type = "bind"
source = "/src"
mount_flags = ["noexec"]
[[step]]
op = "mkdir"
path = "/ro/d"
expect = "EROFS"
[[step]]
op = "exec_check"
path = "/src/x"
expect = "ok"
[[step]]
op = "exec_check"
path = "/nx/x"
expect = "EACCES"
[[step]]
op = "mknod"
path = "/d"
type = "dir"
expect = "EPERM"
[[step]]
op = "link"
path = "/src/x"
path2 = "/nx/y"
expect = "EXDEV"
[[step]]
op = "rename"
path = "/src/x"
path2 = "/ro/x"
expect = "EXDEV"
)"),
              ElementsAre(EROFS, 0, EACCES, EPERM, EXDEV, EXDEV));
}

// protected_symlinks=1 forbids following a link another user owns in a
// sticky world-writable directory, even to root.
std::string SymlinkScenario(int protected_symlinks) {
  return fmt::format(R"(format = 1
[sysctl]
protected_symlinks = {}
protected_hardlinks = 1
protected_regular = 2
protected_fifos = 1
[[node]]
path = "/tmp"
type = "dir"
mode = 0o1777
[[node]]
path = "/f"
[[node]]
path = "/tmp/l"
type = "symlink"
target = "/f"
uid = 1000
[[step]]
op = "stat"
path = "/tmp/l"
expect = "ok"
)",
                     protected_symlinks);
}

TEST_F(KernelExecutor, SysctlsApplyDuringTheRunAndAreRestoredAfter) {
  // Read under the lock: outside it another pathwarden process (ctest -j)
  // may be running a scenario with its own values.
  auto before = kernel_internal::ReadHostSysctls();
  ASSERT_TRUE(before.has_value()) << before.error();
  EXPECT_THAT(Errs(SymlinkScenario(1)), ElementsAre(EACCES));
  EXPECT_THAT(Errs(SymlinkScenario(0)), ElementsAre(0));
  auto after = kernel_internal::ReadHostSysctls();
  ASSERT_TRUE(after.has_value()) << after.error();
  EXPECT_EQ(*after, *before);
}

TEST_F(KernelExecutor, CapturesModesOwnersAclsAndSymlinks) {
  RunResult r = Run(R"(format = 1
[[node]]
path = "/d"
type = "dir"
mode = 0o750
uid = 1000
gid = 100
acl = "u:1001:r-x"
default_acl = "u:1002:rwx"
[[node]]
path = "/d/l"
type = "symlink"
target = "../f"
[[node]]
path = "/d/g"
mode = 0o640
[[node]]
path = "/f"
content = "hello"
mode = 0o4755
uid = 1000
[[node]]
path = "/null"
type = "char"
rdev = "1:3"
[[step]]
op = "link"
path = "/f"
path2 = "/f2"
expect = "ok"
)",
                    /*capture_tree=*/true);
  ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
  std::vector<std::string> got;
  for (const TreeEntry& e : r.tree)
    got.push_back(fmt::format("{} {} {:o} {}:{} n{} s{} t{} r{}:{} a[{}] d[{}]", e.path, e.type,
                              e.mode, e.uid, e.gid, e.nlink, e.size, e.target, e.rdev_major,
                              e.rdev_minor, e.acl, e.default_acl));
  EXPECT_THAT(got,
              ElementsAre("/ dir 755 0:0 n3 s0 t r0:0 a[] d[]",
                          "/d dir 750 1000:100 n2 s0 t r0:0 a[u::rwx,u:1001:r-x,g::r-x,m::r-x,o::---] "
                          "d[u::rwx,u:1002:rwx,g::r-x,m::rwx,o::---]",
                          // Inherited from /d's default ACL, masked by the mode.
                          "/d/g file 640 0:0 n1 s0 t r0:0 a[u::rw-,u:1002:rwx,g::r-x,m::r--,o::---] d[]",
                          "/d/l symlink 777 0:0 n1 s0 t../f r0:0 a[] d[]",
                          "/f file 4755 1000:0 n2 s5 t r0:0 a[] d[]",
                          "/f2 file 4755 1000:0 n2 s5 t r0:0 a[] d[]",
                          "/null char 644 0:0 n1 s0 t r1:3 a[] d[]"));
}

TEST_F(KernelExecutor, UnresolvedRulePathIsAFileError) {
  RunResult r = Run(R"(format = 1
[[process]]
name = "p"
uid = 1000
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/nope", access = ["read_file"] }]
[[step]]
as = "p"
op = "stat"
path = "/"
expect = "ok"
)");
  EXPECT_EQ(r.status, RunResult::Status::kError);
  EXPECT_EQ(r.message, "t.toml:7:9: rule path \"/nope\" does not resolve: ENOENT");
  EXPECT_TRUE(r.steps.empty());
}

TEST_F(KernelExecutor, BuildErrorsNameTheNode) {
  RunResult parent = Run(R"(format = 1
[[node]]
path = "/f"
[[node]]
path = "/f/g"
)");
  EXPECT_EQ(parent.status, RunResult::Status::kError);
  EXPECT_EQ(parent.message, "t.toml:4:1: parent \"/f\" is a regular file, not a directory");
  RunResult exists = Run(R"(format = 1
[[node]]
path = "/d"
type = "dir"
[[node]]
path = "/d"
type = "fifo"
)");
  EXPECT_EQ(exists.status, RunResult::Status::kError);
  EXPECT_EQ(exists.message, "t.toml:5:1: \"/d\" already exists (a directory)");
  RunResult cwd = Run(R"(format = 1
[[process]]
name = "p"
cwd = "/nowhere"
)");
  EXPECT_EQ(cwd.status, RunResult::Status::kError);
  EXPECT_EQ(cwd.message, "t.toml:2:1: cwd \"/nowhere\" does not resolve: ENOENT");
  RunResult layer = Run(R"(format = 1
[[process]]
name = "p"
[[process.layer]]
scoped = []
)");
  EXPECT_EQ(layer.status, RunResult::Status::kError);
  EXPECT_THAT(layer.message, HasSubstr("landlock_create_ruleset: ENOMSG"));
}

TEST_F(KernelExecutor, ExistingDirectoryTakesTheNodesAttributes) {
  RunResult r = Run(R"(format = 1
[[node]]
path = "/a/b"
type = "dir"
[[node]]
path = "/a"
type = "dir"
mode = 0o2700
uid = 5
[[node]]
path = "/"
type = "dir"
mode = 0o711
)",
                    /*capture_tree=*/true);
  ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
  ASSERT_EQ(r.tree.size(), 3u);
  EXPECT_EQ(r.tree[0].mode, 0711u);
  EXPECT_EQ(r.tree[1].mode, 02700u);
  EXPECT_EQ(r.tree[1].uid, 5u);
  EXPECT_EQ(r.tree[2].mode, 0755u);
}

TEST_F(KernelExecutor, OtherAbiIsSkipped) {
  RunResult r = Run("format = 1\nabi = 6\n");
  EXPECT_EQ(r.status, RunResult::Status::kSkipped);
  EXPECT_EQ(r.message, fmt::format("needs Landlock ABI 6, this kernel has {}", KernelAbi()));
}

TEST_F(KernelExecutor, DevicesWithRealDriversAreSkipped) {
  RunResult r = Run(R"(format = 1
[[step]]
op = "mknod"
path = "/wd"
type = "char"
rdev = "10:130"
expect = "ok"
)");
  EXPECT_EQ(r.status, RunResult::Status::kSkipped);
  EXPECT_THAT(r.message, HasSubstr("t.toml:2:1: device 10:130"));
}

TEST_F(KernelExecutor, InodeFlagsAndNosymfollowAfterTheBuild) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/i"
attrs = ["immutable"]
[[node]]
path = "/a"
attrs = ["append"]
[[node]]
path = "/f"
[[node]]
path = "/n"
type = "tmpfs"
mount_flags = ["nosymfollow"]
[[node]]
path = "/n/l"
type = "symlink"
target = "/f"
[[step]]
op = "open"
path = "/i"
flags = "O_WRONLY"
expect = "EPERM"
[[step]]
op = "unlink"
path = "/i"
expect = "EPERM"
[[step]]
op = "open"
path = "/a"
flags = "O_WRONLY"
expect = "EPERM"
[[step]]
op = "open"
path = "/a"
flags = "O_WRONLY|O_APPEND"
expect = "ok"
[[step]]
op = "stat"
path = "/n/l"
expect = "ELOOP"
[[step]]
op = "lstat"
path = "/n/l"
expect = "ok"
[[step]]
op = "readlink"
path = "/n/l"
expect = "ok"
)"),
              ElementsAre(EPERM, EPERM, EPERM, 0, ELOOP, 0, 0));
}

TEST_F(KernelExecutor, ChrootFchdirUtimensatAndExecCheck) {
  EXPECT_THAT(Errs(R"(format = 1
[[node]]
path = "/jail/inside"
[[node]]
path = "/w"
mode = 0o666
[[node]]
path = "/x"
mode = 0o755
[[node]]
path = "/nx"
[[process]]
name = "u"
uid = 1000
gid = 1000
[[process]]
name = "j"
[[step]]
as = "j"
op = "open"
path = "/jail"
flags = "O_DIRECTORY"
fd = "d"
expect = "ok"
[[step]]
as = "j"
op = "chroot"
path = "/jail"
expect = "ok"
[[step]]
as = "j"
op = "stat"
path = "/../inside"
expect = "ok"
[[step]]
as = "j"
op = "stat"
path = "/jail"
expect = "ENOENT"
[[step]]
as = "j"
op = "fchdir"
fd = "d"
expect = "ok"
[[step]]
as = "j"
op = "stat"
path = "inside"
expect = "ok"
[[step]]
as = "u"
op = "utimensat"
path = "/w"
expect = "ok"
[[step]]
as = "u"
op = "utimensat"
path = "/w"
times = ["set", "set"]
expect = "EPERM"
[[step]]
as = "u"
op = "utimensat"
path = "/w"
times = ["now", "now"]
expect = "ok"
[[step]]
as = "u"
op = "exec_check"
path = "/x"
expect = "ok"
[[step]]
as = "u"
op = "exec_check"
path = "/nx"
expect = "EACCES"
[[step]]
op = "open"
path = "/x"
flags = "O_WRONLY"
fd = "busy"
expect = "ok"
[[step]]
as = "u"
op = "exec_check"
path = "/x"
expect = "ETXTBSY"
)"),
              ElementsAre(0, 0, 0, ENOENT, 0, 0, 0, EPERM, 0, 0, EACCES, 0, ETXTBSY));
}

TEST_F(KernelExecutor, BindNodesOverFilesAndDirectories) {
  RunResult r = Run(R"(format = 1
[[node]]
path = "/src"
content = "abc"
[[node]]
path = "/dst"
type = "bind"
source = "/src"
[[node]]
path = "/dir/x"
[[node]]
path = "/view"
type = "bind"
source = "/dir"
mount_flags = ["ro"]
[[step]]
op = "open"
path = "/view/x"
flags = "O_WRONLY"
expect = "EROFS"
[[step]]
op = "open"
path = "/dir/x"
flags = "O_WRONLY"
expect = "ok"
[[step]]
op = "rename"
path = "/dir/x"
path2 = "/view/y"
expect = "EXDEV"
)",
                    /*capture_tree=*/true);
  ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
  std::vector<int> errs;
  for (const StepResult& st : r.steps) errs.push_back(st.err);
  EXPECT_THAT(errs, ElementsAre(EROFS, 0, EXDEV));
  std::vector<std::string> paths;
  for (const TreeEntry& e : r.tree) paths.push_back(fmt::format("{}:{}:{}", e.path, e.type, e.size));
  EXPECT_THAT(paths, ElementsAre("/:dir:0", "/dir:dir:0", "/dir/x:file:0", "/dst:file:3",
                                 "/src:file:3", "/view:dir:0", "/view/x:file:0"));
}

}  // namespace
}  // namespace pathwarden
