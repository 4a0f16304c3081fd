// The host probe on the real kernel, against the scratch host: what
// credentials, capabilities and Landlock layers get, and what it refuses.

#include "src/kernel/host_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/landlock.h"
#include "src/kernel/child_test_util.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/kernel_test_util.h"
#include "src/kernel/scratch_host.h"

namespace pathwarden::kernel_internal {
namespace {

using kernel_testing::InForkedChild;
using kernel_testing::KernelTest;

// "ok EACCES ELOOP", or "error: ..." when the probe gives no answers.
std::string Answers(const Result<std::vector<int>, std::string>& r) {
  if (!r) return "error: " + r.error();
  std::string out;
  for (int err : *r) out += (out.empty() ? "" : " ") + (err == 0 ? "ok" : ErrnoName(err));
  return out;
}

// Root with every capability this machine can grant.
Cred Root() {
  Cred c = Cred::ForUser(0, 0);
  c.cap_effective = c.cap_permitted = AvailableCaps();
  return c;
}

Cred WithoutDacCaps(Cred c) {
  const uint64_t dac = CapBit(kCapDacOverride) | CapBit(kCapDacReadSearch);
  c.cap_effective &= ~dac;
  c.cap_permitted &= ~dac;
  return c;
}

// Runs `body` with the scratch host built in a private mount namespace of
// a child; `body` returns its report.
std::string OnScratchHost(const std::function<std::string(const ScratchHost&)>& body) {
  return InForkedChild([&]() -> std::string {
    if (std::string e = EnterPrivateMountNamespace(); !e.empty()) return e;
    auto host = ScratchHost::Build();
    if (!host) return "build: " + host.error();
    return body(**host);
  });
}

class HostProbe : public KernelTest {};

TEST_F(HostProbe, CredentialsAndCapabilitiesAsTheKernelJudgesThem) {
  std::string out = OnScratchHost([](const ScratchHost& h) {
    const std::string below_root = h.Path("file_below_0700_root");  // private/file
    const std::string secret = h.Path("file_0600_1000");           // home/alice/secret
    const std::string alice_dir = h.Path("dir_0700_1000");
    const std::vector<pathwarden::Request> reqs = {
        Stat{.path = below_root},
        Open{.path = below_root},
        Stat{.path = secret},
        Open{.path = secret},
        Chdir{.path = alice_dir},
        // Relative to "/", which every request starts from again.
        Stat{.path = secret.substr(1)},
        Stat{.path = "secret"},
        Access{.path = secret, .mode = R_OK},
        Access{.path = below_root, .mode = R_OK},
    };
    Cred root = Root();
    Cred real_alice = Root();  // euid 0, but real uid 1000
    real_alice.ruid = 1000;
    Cred fs_alice = WithoutDacCaps(Root());  // fsuid 1000
    fs_alice.fsuid = 1000;
    std::string report;
    const auto probe = [&](std::string_view who, const Cred& c) {
      report += fmt::format("{}: {}\n", who, Answers(ProbeHost(ProbeIdentity{c}, reqs)));
    };
    probe("root", root);
    probe("root without DAC caps", WithoutDacCaps(root));
    probe("1000", Cred::ForUser(1000, 1000));
    probe("1001", Cred::ForUser(1001, 1001));
    probe("ruid 1000 euid 0", real_alice);
    probe("fsuid 1000", fs_alice);
    const std::vector<pathwarden::Request> acl = {
        Access{.path = h.Path("file_access_acl"), .mode = R_OK},
        Access{.path = h.Path("file_access_acl"), .mode = W_OK},
        Open{.path = h.Path("file_inherited_acl")},
        Access{.path = h.Path("file_inherited_acl"), .mode = W_OK},
    };
    report += "acl 1000: " + Answers(ProbeHost({Cred::ForUser(1000, 1000)}, acl)) + "\n";
    report += "acl 1001: " + Answers(ProbeHost({Cred::ForUser(1001, 1001)}, acl)) + "\n";
    Cred grouped = Cred::ForUser(1002, 1002);
    grouped.SetGroups({1000});
    report += "1002 in group 1000: " +
              Answers(ProbeHost({grouped}, std::vector<pathwarden::Request>{
                                               Stat{.path = h.Path("file_in_setgid_dir")},
                                               Access{.path = h.Path("file_in_setgid_dir"),
                                                      .mode = W_OK}})) +
              "\n";
    return report;
  });
  EXPECT_EQ(out,
            "root: ok ok ok ok ok ok ENOENT ok ok\n"
            // uid 0 owns private/ but is "other" to home/alice.
            "root without DAC caps: ok ok EACCES EACCES EACCES EACCES ENOENT EACCES ok\n"
            "1000: EACCES EACCES ok ok ok ok ENOENT ok EACCES\n"
            "1001: EACCES EACCES EACCES EACCES EACCES EACCES ENOENT EACCES EACCES\n"
            // access() checks as the real uid, with no capabilities for a
            // real uid other than 0 and the permitted set for 0.
            "ruid 1000 euid 0: ok ok ok ok ok ok ENOENT ok EACCES\n"
            "fsuid 1000: EACCES EACCES ok ok ok ok ENOENT EACCES ok\n"
            // The inherited ACL's mask (from the creating mode 0640) is r--.
            "acl 1000: EACCES EACCES ok EACCES\n"
            "acl 1001: ok EACCES EACCES EACCES\n"
            "1002 in group 1000: ok ok\n");
}

TEST_F(HostProbe, PathWalkSymlinksMountsAndInodeFlags) {
  std::string out = OnScratchHost([](const ScratchHost& h) {
    const std::vector<pathwarden::Request> reqs = {
        Stat{.path = h.Path("chain40")},
        Stat{.path = h.Path("chain41")},
        Stat{.path = h.Path("symlink_loop")},
        Lstat{.path = h.Path("symlink_loop")},
        Stat{.path = h.Path("symlink_dangling")},
        Stat{.path = h.Path("symlink_absolute")},
        Readlink{.path = h.Path("symlink_relative")},
        Readlink{.path = h.Path("symlink_target")},
        Open{.path = h.Path("symlink_relative"), .flags = O_NOFOLLOW},
        Open{.path = h.Path("symlink_relative"), .flags = O_PATH | O_NOFOLLOW},
        Open{.path = h.Path("symlink_target"), .flags = O_DIRECTORY},
        Open{.path = h.Path("dir_0700_root"), .flags = O_RDONLY | O_DIRECTORY},
        Open{.path = h.Path("dir_0700_root"), .flags = O_WRONLY},
        ExecCheck{.path = h.Path("file_exec")},
        ExecCheck{.path = h.Path("file_exec_noexec")},
        ExecCheck{.path = h.Path("symlink_target")},
        ExecCheck{.path = h.Path("chr_null")},
        Access{.path = h.Path("file_ro_bind"), .mode = W_OK},
        Open{.path = h.Path("file_immutable"), .flags = O_WRONLY},
        Access{.path = h.Path("file_immutable"), .mode = W_OK},
        Open{.path = h.Path("file_append_only"), .flags = O_WRONLY},
        Open{.path = h.Path("file_append_only"), .flags = O_WRONLY | O_APPEND},
        Open{.path = h.Path("chr_null"), .flags = O_PATH},
        Lstat{.path = h.Path("socket")},
        Access{.path = h.Path("fifo"), .mode = R_OK | W_OK},
    };
    return Answers(ProbeHost({Root()}, reqs));
  });
  EXPECT_EQ(out,
            "ok ELOOP ELOOP ok ENOENT ok ok EINVAL ELOOP ok ENOTDIR ok EISDIR "
            "ok EACCES EACCES EACCES EROFS EPERM EPERM EPERM ok ok ok ok");
}

TEST_F(HostProbe, LandlockLayers) {
  std::string out = OnScratchHost([](const ScratchHost& h) {
    const std::string file = h.Path("symlink_target");  // links/target
    const std::string other = h.Path("file_rw_subdir");  // data/sub/deep
    const std::vector<pathwarden::Request> reqs = {
        Open{.path = file},
        Stat{.path = file},
        Open{.path = file, .flags = O_PATH},
        Open{.path = other},
        Open{.path = other, .flags = O_WRONLY},
        Open{.path = h.Path("symlink_relative")},
        Open{.path = h.Path("file_sticky_1000"), .flags = O_WRONLY},
    };
    ProbeIdentity none{Cred::ForUser(1000, 1000),
                       {LandlockRuleset{.handled_access_fs = landlock::kFsReadFile}}};
    ProbeIdentity beneath = none;
    beneath.layers[0].AllowPath(h.Path("rw_dir"), landlock::kFsReadFile);
    // A second layer handles writes and allows them below data/sub.
    ProbeIdentity stacked = beneath;
    stacked.layers.push_back(LandlockRuleset{.handled_access_fs = landlock::kFsWriteFile});
    stacked.layers[1].AllowPath(h.Path("rw_subdir"), landlock::kFsWriteFile);
    // A rule granting a right its layer does not handle.
    ProbeIdentity refused = stacked;
    refused.layers[1].AllowPath(h.Path("root"), landlock::kFsReadFile);
    return "no rule: " + Answers(ProbeHost(none, reqs)) + "\n" +
           "beneath data: " + Answers(ProbeHost(beneath, reqs)) + "\n" +
           "stacked: " + Answers(ProbeHost(stacked, reqs)) + "\n" +
           "refused: " + Answers(ProbeHost(refused, reqs)) + "\n";
  });
  EXPECT_EQ(out,
            "no rule: EACCES ok ok EACCES ok EACCES ok\n"
            "beneath data: EACCES ok ok ok ok EACCES ok\n"
            "stacked: EACCES ok ok ok ok EACCES EACCES\n"
            "refused: error: layer 1: the kernel refuses the rule: landlock_add_rule: EINVAL\n");
}

TEST_F(HostProbe, RefusesWhatCouldChangeTheHost) {
  std::string out = OnScratchHost([](const ScratchHost& h) {
    std::string report;
    const auto probe = [&](const pathwarden::Request& r) {
      report += Answers(ProbeHost({Root()}, std::vector<pathwarden::Request>{r})) +
                "\n";
    };
    probe(Open{.path = h.Path("fifo")});
    probe(Open{.path = h.Path("chr_null"), .flags = O_RDONLY});
    probe(Open{.path = h.Path("blk_loop0"), .flags = O_RDONLY | O_NONBLOCK});
    probe(Open{.path = h.Path("socket")});
    probe(Open{.path = h.Path("file_xattr"), .flags = O_WRONLY | O_TRUNC});
    probe(Open{.path = h.Path("rw_dir") + "/new", .flags = O_WRONLY | O_CREAT});
    probe(Open{.path = h.Path("rw_dir"), .flags = O_TMPFILE | O_WRONLY});
    probe(Mkdir{.path = h.Path("rw_dir") + "/new"});
    probe(Stat{.dirfd = Fd{3}, .path = "x"});
    Cred odd = Root();
    odd.cap_permitted &= ~CapBit(kCapChown);
    report += Answers(ProbeHost({odd}, std::vector<pathwarden::Request>{Stat{.path = "/"}})) + "\n";
    // A refused request stops the batch: nothing is reported.
    report += Answers(ProbeHost({Root()},
                                std::vector<pathwarden::Request>{
                                    Stat{.path = h.Path("fifo")}, Open{.path = h.Path("fifo")}}));
    return report;
  });
  const std::string d = "/tmp/pathwarden-scratch.";
  // The scratch root differs per run: compare without it.
  std::string shown;
  for (size_t at = 0; at < out.size();) {
    size_t p = out.find(d, at);
    if (p == std::string::npos) {
      shown += out.substr(at);
      break;
    }
    shown += out.substr(at, p - at) + "$ROOT";
    at = out.find('/', p + d.size());
  }
  EXPECT_EQ(shown,
            "error: request 0: open of a FIFO $ROOT/special/fifo is refused: it would reach a "
            "driver or a peer\n"
            "error: request 0: open of a character device $ROOT/special/null is refused: it "
            "would reach a driver or a peer\n"
            "error: request 0: open of a block device $ROOT/special/loop0 is refused: it would "
            "reach a driver or a peer\n"
            "error: request 0: open of a socket $ROOT/special/socket is refused: it would reach "
            "a driver or a peer\n"
            "error: request 0: open of $ROOT/data/file with O_CREAT, O_TRUNC or O_TMPFILE is "
            "refused: it changes the host\n"
            "error: request 0: open of $ROOT/data/new with O_CREAT, O_TRUNC or O_TMPFILE is "
            "refused: it changes the host\n"
            "error: request 0: open of $ROOT/data with O_CREAT, O_TRUNC or O_TMPFILE is refused: "
            "it changes the host\n"
            "error: request 0: mkdir is not a read-only request the probe runs\n"
            "error: request 0: dirfd 3 is not AT_FDCWD (the probe has no descriptors)\n"
            "error: the identity: effective capabilities beyond the permitted set: CAP_CHOWN\n"
            "error: request 1: open of a FIFO $ROOT/special/fifo is refused: it would reach a "
            "driver or a peer");
}

// With changes allowed (a scratch directory's query), what could still
// reach beyond it is refused before any child runs: a device node, a call
// the probe does not run, a dirfd; the message names the op.
TEST_F(HostProbe, RefusesWhatItCannotRunWhenChanging) {
  const auto refusal = [](const pathwarden::Request& r) {
    auto got = ProbeHostChanging({Root()}, std::vector<pathwarden::Request>{r}, true);
    return got ? std::string("ran") : got.error();
  };
  EXPECT_EQ(refusal(Mknod{.path = "/nonexistent/dev", .type = S_IFCHR, .rdev_major = 1,
                          .rdev_minor = 3}),
            "request 0: mknod of a device is refused: it could reach a driver");
  EXPECT_EQ(refusal(Fchmod{.fd = Fd{0}, .mode = 0600}),
            "request 0: fchmod is not a read-only request the probe runs");
  EXPECT_EQ(refusal(Rename{.dirfd = Fd{3}, .oldpath = "a", .newpath = "b"}),
            "request 0: dirfd 3 is not AT_FDCWD (the probe has no descriptors)");
}

TEST_F(HostProbe, CapabilitiesThisProcessLacksAreAnError) {
  const uint64_t missing = kCapAll & ~AvailableCaps();
  if (missing == 0) GTEST_SKIP() << "this process holds every capability";
  auto r = ProbeHost({Cred::ForUser(0, 0)}, std::vector<pathwarden::Request>{Stat{.path = "/"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("capabilities this process cannot grant"), std::string::npos)
      << r.error();
}

}  // namespace
}  // namespace pathwarden::kernel_internal
