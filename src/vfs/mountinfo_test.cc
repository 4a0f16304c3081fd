// ParseMountInfo() against lines as the kernel prints them, and its
// refusals; WhyNotModelled()'s two lists.

#include "src/vfs/mountinfo.h"

#include <gtest/gtest.h>

#include "src/vfs/world.h"

namespace pathwarden::vfs {
namespace {

TEST(MountInfo, ParsesTheKernelsLines) {
  constexpr std::string_view kText =
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
      "28 27 0:25 / /mnt/with\\040space ro,nosuid,nodev,relatime - tmpfs none ro,size=4k\n"
      "36 35 98:0 /mnt1 /mnt2 rw,noexec,nosymfollow master:1 shared:7 - fuse.sshfs host:/x "
      "rw,user_id=0,default_permissions\n";
  auto r = ParseMountInfo(kText, "mountinfo");
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->size(), 3u);
  const MountInfo& root = (*r)[0];
  EXPECT_EQ(root.id, 27u);
  EXPECT_EQ(root.parent, 1u);
  EXPECT_EQ(root.major, 254u);
  EXPECT_EQ(root.minor, 0u);
  EXPECT_EQ(root.root, "/");
  EXPECT_EQ(root.mountpoint, "/");
  EXPECT_EQ(root.flags, 0u);
  EXPECT_EQ(root.fstype, "ext4");
  EXPECT_FALSE(root.sb_readonly);
  const MountInfo& t = (*r)[1];
  EXPECT_EQ(t.mountpoint, "/mnt/with space");
  EXPECT_EQ(t.flags, kMntReadonly | kMntNosuid | kMntNodev);
  EXPECT_TRUE(t.sb_readonly);
  const MountInfo& f = (*r)[2];
  EXPECT_EQ(f.root, "/mnt1");
  EXPECT_EQ(f.flags, kMntNoexec | kMntNosymfollow);
  EXPECT_EQ(f.fstype, "fuse.sshfs");
  EXPECT_EQ(f.source, "host:/x");
  EXPECT_TRUE(f.HasSuperOption("default_permissions"));
  EXPECT_TRUE(f.HasSuperOption("user_id"));
  EXPECT_FALSE(f.HasSuperOption("user"));
}

TEST(MountInfo, RefusesWhatTheKernelNeverPrints) {
  struct Case {
    std::string_view line, error;
  } cases[] = {
      {"27 1 254:0 / / rw", "m:1:16: a mountinfo line has at least 10 fields"},
      {"x 1 254:0 / / rw - ext4 /dev/vda rw", "m:1:1: the mount id is not a number"},
      {"27 1 254 / / rw - ext4 /dev/vda rw", "m:1:6: the device is not MAJOR:MINOR"},
      {"27 1 254:0 / /a\\04 rw - ext4 /dev/vda rw", "m:1:16: a bad octal escape"},
      {"27 1 254:0 / rel rw - ext4 /dev/vda rw", "m:1:14: the mount point is not an absolute"},
      {"27 1 254:0 / / rw - ext4 /dev/vda rw extra", "m:1:38: a mountinfo line ends with"},
  };
  for (const Case& c : cases) {
    auto r = ParseMountInfo(std::string(c.line) + "\n", "m");
    ASSERT_FALSE(r) << c.line;
    EXPECT_TRUE(r.error().starts_with(c.error)) << c.line << "\n  gave: " << r.error();
  }
  // The line number counts every line.
  auto r = ParseMountInfo("27 1 254:0 / / rw - ext4 /dev/vda rw\nbad\n", "m");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().starts_with("m:2:")) << r.error();
}

TEST(MountInfo, NamesWhatItDoesNotModel) {
  MountInfo m;
  for (const char* ok : {"ext4", "xfs", "tmpfs", "devtmpfs", "devpts", "ramfs", "btrfs"}) {
    m.fstype = ok;
    EXPECT_EQ(WhyNotModelled(m), "") << ok;
  }
  for (const char* no : {"sysfs", "cgroup2", "nfs4", "fuse",
                         "fuse.sshfs", "cifs", "zfs"}) {
    m.fstype = no;
    EXPECT_NE(WhyNotModelled(m), "") << no;
  }
  m.fstype = "fuse.sshfs";
  EXPECT_NE(WhyNotModelled(m).find("without default_permissions"), std::string::npos);
  // procfs: modelled in part (src/vfs/host_proc.cc), not with hidepid=
  // or subset=.
  MountInfo proc;
  proc.fstype = "proc";
  proc.super_options = "rw";
  EXPECT_EQ(WhyNotModelled(proc), "");
  proc.super_options = "rw,hidepid=0";
  EXPECT_EQ(WhyNotModelled(proc), "");
  proc.super_options = "rw,hidepid=invisible";
  EXPECT_NE(WhyNotModelled(proc).find("hidepid=invisible"), std::string::npos);
  proc.super_options = "rw,subset=pid";
  EXPECT_NE(WhyNotModelled(proc), "");
  // With it, the kernel's generic checks decide, behind the mount's gate.
  m.super_options = "rw,user_id=1000,group_id=100,default_permissions";
  EXPECT_EQ(WhyNotModelled(m), "");
  EXPECT_EQ(m.SuperOptionValue("user_id"), "1000");
  EXPECT_EQ(m.SuperOptionValue("group_id"), "100");
  EXPECT_EQ(m.SuperOptionValue("default_permissions"), std::nullopt);
  EXPECT_EQ(m.SuperOptionValue("user"), std::nullopt);
}

// An overlay's layers and options as 6.18 prints them: values
// octal-escaped (a ',' in a path is \054, not a separator), ':' between
// layers escaped by '\\' inside one, "::" before the data-only layers;
// the host backend decides the rest.
TEST(MountInfo, OverlayLayersAndOptions) {
  auto r = ParseMountInfo(
      "72 65 0:42 / /m2 rw,relatime - overlay overlay rw,lowerdir=/t/a\\134:b\\134\\054c:/l2::/d,"
      "upperdir=/t/u,workdir=/t/w,redirect_dir=on,uuid=on,metacopy=on,userxattr\n"
      "75 65 0:44 / /m3 rw,relatime - overlay overlay ro,lowerdir=l1:l2\n"
      "76 65 0:45 / /m4 rw,relatime - tmpfs t rw\n",
      "m");
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE((*r)[0].overlay.has_value());
  const OverlayOptions& o = *(*r)[0].overlay;
  EXPECT_EQ(o.lower, (std::vector<std::string>{"/t/a:b,c", "/l2", "/d"}));
  EXPECT_EQ(o.data_only, 1u);
  EXPECT_EQ(o.upper, "/t/u");
  EXPECT_EQ(o.work, "/t/w");
  EXPECT_EQ(o.redirect_dir, "on");
  EXPECT_TRUE(o.metacopy);
  EXPECT_TRUE(o.userxattr);
  EXPECT_EQ(WhyNotModelled((*r)[0]), "");
  const OverlayOptions& ro = *(*r)[1].overlay;
  EXPECT_EQ(ro.lower, (std::vector<std::string>{"l1", "l2"}));
  EXPECT_EQ(ro.upper, "");
  EXPECT_TRUE((*r)[1].sb_readonly);
  EXPECT_FALSE((*r)[2].overlay.has_value());
  MountInfo unread;
  unread.fstype = "overlay";
  EXPECT_NE(WhyNotModelled(unread), "");
}

// /proc/swaps as 6.18 prints it: partitions left out, a file's name
// unescaped, a removed one's name unknown.
TEST(Swaps, FilesByNameAndRemovedOnesUnnamed) {
  const auto swaps = ParseSwaps(
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/vda2                               partition\t1048572\t\t0\t\t-2\n"
      "/tmp/dd/swx/d/swapfile                  file\t\t16380\t\t0\t\t-3\n"
      "/srv/my\\040swap                         file\t\t16380\t\t0\t\t-4\n"
      "/old/swapfile (deleted)                 file\t\t16380\t\t0\t\t-5\n");
  ASSERT_EQ(swaps.size(), 3u);
  EXPECT_EQ(swaps[0].path, "/tmp/dd/swx/d/swapfile");
  EXPECT_EQ(swaps[1].path, "/srv/my swap");
  EXPECT_EQ(swaps[2].path, "");
  EXPECT_TRUE(ParseSwaps("Filename\tType\tSize\tUsed\tPriority\n").empty());
}

}  // namespace
}  // namespace pathwarden::vfs
