// The scratch host on the real kernel: every kind of object is there and
// listed, the inode flags hold, and the host's mounts are as before.

#include "src/kernel/scratch_host.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/kernel/child_test_util.h"
#include "src/kernel/kernel_test_util.h"

namespace pathwarden::kernel_internal {
namespace {

using kernel_testing::InForkedChild;
using kernel_testing::KernelTest;

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The line of the listing for `path` (absolute, below `root`), "" if none.
std::string LineOf(const std::string& listing, const std::string& root, const std::string& path) {
  std::string rel = path == root ? "/" : path.substr(root.size());
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(rel + " ", 0) == 0) return line;
  return "";
}

class ScratchHostTest : public KernelTest {};

TEST_F(ScratchHostTest, BuildsEveryKindListsItAndLeavesTheHostAsItWas) {
  const std::string mounts_before = ReadFile("/proc/self/mountinfo");
  std::string root;
  std::string out = InForkedChild([&]() -> std::string {
    if (std::string e = EnterPrivateMountNamespace(); !e.empty()) return e;
    auto host = ScratchHost::Build();
    if (!host) return "build: " + host.error();
    const ScratchHost& h = **host;
    auto listing = HostListing(h.root());
    if (!listing) return "listing: " + listing.error();
    std::string report = "root " + h.root() + "\n";
    // Each kind with what its line must show.
    const std::pair<const char*, const char*> kinds[] = {
        {"dir_0700_1000", " d0700 uid=1000 gid=1000 "},
        {"dir_0700_root", " d0700 uid=0 gid=0 "},
        {"setgid_dir", " d2775 uid=0 gid=1000 "},
        {"file_in_setgid_dir", " -0664 uid=1000 gid=1000 "},
        {"sticky_dir", " d1777 "},
        {"file_access_acl", " xattr:system.posix_acl_access="},
        {"dir_default_acl", " xattr:system.posix_acl_default="},
        {"file_inherited_acl", " xattr:system.posix_acl_access="},
        {"file_immutable", " immutable=1 append=0"},
        {"file_append_only", " immutable=0 append=1"},
        {"symlink_relative", " -> target"},
        {"symlink_relative_up", " -> ../private/file"},
        {"symlink_absolute", "/links/target"},
        {"symlink_dangling", " -> missing"},
        {"symlink_loop", " -> loop_b"},
        {"symlink_owned_1000", " l0777 uid=1000 gid=1000 "},
        {"chain40", " -> l03"},
        {"chain41", " -> l02"},
        {"fifo", " p0666 "},
        {"socket", " s0755 "},
        {"chr_null", " rdev=1:3"},
        {"chr_zero", " rdev=1:5"},
        {"blk_loop0", " b0660 uid=0 gid=6 "},
        {"noexec_mount", " d0755 "},
        {"file_exec_noexec", " -0755 "},
        {"file_exec", " -0755 "},
        {"file_ro_bind", " -0666 "},
        {"file_xattr", " xattr:user.pathwarden=70726f6265"},
        {"hardlink_a", " nlink=2 "},
        {"hardlink_b", " nlink=2 "},
    };
    for (const auto& [kind, want] : kinds) {
      std::string path = h.Path(kind);
      std::string line = path.empty() ? "" : LineOf(*listing, h.root(), path);
      if (line.find(want) == std::string::npos)
        report += fmt::format("{}: \"{}\" lacks \"{}\"\n", kind, line, want);
    }
    // +i and +a hold for root on tmpfs; the ro bind is read-only.
    const auto open_err = [](const std::string& p, int flags) {
      int fd = open(p.c_str(), flags | O_CLOEXEC);
      if (fd < 0) return errno;
      close(fd);
      return 0;
    };
    report += fmt::format(
        "immutable O_WRONLY {}, unlink {}; append-only O_WRONLY {}, O_APPEND {}; ro bind {}\n",
        open_err(h.Path("file_immutable"), O_WRONLY),
        unlink(h.Path("file_immutable").c_str()) == 0 ? 0 : errno,
        open_err(h.Path("file_append_only"), O_WRONLY),
        open_err(h.Path("file_append_only"), O_WRONLY | O_APPEND),
        open_err(h.Path("file_ro_bind"), O_WRONLY));
    // A second listing equals the first; reading changed nothing.
    auto again = HostListing(h.root());
    if (!again || *again != *listing) report += "the second listing differs\n";
    // ... and would have seen a change.
    chmod(h.Path("symlink_target").c_str(), 0600);
    auto changed = HostListing(h.root());
    if (!changed || *changed == *listing) report += "a chmod left the listing as it was\n";
    std::string r = h.root();
    if (std::string c = (*host)->Cleanup(); !c.empty()) report += "cleanup: " + c + "\n";
    struct stat st;
    if (lstat(r.c_str(), &st) == 0 || errno != ENOENT) report += r + " is still there\n";
    return report;
  });
  const std::string prefix = "root /tmp/pathwarden-scratch.";
  ASSERT_EQ(out.rfind(prefix, 0), 0u) << out;
  root = out.substr(5, out.find('\n') - 5);
  EXPECT_EQ(out.substr(out.find('\n') + 1),
            fmt::format("immutable O_WRONLY {0}, unlink {0}; append-only O_WRONLY {0}, "
                        "O_APPEND 0; ro bind {1}\n",
                        EPERM, EROFS));
  EXPECT_EQ(ReadFile("/proc/self/mountinfo"), mounts_before);
  struct stat st;
  EXPECT_NE(lstat(root.c_str(), &st), 0) << root << " left on the host";
}

TEST_F(ScratchHostTest, RefusesToBuildOutsideANamespaceItEntered) {
  // This process never entered a namespace of its own.
  auto host = ScratchHost::Build();
  ASSERT_FALSE(host.has_value());
  EXPECT_NE(host.error().find("mount namespace of its own"), std::string::npos) << host.error();
}

}  // namespace
}  // namespace pathwarden::kernel_internal
