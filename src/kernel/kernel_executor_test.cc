// Scenarios run on the real kernel: DAC, paths, named fds, sysctls, the
// build's errors and the captured tree, with Linux 6.18's answers.

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/kernel/kernel_test_util.h"
#include "src/kernel/sysctl_guard.h"

namespace pathwarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using kernel_testing::KernelExecutor;

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
expect = "{}"
)",
                     protected_symlinks, protected_symlinks ? "EACCES" : "ok");
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
  for (size_t i = 0; i < r.tree.size(); ++i) {
    const TreeEntry& e = r.tree[i];
    got.push_back(fmt::format("{} {} {:o} {}:{} n{} s{} t{} r{}:{} a[{}] d[{}]", TreePath(r.tree, i), e.type,
                              e.mode, e.uid, e.gid, e.nlink, e.size, e.target, e.rdev_major,
                              e.rdev_minor, e.acl, e.default_acl));
  }
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

TEST_F(KernelExecutor, CapturesATreeDeeperThanAPathCanName) {
  // 2,100 levels: "/d" 2,100 times is past PATH_MAX (4,096), so a capture
  // by whole paths gets ENAMETOOLONG; it used to stop at 256 levels. The
  // capture reads each directory by name, relative to it.
  constexpr int kDepth = 2100;
  std::string toml = "format = 1\n";
  for (int i = 0; i < kDepth; ++i)
    toml += "[[step]]\nop = \"mkdir\"\npath = \"d\"\nexpect = \"ok\"\n"
            "[[step]]\nop = \"chdir\"\npath = \"d\"\nexpect = \"ok\"\n";
  toml += "[[step]]\nop = \"open\"\npath = \"f\"\nflags = \"O_WRONLY|O_CREAT\"\nmode = 0o600\n"
          "expect = \"ok\"\n";
  RunResult r = Run(toml, /*capture_tree=*/true);
  ASSERT_EQ(r.status, RunResult::Status::kRan) << r.message;
  ASSERT_EQ(r.tree.size(), static_cast<size_t>(kDepth) + 2);
  ASSERT_TRUE(TreeIsWellFormed(r.tree));
  std::string bottom;
  for (int i = 0; i < kDepth; ++i) bottom += "/d";
  EXPECT_EQ(TreePath(r.tree, r.tree.size() - 1), bottom + "/f");
  EXPECT_EQ(r.tree.back().type, "file");
  EXPECT_EQ(r.tree.back().mode, 0600u);
  EXPECT_EQ(r.tree[r.tree.size() - 2].type, "dir");
  EXPECT_EQ(TreeIndex(r.tree, bottom), static_cast<long>(kDepth));
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

}  // namespace
}  // namespace pathwarden
