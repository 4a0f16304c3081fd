// BuildHostLayer() on a temp tree (no privilege needed), then layers
// really enforced on forked children: what they can and cannot do, at the
// kernel's ABI and at pretended older ones.
//
//   tmp/
//     ro/        LL_FS_RO-like: execute, read_file, read_dir
//       f
//     rw1/ rw2/  every right (refer included)
//       x
//     out/       no rule
//       g
//     file       a regular file with a directory rule's rights

#include "src/sandbox/run.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"
#include "src/kernel/child_test_util.h"

namespace pathwarden::sandbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr landlock::AccessMask kRead =
    landlock::kFsExecute | landlock::kFsReadFile | landlock::kFsReadDir;

// A scratch tree: ro/f, rw1/x, rw2, out/g and file.
class TempTree : public base_testing::ScratchDir {
 public:
  TempTree() : ScratchDir("pathwarden-sandbox") {
    for (const char* d : {"ro", "rw1", "rw2", "out"}) mkdir(Path(d).c_str(), 0755);
    for (const char* f : {"ro/f", "rw1/x", "out/g", "file"}) Write(f, "data\n");
  }
};

policy::Policy FsPolicy(const TempTree& t) {
  policy::Policy p;
  p.abi = landlock::kAbiLatest;
  p.source = "test";
  p.handled_fs = landlock::kFsAll;
  p.paths.push_back({t.Path("ro"), kRead, {{"ro-rule", 1, 1}}});
  p.paths.push_back({t.Path("rw1"), landlock::kFsAll, {{"rw-rule", 2, 1}}});
  p.paths.push_back({t.Path("rw2"), landlock::kFsAll, {{"rw-rule", 3, 1}}});
  return p;
}

TEST(BuildHostLayer, MissingPathIsSkippedWithAWarning) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  p.paths.push_back({t.Path("nope"), kRead, {{"p.toml", 4, 3}}});
  HostLayer l = BuildHostLayer(p, 7);
  EXPECT_EQ(l.rules.size(), 3u);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_THAT(l.warnings[0], HasSubstr("p.toml:4:3: cannot open \"" + t.Path("nope") +
                                       "\": No such file or directory: rule skipped"));
  EXPECT_FALSE(l.Dropped());
}

TEST(BuildHostLayer, NonDirectoryKeepsOnlyFileRights) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  p.paths = {{t.Path("file"), landlock::kFsAll, {{"LL_FS_RW", 0, 0}}}};
  HostLayer l = BuildHostLayer(p, 7);
  ASSERT_EQ(l.rules.size(), 1u);
  EXPECT_FALSE(l.rules[0].directory);
  EXPECT_GE(l.rules[0].fd.get(), 0);
  EXPECT_EQ(l.rules[0].access, landlock::kFsFileRights);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_THAT(l.warnings[0], HasSubstr("LL_FS_RW: \"" + t.Path("file") +
                                       "\" is not a directory: fs.read_dir,fs.remove_dir"));
}

TEST(BuildHostLayer, NonDirectoryWithNoFileRightIsSkipped) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  p.paths = {{t.Path("file"), landlock::kFsReadDir, {{"p.json", 1, 1}}}};
  HostLayer l = BuildHostLayer(p, 7);
  EXPECT_TRUE(l.rules.empty());
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_THAT(l.warnings[0], HasSubstr("nothing left: rule skipped"));
}

// What each older ABI lacks of a policy handling everything.
TEST(BuildHostLayer, OlderAbisDropWhatTheyLack) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  p.handled_net = landlock::kNetAll;
  p.scoped = landlock::kScopeAll;
  p.ports.push_back({80, landlock::kNetBindTcp, {{"LL_TCP_BIND", 0, 0}}});
  struct Case {
    int abi;
    const char* dropped;
    size_t rules;
  } cases[] = {
      {7, "", 4},
      {6, "", 4},
      {5, "scope.abstract_unix_socket,scope.signal", 4},
      {3, "fs.ioctl_dev,net.bind_tcp,net.connect_tcp,scope.abstract_unix_socket,scope.signal", 3},
      {1,
       "fs.refer,fs.truncate,fs.ioctl_dev,net.bind_tcp,net.connect_tcp,"
       "scope.abstract_unix_socket,scope.signal",
       3},
  };
  for (const Case& c : cases) {
    HostLayer l = BuildHostLayer(p, c.abi);
    EXPECT_EQ(DroppedRights(l), c.dropped) << "abi " << c.abi;
    EXPECT_EQ(l.rules.size(), c.rules) << "abi " << c.abi;
    EXPECT_EQ(l.handled_fs, landlock::RightsForAbi(c.abi).fs) << "abi " << c.abi;
    for (const HostRule& r : l.rules) {
      EXPECT_EQ(r.access & ~(r.is_port ? l.handled_net : l.handled_fs), 0u) << "abi " << c.abi;
    }
  }
}

// A policy's abi above the kernel's is clamped to it, with a warning (as
// explain gives it); at the kernel's own ABI, or below, nothing is said.
TEST(BuildHostLayer, AbiAboveTheKernelsIsClampedWithAWarning) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  HostLayer old = BuildHostLayer(p, 3);
  ASSERT_FALSE(old.warnings.empty());
  EXPECT_EQ(old.warnings[0], "policy ABI 7 is above the kernel's (3): clamped to 3");
  EXPECT_THAT(BuildHostLayer(p, 7).warnings, ::testing::IsEmpty());
  p.abi = 2;
  EXPECT_THAT(BuildHostLayer(p, 3).warnings, ::testing::IsEmpty());
  p.abi.reset();
  EXPECT_THAT(BuildHostLayer(p, 3).warnings, ::testing::IsEmpty());
}

TEST(BuildHostLayer, NoLandlockDropsEverything) {
  TempTree t;
  HostLayer l = BuildHostLayer(FsPolicy(t), 0);
  EXPECT_FALSE(l.Enforceable());
  EXPECT_TRUE(l.rules.empty());
  EXPECT_EQ(l.dropped_fs, landlock::kFsAll);
}

TEST(DescribeLayers, ShowsHandledRightsAndRules) {
  TempTree t;
  policy::Policy p = FsPolicy(t);
  p.handled_net = landlock::kNetConnectTcp;
  p.ports.push_back({443, landlock::kNetConnectTcp, {{"LL_TCP_CONNECT", 0, 0}}});
  std::vector<HostLayer> layers;
  layers.push_back(BuildHostLayer(p, 4));
  std::string s = DescribeLayers(layers, 4);
  EXPECT_THAT(s, HasSubstr("Landlock ABI 4: 1 layer\nlayer 1 (test)\n"));
  EXPECT_THAT(s, HasSubstr("  handled_access_net: net.connect_tcp\n  scoped: (none)\n"));
  EXPECT_THAT(s, HasSubstr("  path_beneath \"" + t.Path("ro") +
                           "\" (directory): fs.execute,fs.read_file,fs.read_dir  [ro-rule:1:1]\n"));
  EXPECT_THAT(s, HasSubstr("  net_port 443: net.connect_tcp  [LL_TCP_CONNECT]\n"));
}

// --- Enforced on the kernel -------------------------------------------

// Why the kernel cases cannot run here, or "".
std::string KernelSkipReason() {
  if (geteuid() != 0) return "needs root";
  std::string why;
  if (ProbeAbi(&why) < 6) return why.empty() ? "needs Landlock ABI 6 (scopes)" : why;
  return "";
}

#define SKIP_UNLESS_KERNEL()                                \
  do {                                                      \
    std::string skip_reason = KernelSkipReason();           \
    if (!skip_reason.empty()) GTEST_SKIP() << skip_reason;  \
  } while (0)

// Each operation's errno (0: success), in a child confined by `layers`
// built at `abi`.
std::vector<int> Confined(const std::vector<policy::Policy>& layers, int abi,
                          const std::vector<std::function<int()>>& ops) {
  std::string out = kernel_testing::InForkedChild([&]() -> std::string {
    std::vector<HostLayer> built;
    for (const policy::Policy& p : layers) built.push_back(BuildHostLayer(p, abi));
    auto r = EnforceLayers(built);
    if (!r) return "enforce: " + r.error();
    built.clear();
    std::string s;
    for (const auto& op : ops) s += std::to_string(op()) + " ";
    return s;
  });
  std::vector<int> errs;
  size_t at = 0;
  while (at < out.size()) {
    size_t space = out.find(' ', at);
    if (space == std::string::npos) break;
    errs.push_back(std::stoi(out.substr(at, space - at)));
    at = space + 1;
  }
  if (at != out.size()) ADD_FAILURE() << out;
  return errs;
}

int Errno(int r) { return r < 0 ? errno : 0; }
int OpenErrno(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

TEST(EnforceLayers, FilesystemRightsHold) {
  SKIP_UNLESS_KERNEL();
  TempTree t;
  auto errs = Confined({FsPolicy(t)}, 7,
                       {
                           [&] { return OpenErrno(t.Path("ro/f"), O_RDONLY); },
                           [&] { return OpenErrno(t.Path("ro/f"), O_WRONLY); },
                           [&] { return OpenErrno(t.Path("out/g"), O_RDONLY); },
                           [&] { return OpenErrno(t.Path("ro/new"), O_CREAT | O_WRONLY); },
                           [&] { return OpenErrno(t.Path("rw1/new"), O_CREAT | O_WRONLY); },
                           [&] { return Errno(unlink(t.Path("ro/f").c_str())); },
                           [&] { return Errno(unlink(t.Path("rw1/new").c_str())); },
                           [&] { return Errno(mkdir(t.Path("rw1/d").c_str(), 0755)); },
                           [&] { return Errno(truncate(t.Path("ro/f").c_str(), 0)); },
                       });
  EXPECT_THAT(errs, ElementsAre(0, EACCES, EACCES, EACCES, 0, EACCES, 0, 0, EACCES));
}

// Renaming across directories needs refer on both sides: granted (ABI 2+)
// within the rw directories, never across at ABI 1 (refer not handled is
// refer denied: EXDEV).
TEST(EnforceLayers, RenameAcrossDirectoriesFollowsRefer) {
  SKIP_UNLESS_KERNEL();
  TempTree t;
  auto mv = [&] { return Errno(rename(t.Path("rw1/x").c_str(), t.Path("rw2/x").c_str())); };
  auto back = [&] { return Errno(rename(t.Path("rw2/x").c_str(), t.Path("rw1/x").c_str())); };
  EXPECT_THAT(Confined({FsPolicy(t)}, 7, {mv, back}), ElementsAre(0, 0));
  EXPECT_THAT(Confined({FsPolicy(t)}, 1, {mv}), ElementsAre(EXDEV));
  // ABI 2 has refer but not truncate: truncating a read-only file passes.
  EXPECT_THAT(Confined({FsPolicy(t)}, 2,
                       {mv, [&] { return Errno(truncate(t.Path("ro/f").c_str(), 0)); }}),
              ElementsAre(0, 0));
}

// The execute right, seen by execve() in a grandchild.
TEST(EnforceLayers, ExecuteRightHolds) {
  SKIP_UNLESS_KERNEL();
  TempTree t;
  std::filesystem::copy_file("/bin/true", t.Path("ro/true"));
  std::filesystem::copy_file("/bin/true", t.Path("rw1/true"));
  policy::Policy p = FsPolicy(t);
  // /bin/true's loader and libraries.
  for (const char* dir : {"/usr", "/lib", "/lib64", "/etc"}) {
    if (access(dir, F_OK) == 0) p.paths.push_back({dir, kRead, {}});
  }
  p.paths[1].access &= ~landlock::kFsExecute;  // rw1: everything but execute
  auto exec = [](std::string path) {
    return [path] {
      pid_t pid = fork();
      if (pid == 0) {
        char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
        execv(path.c_str(), argv);
        _exit(errno == EACCES ? 13 : 99);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
  };
  EXPECT_THAT(Confined({p}, 7, {exec(t.Path("ro/true")), exec(t.Path("rw1/true"))}),
              ElementsAre(0, EACCES));
}

int BoundTcpSocket(uint16_t port, bool listening) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(s);
    return -1;
  }
  if (listening) listen(s, 4);
  return s;
}

uint16_t PortOf(int s) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

int TcpErrno(uint16_t port, bool do_bind) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  int r = do_bind ? bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a))
                  : connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  int e = r == 0 ? 0 : errno;
  close(s);
  return e;
}

// Bind and connect: only the listed ports; at ABI 3 the kernel has no
// network rights, so both are dropped and everything passes.
TEST(EnforceLayers, TcpPortsHold) {
  SKIP_UNLESS_KERNEL();
  // Two listeners the child may or may not reach, and two free ports
  // (taken from the kernel and released) to bind.
  int allowed = BoundTcpSocket(0, true), denied = BoundTcpSocket(0, true);
  int b1 = BoundTcpSocket(0, false), b2 = BoundTcpSocket(0, false);
  ASSERT_GE(allowed, 0);
  ASSERT_GE(denied, 0);
  uint16_t bind_ok = PortOf(b1), bind_no = PortOf(b2);
  close(b1);
  close(b2);
  policy::Policy p;
  p.source = "net";
  p.handled_net = landlock::kNetAll;
  p.ports.push_back({bind_ok, landlock::kNetBindTcp, {}});
  p.ports.push_back({PortOf(allowed), landlock::kNetConnectTcp, {}});
  std::vector<std::function<int()>> ops = {
      [&] { return TcpErrno(bind_ok, true); },
      [&] { return TcpErrno(bind_no, true); },
      [&] { return TcpErrno(PortOf(allowed), false); },
      [&] { return TcpErrno(PortOf(denied), false); },
  };
  EXPECT_THAT(Confined({p}, 7, ops), ElementsAre(0, EACCES, 0, EACCES));
  EXPECT_THAT(Confined({p}, 3, ops), ElementsAre(0, 0, 0, 0));
  close(allowed);
  close(denied);
}

// Scopes: signals and abstract unix sockets reach no process outside the
// domain (the test process is outside); at ABI 5 they are dropped.
TEST(EnforceLayers, ScopesHold) {
  SKIP_UNLESS_KERNEL();
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string name = "pathwarden-sandbox-test-" + std::to_string(getpid());
  std::copy(name.begin(), name.end(), a.sun_path + 1);
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(listen(server, 4), 0);
  pid_t parent = getpid();
  std::vector<std::function<int()>> ops = {
      [&] { return Errno(kill(parent, 0)); },
      [&] {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int e = Errno(connect(s, reinterpret_cast<sockaddr*>(&a), len));
        close(s);
        return e;
      },
  };
  policy::Policy p;
  p.source = "scopes";
  p.scoped = landlock::kScopeAll;
  EXPECT_THAT(Confined({p}, 7, ops), ElementsAre(EPERM, EPERM));
  // ABI 5 knows no scope: the layer has nothing left and is skipped.
  EXPECT_THAT(Confined({p}, 5, ops), ElementsAre(0, 0));
  p.scoped = landlock::kScopeSignal;
  EXPECT_THAT(Confined({p}, 7, ops), ElementsAre(EPERM, 0));
  close(server);
}

// Layers stack: a second layer's missing grant denies what the first allows.
TEST(EnforceLayers, LayersStackInOrder) {
  SKIP_UNLESS_KERNEL();
  TempTree t;
  policy::Policy second;
  second.source = "second";
  second.handled_fs = landlock::kFsAll;
  second.paths.push_back({t.Path("rw1"), landlock::kFsAll, {}});
  auto errs = Confined({FsPolicy(t), second}, 7,
                       {[&] { return OpenErrno(t.Path("rw1/x"), O_RDONLY); },
                        [&] { return OpenErrno(t.Path("ro/f"), O_RDONLY); }});
  EXPECT_THAT(errs, ElementsAre(0, EACCES));
}

}  // namespace
}  // namespace pathwarden::sandbox
