// generic_permission(), the POSIX ACL walk and the capability overrides,
// one rule per case. Expectations follow fs/namei.c and fs/posix_acl.c of
// Linux 6.18; the scenario suites confirm them on the kernel.

#include "src/perm/permission.h"

#include <string>

#include <gtest/gtest.h>

#include "src/vfs/world.h"

namespace pathwarden::perm {
namespace {

using vfs::InodeId;

constexpr uint32_t kR = kMayRead, kW = kMayWrite, kX = kMayExec;

class PermissionTest : public ::testing::Test {
 protected:
  // A file (or directory) with `mode`, owned by `uid`:`gid`, and an
  // optional ACL ("u:1001:rwx,..." on top of the mode, as setfacl -m).
  InodeId Make(uint32_t mode, uint32_t uid, uint32_t gid, std::string_view acl = "") {
    vfs::World::WriteGuard g(w_);
    const vfs::SbId sb = w_.inode(w_.inode_of(w_.root().dentry)).sb;
    InodeId ino = w_.NewInode(sb, mode, uid, gid);
    if (!acl.empty()) {
      PosixAcl a = PosixAcl::FromMode(mode);
      a.Modify(*PosixAcl::ParseEntries(acl));
      uint32_t m = mode;
      const bool equiv = a.EquivMode(&m);
      w_.SetModeAndAcl(ino, m, equiv ? vfs::kNone : w_.InternAcl(a));
    }
    return ino;
  }
  static Cred User(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups = {},
                   uint64_t caps = 0) {
    Cred c = Cred::ForUser(uid, gid);
    c.SetGroups(std::move(groups));
    c.cap_effective = c.cap_permitted = caps;
    return c;
  }
  int Check(InodeId ino, const Cred& c, uint32_t mask) {
    return GenericPermission(w_, c, ino, mask).err;
  }

  vfs::World w_;
};

TEST_F(PermissionTest, OwnerGetsOwnerBitsOnlyEvenWhenOthersHaveMore) {
  InodeId f = Make(S_IFREG | 0077, 1000, 1000);
  EXPECT_EQ(Check(f, User(1000, 1000), kR), EACCES);
  EXPECT_EQ(Check(f, User(2000, 2000), kR), 0);
}

TEST_F(PermissionTest, GroupMemberGetsGroupBitsEvenWhenOtherIsWider) {
  InodeId f = Make(S_IFREG | 0604, 1000, 50);
  EXPECT_EQ(Check(f, User(2000, 50), kR), EACCES);
  EXPECT_EQ(Check(f, User(2000, 2000, {50}), kR), EACCES);  // supplementary
  EXPECT_EQ(Check(f, User(2000, 2000), kR), 0);             // other
}

TEST_F(PermissionTest, EveryRequestedBitMustBeGranted) {
  InodeId f = Make(S_IFREG | 0640, 1000, 50);
  EXPECT_EQ(Check(f, User(1000, 1), kR | kW), 0);
  EXPECT_EQ(Check(f, User(1000, 1), kR | kX), EACCES);
  EXPECT_EQ(Check(f, User(7, 50), kR), 0);
  EXPECT_EQ(Check(f, User(7, 50), kW), EACCES);
}

TEST_F(PermissionTest, FsuidAndFsgidDecideNotTheEffectiveIds) {
  InodeId f = Make(S_IFREG | 0400, 1000, 50);
  Cred c = User(2000, 2000);
  c.fsuid = 1000;
  EXPECT_EQ(Check(f, c, kR), 0);
  InodeId g = Make(S_IFREG | 0040, 1, 60);
  Cred d = User(2000, 2000);
  d.fsgid = 60;
  EXPECT_EQ(Check(g, d, kR), 0);
}

TEST_F(PermissionTest, DacOverrideReadsAndWritesAnything) {
  InodeId f = Make(S_IFREG | 0000, 1000, 1000);
  const Cred c = User(2000, 2000, {}, CapBit(kCapDacOverride));
  EXPECT_EQ(Check(f, c, kR | kW), 0);
  EXPECT_EQ(GenericPermission(w_, c, f, kR).via, PermCheck::Via::kCapOverride);
}

TEST_F(PermissionTest, DacOverrideExecutesOnlyWithSomeExecuteBit) {
  const Cred c = User(2000, 2000, {}, CapBit(kCapDacOverride));
  EXPECT_EQ(Check(Make(S_IFREG | 0644, 1000, 1000), c, kX), EACCES);
  EXPECT_TRUE(GenericPermission(w_, c, Make(S_IFREG | 0644, 1000, 1000), kX).exec_lacks_x);
  EXPECT_EQ(Check(Make(S_IFREG | 0100, 1000, 1000), c, kX), 0);  // owner's x
  EXPECT_EQ(Check(Make(S_IFREG | 0001, 1000, 1000), c, kX), 0);  // other's x
}

TEST_F(PermissionTest, DacOverrideSearchesDirectoriesWithoutAnyBit) {
  InodeId d = Make(S_IFDIR | 0000, 1000, 1000);
  const Cred c = User(2000, 2000, {}, CapBit(kCapDacOverride));
  EXPECT_EQ(Check(d, c, kX), 0);
  EXPECT_EQ(Check(d, c, kW | kX), 0);
}

TEST_F(PermissionTest, ReadSearchReadsFilesButNeverWritesOrExecutes) {
  InodeId f = Make(S_IFREG | 0000, 1000, 1000);
  const Cred c = User(2000, 2000, {}, CapBit(kCapDacReadSearch));
  EXPECT_EQ(Check(f, c, kR), 0);
  EXPECT_EQ(Check(f, c, kMayOpen | kR), 0);  // an open for reading
  EXPECT_EQ(Check(f, c, kR | kW), EACCES);   // O_RDWR is not read-only
  EXPECT_EQ(Check(Make(S_IFREG | 0100, 1000, 1000), c, kX), EACCES);  // owner-only x
}

TEST_F(PermissionTest, ReadSearchReadsAndSearchesDirectoriesButNeverWrites) {
  InodeId d = Make(S_IFDIR | 0000, 1000, 1000);
  const Cred c = User(2000, 2000, {}, CapBit(kCapDacReadSearch));
  EXPECT_EQ(Check(d, c, kR), 0);
  EXPECT_EQ(Check(d, c, kX), 0);
  EXPECT_EQ(Check(d, c, kR | kX), 0);
  EXPECT_EQ(Check(d, c, kW | kX), EACCES);
}

TEST_F(PermissionTest, AclNamedUserIsLimitedByTheMask) {
  InodeId f = Make(S_IFREG | 0640, 1000, 50, "u:1001:rwx,m::r--");
  EXPECT_EQ(Check(f, User(1001, 1), kR), 0);
  EXPECT_EQ(Check(f, User(1001, 1), kW), EACCES);
  EXPECT_EQ(GenericPermission(w_, User(1001, 1), f, kW).via, PermCheck::Via::kAclUser);
}

TEST_F(PermissionTest, AclNeverAppliesToTheOwner) {
  InodeId f = Make(S_IFREG | 0040, 1000, 50, "u:1000:rwx");
  // The owner entry (u::---) decides; the named entry for the owner's uid
  // is never reached.
  EXPECT_EQ(Check(f, User(1000, 50), kR), EACCES);
}

TEST_F(PermissionTest, AclIsSkippedWhenTheGroupClassBitsAreZero) {
  // u::rw-,u:1001:rwx,g::---,m::---,o::r-- (mode 0604): Linux never
  // consults the ACL, so the named user falls in "other" and reads.
  InodeId f = Make(S_IFREG | 0604, 1000, 50, "u:1001:rwx,m::---");
  EXPECT_EQ(w_.inode(f).mode & 0777, 0604u);
  EXPECT_EQ(Check(f, User(1001, 1), kR), 0);
  EXPECT_EQ(Check(f, User(1001, 1), kW), EACCES);
  EXPECT_EQ(GenericPermission(w_, User(1001, 1), f, kR).via, PermCheck::Via::kOther);
}

TEST_F(PermissionTest, AclGroupClassMemberIsDeniedEvenWhenOtherGrants) {
  InodeId f = Make(S_IFREG | 0644, 1000, 50, "g:60:---,m::rw-");
  EXPECT_EQ(Check(f, User(7, 60), kR), EACCES);  // matched g:60 only
  EXPECT_EQ(Check(f, User(7, 70), kR), 0);       // other
}

TEST_F(PermissionTest, AclAnyMatchingGroupEntryWithAllBitsGrants) {
  InodeId f = Make(S_IFREG | 0600, 1000, 50, "g::r--,g:60:-w-,m::rw-");
  const Cred c = User(7, 50, {60});
  EXPECT_EQ(Check(f, c, kR), 0);        // the owning group entry
  EXPECT_EQ(Check(f, c, kW), 0);        // g:60
  EXPECT_EQ(Check(f, c, kR | kW), EACCES);  // no single entry has both
}

TEST_F(PermissionTest, AclOtherIsNotMasked) {
  InodeId f = Make(S_IFREG | 0600, 1000, 50, "u:1001:r--,m::r--,o::rw-");
  EXPECT_EQ(Check(f, User(2000, 2000), kR | kW), 0);
}

TEST_F(PermissionTest, AclMaskLimitsTheOwningGroupEntry) {
  InodeId f = Make(S_IFREG | 0670, 1000, 50, "u:9:r--,m::r--");
  EXPECT_EQ(Check(f, User(7, 50), kR), 0);
  EXPECT_EQ(Check(f, User(7, 50), kW), EACCES);
}

TEST_F(PermissionTest, ReadOnlySuperblockRefusesWritesToFilesDirsAndSymlinks) {
  InodeId f = Make(S_IFREG | 0666, 0, 0);
  InodeId p = Make(S_IFIFO | 0666, 0, 0);
  {
    vfs::World::WriteGuard g(w_);
    w_.SetSbFlags(w_.inode(f).sb, vfs::kSbReadonly);
  }
  const Cred root = Cred::ForUser(0, 0);
  EXPECT_EQ(InodePermission(w_, root, f, kW).err, EROFS);
  EXPECT_EQ(InodePermission(w_, root, f, kR).err, 0);
  EXPECT_EQ(InodePermission(w_, root, p, kW).err, 0);  // FIFOs are exempt
}

TEST_F(PermissionTest, ImmutableRefusesWritesWithEpermBeforeDac) {
  InodeId f = Make(S_IFREG | 0000, 1000, 1000);
  {
    vfs::World::WriteGuard g(w_);
    w_.SetFlags(f, vfs::kInodeImmutable, 0);
  }
  EXPECT_EQ(InodePermission(w_, User(2000, 2000), f, kW).err, EPERM);
  EXPECT_EQ(InodePermission(w_, User(2000, 2000), f, kR).err, EACCES);
}

TEST_F(PermissionTest, FastSearchBitFollowsModeAndAcl) {
  InodeId d = Make(S_IFDIR | 0755, 0, 0);
  EXPECT_TRUE(w_.inode(d).flags & vfs::kInodeFastSearch);
  vfs::World::WriteGuard g(w_);
  w_.SetModeAndAcl(d, S_IFDIR | 0754, vfs::kNone);
  EXPECT_FALSE(w_.inode(d).flags & vfs::kInodeFastSearch);
  w_.SetModeAndAcl(d, S_IFDIR | 0711, vfs::kNone);
  EXPECT_TRUE(w_.inode(d).flags & vfs::kInodeFastSearch);
  PosixAcl a = PosixAcl::FromMode(0711);
  a.Modify(*PosixAcl::ParseEntries("u:5:--x"));
  w_.SetModeAndAcl(d, S_IFDIR | 0711, w_.InternAcl(a));
  EXPECT_FALSE(w_.inode(d).flags & vfs::kInodeFastSearch);
  // Files never take the fast path.
  InodeId f = w_.NewInode(w_.inode(d).sb, S_IFREG | 0777, 0, 0);
  EXPECT_FALSE(w_.inode(f).flags & vfs::kInodeFastSearch);
}

TEST_F(PermissionTest, FastSearchNeverChangesASearchResult) {
  // Wherever the World marks a directory "anyone may search" (the bit the
  // walk reads, on the inode and mirrored on its dentry), every caller
  // must pass the search check it skips: exhaustive over modes, with and
  // without ACLs, for the owner, a group member, a supplementary member
  // and a stranger, none with capabilities.
  const Cred callers[] = {User(1000, 1000), User(2000, 50), User(3000, 3000, {50}),
                          User(4000, 4000)};
  int fast = 0, name = 0;
  for (const char* acl : {"", "u:4000:---", "g:50:--x", "u:1:rwx"}) {
    for (uint32_t mode = 0; mode <= 07777; ++mode) {
      const InodeId d = Make(S_IFDIR | mode, 1000, 50, acl);
      vfs::World::WriteGuard g(w_);
      const vfs::DentryId de = w_.Link(w_.root().dentry, "d" + std::to_string(name++), d);
      const bool marked = w_.inode(d).flags & vfs::kInodeFastSearch;
      EXPECT_EQ(marked, (w_.dentry(de).flags & vfs::kDentryFastSearch) != 0) << std::oct << mode;
      if (!marked) continue;
      ++fast;
      for (const Cred& c : callers) EXPECT_EQ(Check(d, c, kX), 0) << std::oct << mode << " " << acl;
    }
  }
  // The marked directories are exactly those with every x bit and no ACL.
  EXPECT_EQ(fast, 512);
}

}  // namespace
}  // namespace pathwarden::perm
