// Mounts, inode flags and root changes on the real kernel through
// scenarios: what the build sets up and what the steps then meet.

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/kernel/kernel_test_util.h"

namespace pathwarden {
namespace {

using ::testing::ElementsAre;
using kernel_testing::ErrsOf;
using kernel_testing::KernelExecutor;

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
  EXPECT_THAT(ErrsOf(r), ElementsAre(EROFS, 0, EXDEV));
  std::vector<std::string> paths;
  for (size_t i = 0; i < r.tree.size(); ++i)
    paths.push_back(fmt::format("{}:{}:{}", TreePath(r.tree, i), r.tree[i].type, r.tree[i].size));
  EXPECT_THAT(paths, ElementsAre("/:dir:0", "/dir:dir:0", "/dir/x:file:0", "/dst:file:3",
                                 "/src:file:3", "/view:dir:0", "/view/x:file:0"));
}

}  // namespace
}  // namespace pathwarden
