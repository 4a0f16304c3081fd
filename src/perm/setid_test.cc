// The setuid/setgid rules (setid.h), case by case as Linux 6.18 decides
// them; the ops and pathwarden-fs are checked against the kernel on top
// (tests/scenarios/, tests/host/explain_changes_test.cc, tests/fileserver/).

#include "src/perm/setid.h"

#include <gtest/gtest.h>

namespace pathwarden::perm {
namespace {

Cred User(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups = {}) {
  Cred c = Cred::ForUser(uid, gid);
  c.SetGroups(std::move(groups));
  return c;
}

// An inode of group `gid` (owned by uid 0).
InodeIds Owned(uint32_t gid) { return {0, gid}; }

Cred WithFsetid(Cred c) {
  c.cap_effective |= uint64_t{1} << kCapFsetid;
  c.cap_permitted |= uint64_t{1} << kCapFsetid;
  return c;
}

TEST(InitOwner, TakesTheSetgidDirectorysGroup) {
  const Cred alice = User(1000, 1000);
  const NewOwner plain = InitOwner(alice, S_IFREG | 0644, S_IFDIR | 0755, Owned(2000));
  EXPECT_EQ(plain.uid, 1000u);
  EXPECT_EQ(plain.gid, 1000u);
  EXPECT_EQ(plain.mode, S_IFREG | 0644u);
  const NewOwner in_sgid = InitOwner(alice, S_IFREG | 0644, S_IFDIR | 02775, Owned(2000));
  EXPECT_EQ(in_sgid.gid, 2000u);
  EXPECT_EQ(in_sgid.mode, S_IFREG | 0644u);
  // A new directory there is setgid too.
  EXPECT_EQ(InitOwner(alice, S_IFDIR | 0755, S_IFDIR | 02775, Owned(2000)).mode, S_IFDIR | 02755u);
}

TEST(InitOwner, StripsSetgidOutsideTheDirectorysGroup) {
  const Cred outsider = User(1000, 1000);
  const Cred member = User(1000, 1000, {2000});
  // Group-executable and setgid, in a setgid directory of another group.
  EXPECT_EQ(InitOwner(outsider, S_IFREG | 02755, S_IFDIR | 02777, Owned(2000)).mode, S_IFREG | 0755u);
  EXPECT_EQ(InitOwner(member, S_IFREG | 02755, S_IFDIR | 02777, Owned(2000)).mode, S_IFREG | 02755u);
  EXPECT_EQ(InitOwner(WithFsetid(outsider), S_IFREG | 02755, S_IFDIR | 02777, Owned(2000)).mode,
            S_IFREG | 02755u);
  // Without group execute, or outside a setgid directory, it stays.
  EXPECT_EQ(InitOwner(outsider, S_IFREG | 02745, S_IFDIR | 02777, Owned(2000)).mode, S_IFREG | 02745u);
  EXPECT_EQ(InitOwner(outsider, S_IFREG | 02755, S_IFDIR | 0777, Owned(2000)).mode, S_IFREG | 02755u);
}

TEST(KillSuidMode, DropsWhatAWriteDrops) {
  const Cred bob = User(1001, 1001);
  EXPECT_EQ(KillSuidMode(bob, S_IFREG | 04755, Owned(1001)), S_IFREG | 0755u);
  // setgid goes when group-executable, or outside the file's group.
  EXPECT_EQ(KillSuidMode(bob, S_IFREG | 02775, Owned(1001)), S_IFREG | 0775u);
  EXPECT_EQ(KillSuidMode(bob, S_IFREG | 02664, Owned(2000)), S_IFREG | 0664u);
  EXPECT_EQ(KillSuidMode(bob, S_IFREG | 02664, Owned(1001)), S_IFREG | 02664u);
  // CAP_FSETID keeps both; other types are not touched.
  EXPECT_EQ(KillSuidMode(WithFsetid(bob), S_IFREG | 06775, Owned(2000)), S_IFREG | 06775u);
  EXPECT_EQ(KillSuidMode(bob, S_IFDIR | 02775, Owned(2000)), S_IFDIR | 02775u);
}

TEST(ChownKillsSgid, OnTheGroupBeforeTheChange) {
  const Cred bob = User(1001, 1001);
  EXPECT_TRUE(ChownKillsSgid(bob, S_IFREG | 02775, Owned(1001)));   // group-executable
  EXPECT_TRUE(ChownKillsSgid(bob, S_IFREG | 02664, Owned(2000)));   // outside the group
  EXPECT_FALSE(ChownKillsSgid(bob, S_IFREG | 02664, Owned(1001)));  // in it
  EXPECT_FALSE(ChownKillsSgid(WithFsetid(bob), S_IFREG | 02664, Owned(2000)));
  EXPECT_TRUE(ChownKillsSgid(WithFsetid(bob), S_IFREG | 02775, Owned(2000)));
  EXPECT_FALSE(ChownKillsSgid(bob, S_IFDIR | 02775, Owned(2000)));  // directories keep it
  EXPECT_FALSE(ChownKillsSgid(bob, S_IFREG | 0775, Owned(2000)));
}

TEST(ModeSetBy, KeepsSetgidForTheGroupOnly) {
  const Cred alice = User(1000, 1000, {2000});
  EXPECT_EQ(ModeSetBy(alice, 02755, 2000, Owned(2000)), 02755u);
  EXPECT_EQ(ModeSetBy(alice, 02755, 3000, Owned(3000)), 0755u);
  EXPECT_EQ(ModeSetBy(WithFsetid(alice), 02755, 3000, Owned(3000)), 02755u);
  EXPECT_EQ(ModeSetBy(alice, 04755, 3000, Owned(3000)), 04755u);  // setuid is not its business
}

// A process of a user namespace, read from inside it ("0 1000 1"): its
// CAP_FSETID covers only inodes whose owner and group map, and never
// keeps setuid on a write (capable(), the initial namespace's).
TEST(SetidInAUserNamespace, CapabilitiesCoverMappedInodesOnly) {
  auto ns = std::make_shared<UserNamespace>();
  ns->uid_map = ns->gid_map = {{0, 1000, 1}};
  ns->overflow_shown = true;
  Cred root = WithFsetid(User(0, 0));
  root.userns = ns;
  const InodeIds mapped{0, 0}, unmapped{65534, 65534};
  // Outside the group 2000 either way; over a mapped inode CAP_FSETID
  // keeps setgid, over an unmapped one not.
  EXPECT_EQ(ModeSetBy(root, 02755, 2000, mapped), 02755u);
  EXPECT_EQ(ModeSetBy(root, 02755, 2000, unmapped), 0755u);
  EXPECT_FALSE(ChownKillsSgid(root, S_IFREG | 02664, InodeIds{0, 2000}));
  EXPECT_TRUE(ChownKillsSgid(root, S_IFREG | 02664, InodeIds{65534, 2000}));
  // A write drops setuid whatever the inode (capable(CAP_FSETID) fails).
  EXPECT_EQ(KillSuidMode(root, S_IFREG | 04755, mapped), S_IFREG | 0755u);
  EXPECT_EQ(KillSuidMode(root, S_IFREG | 02664, InodeIds{0, 2000}), S_IFREG | 02664u);
  // The overflow id is unmapped here, as the namespace does not map it;
  // where it does, it stands for mapped and unmapped owners alike, and
  // only `lenient` decides.
  auto wide = std::make_shared<UserNamespace>(*ns);
  wide->uid_map = wide->gid_map = {{0, 1000, 1}, {1, 100000, 65536}};
  root.userns = wide;
  EXPECT_EQ(ModeSetBy(root, 02755, 2000, unmapped), 0755u);
  auto lenient = std::make_shared<UserNamespace>(*wide);
  lenient->lenient = true;
  root.userns = lenient;
  EXPECT_EQ(ModeSetBy(root, 02755, 2000, unmapped), 02755u);
}

}  // namespace
}  // namespace pathwarden::perm
