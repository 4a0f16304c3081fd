// Landlock on the real kernel through scenarios: starting layers, nested
// domains, scopes, restrict steps, network rules and the ioctl verdict.

#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/kernel/kernel_test_util.h"

namespace pathwarden {
namespace {

using ::testing::ElementsAre;
using kernel_testing::KernelExecutor;

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

}  // namespace
}  // namespace pathwarden
