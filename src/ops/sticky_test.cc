// The sticky-directory rules one by one, through the library: who may
// remove or rename an entry of a sticky directory (may_delete() and
// __check_sticky()), and the O_CREAT hardening of protected_regular and
// protected_fifos (may_create_in_sticky()). Each expectation was checked
// on the kernel (tests/scenarios/vfs/sticky*.toml run the same cases).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "pathwarden/model.h"

namespace pathwarden {
namespace {

// A sticky /tmp (1777, root) with files of alice (1000) and bob (2000),
// /alicetmp (1777, alice's) with a file of bob's, /group (1770 root:50)
// and /searchable (1771 root:50); alice, bob (in group 50), a process
// with only CAP_FOWNER and one with only CAP_DAC_OVERRIDE.
class Sticky : public ::testing::Test {
 protected:
  void SetUp() override {
    const Node root = m.Root();
    const Node tmp = *m.Mkdir(root, "tmp", {.mode = 01777});
    (void)*m.Create(tmp, "alice", {}, {.mode = 0666, .uid = 1000, .gid = 1000});
    (void)*m.Create(tmp, "bob", {}, {.mode = 0666, .uid = 2000, .gid = 2000});
    (void)*m.Create(tmp, "alice-fifo", {.type = FileType::kFifo},
                    {.mode = 0666, .uid = 1000, .gid = 1000});
    const Node alicetmp = *m.Mkdir(root, "alicetmp", {.mode = 01777, .uid = 1000, .gid = 1000});
    (void)*m.Create(alicetmp, "bob", {}, {.mode = 0666, .uid = 2000, .gid = 2000});
    const Node group = *m.Mkdir(root, "group", {.mode = 01770, .gid = 50});
    (void)*m.Create(group, "alice", {}, {.mode = 0666, .uid = 1000, .gid = 50});
    const Node searchable = *m.Mkdir(root, "searchable", {.mode = 01771, .gid = 50});
    (void)*m.Create(searchable, "bob", {}, {.mode = 0666, .uid = 2000, .gid = 50});

    alice = m.Spawn("alice", Cred::ForUser(1000, 1000));
    Cred b = Cred::ForUser(2000, 2000);
    b.SetGroups({50});
    bob = m.Spawn("bob", b);
    fowner = m.Spawn("fowner", WithOnly(3000, kCapFowner));
    override_ = m.Spawn("override", WithOnly(4000, kCapDacOverride));
  }

  static Cred WithOnly(uint32_t uid, int cap) {
    Cred c = Cred::ForUser(uid, uid);
    c.cap_effective = c.cap_permitted = CapBit(cap);
    return c;
  }

  int Unlink(Process p, std::string path) {
    return m.Evaluate(p, pathwarden::Unlink{.path = std::move(path)}).err();
  }
  int Rename(Process p, std::string from, std::string to) {
    return m.Evaluate(p, pathwarden::Rename{.oldpath = std::move(from), .newpath = std::move(to)})
        .err();
  }
  int OpenCreat(Process p, std::string path, uint64_t acc = O_WRONLY) {
    return m.Evaluate(p, Open{.path = std::move(path), .flags = acc | O_CREAT}).err();
  }

  Model m;
  Process alice, bob, fowner, override_;
};

TEST_F(Sticky, OthersCannotRemoveAnEntryTheyDoNotOwn) {
  const Decision d = m.Evaluate(bob, pathwarden::Unlink{.path = "/tmp/alice"});
  EXPECT_EQ(d.err(), EPERM);
  EXPECT_EQ(d.stage(), Stage::kSticky);
}

TEST_F(Sticky, TheEntrysOwnerMayRemoveIt) { EXPECT_EQ(Unlink(bob, "/tmp/bob"), 0); }

TEST_F(Sticky, TheDirectorysOwnerMayRemoveAnyEntry) {
  EXPECT_EQ(Unlink(alice, "/alicetmp/bob"), 0);
}

TEST_F(Sticky, CapFownerOverridesTheRule) { EXPECT_EQ(Unlink(fowner, "/tmp/alice"), 0); }

TEST_F(Sticky, CapDacOverrideDoesNotOverrideTheRule) {
  EXPECT_EQ(Unlink(override_, "/tmp/alice"), EPERM);
}

TEST_F(Sticky, RenamingSomeoneElsesEntryAwayIsRefused) {
  EXPECT_EQ(Rename(bob, "/tmp/alice", "/tmp/mine"), EPERM);
}

TEST_F(Sticky, ReplacingSomeoneElsesEntryIsRefused) {
  EXPECT_EQ(Rename(bob, "/tmp/bob", "/tmp/alice"), EPERM);
}

TEST_F(Sticky, WritePermissionOnTheDirectoryComesFirst) {
  // /searchable is 1771 root:50: alice, "other", may search it but not
  // write it, so may_delete() refuses with EACCES before the sticky rule
  // would refuse bob's file with EPERM (checked on the kernel).
  const Decision d = m.Evaluate(alice, pathwarden::Unlink{.path = "/searchable/bob"});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kDac);
  // /group is 1770: the walk itself refuses her.
  const Decision walk = m.Evaluate(alice, pathwarden::Unlink{.path = "/group/alice"});
  EXPECT_EQ(walk.err(), EACCES);
  EXPECT_EQ(walk.stage(), Stage::kWalk);
}

TEST_F(Sticky, ProtectedRegularBindsEvenDacOverride) {
  EXPECT_EQ(OpenCreat(override_, "/tmp/alice"), 0);
  m.SetSysctls({.protected_regular = 1});
  const Decision d = m.Evaluate(override_, Open{.path = "/tmp/alice", .flags = O_WRONLY | O_CREAT});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kProtected);
}

TEST_F(Sticky, ProtectedRegularTwoAlsoCoversGroupWritableDirectories) {
  m.SetSysctls({.protected_regular = 1});
  EXPECT_EQ(OpenCreat(bob, "/group/alice"), 0);
  m.SetSysctls({.protected_regular = 2});
  EXPECT_EQ(OpenCreat(bob, "/group/alice"), EACCES);
}

TEST_F(Sticky, ProtectedFifosIsSeparateFromProtectedRegular) {
  m.SetSysctls({.protected_regular = 2});
  EXPECT_EQ(OpenCreat(bob, "/tmp/alice-fifo", O_RDWR), 0);
  m.SetSysctls({.protected_fifos = 1});
  EXPECT_EQ(OpenCreat(bob, "/tmp/alice-fifo", O_RDWR), EACCES);
}

}  // namespace
}  // namespace pathwarden
