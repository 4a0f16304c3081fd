// Extended attributes, fallocate and the fd forms of chmod, chown and
// utimens through the library. Each expectation was checked on the kernel
// (tests/scenarios/xattr/ and tests/scenarios/fdattr/ run the same rules).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "pathwarden/model.h"
#include "pathwarden/tree.h"

namespace pathwarden {
namespace {

class Xattr : public ::testing::Test {
 protected:
  void SetUp() override {
    const Node root = m.Root();
    (void)*m.Create(root, "f", {}, {.mode = 0644, .uid = 1000, .gid = 1000});
    (void)*m.Create(root, "suid", {}, {.mode = 06775, .uid = 1000, .gid = 1000});
    (void)*m.Mkdir(root, "sticky", {.mode = 01777, .uid = 0, .gid = 0});
    (void)*m.Create(root, "fifo", {.type = FileType::kFifo}, {.mode = 0666});
    alice = m.Spawn("alice", Cred::ForUser(1000, 1000));
    bob = m.Spawn("bob", Cred::ForUser(2000, 2000));
  }
  int Set(Process p, std::string path, std::string name, std::string value = "v",
          uint32_t xflags = 0) {
    return m.Apply(p, Setxattr{.path = std::move(path), .name = std::move(name),
                               .value = std::move(value), .xattr_flags = xflags})
        .err();
  }
  int Get(Process p, std::string path, std::string name) {
    return m.Evaluate(p, Getxattr{.path = std::move(path), .name = std::move(name)}).err();
  }
  std::string XattrsOf(const std::string& path) {
    const std::vector<TreeEntry> t = m.Snapshot();
    const long i = TreeIndex(t, path);
    return i < 0 ? "?" : t[i].xattrs;
  }
  std::string AclOf(const std::string& path, uint32_t* mode) {
    const std::vector<TreeEntry> t = m.Snapshot();
    const long i = TreeIndex(t, path);
    if (i < 0) return "?";
    *mode = t[i].mode;
    return t[i].acl;
  }

  Model m;
  Process alice, bob;
};

TEST_F(Xattr, UserNamespaceFollowsTheModeBits) {
  EXPECT_EQ(Get(alice, "/f", "user.a"), ENODATA);
  EXPECT_EQ(Set(alice, "/f", "user.a", "1"), 0);
  EXPECT_EQ(Get(alice, "/f", "user.a"), 0);
  EXPECT_EQ(Get(bob, "/f", "user.a"), 0);               // 0644: others read
  EXPECT_EQ(Set(bob, "/f", "user.a", "2"), EACCES);     // and do not write
  EXPECT_EQ(Set(alice, "/f", "user.a", "3", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Set(alice, "/f", "user.b", "3", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(XattrsOf("/f"), "user.a=\"1\"");
  EXPECT_EQ(m.Apply(alice, Removexattr{.path = "/f", .name = "user.a"}).err(), 0);
  EXPECT_EQ(m.Apply(alice, Removexattr{.path = "/f", .name = "user.a"}).err(), ENODATA);
  EXPECT_EQ(XattrsOf("/f"), "");
}

TEST_F(Xattr, NamespacesAndNames) {
  EXPECT_EQ(Set(alice, "/f", "trusted.a"), EPERM);
  EXPECT_EQ(Get(alice, "/f", "trusted.a"), ENODATA);
  EXPECT_EQ(Set(Process{0}, "/f", "trusted.a"), 0);
  EXPECT_EQ(Set(alice, "/f", "security.a"), EPERM);
  {
    // An empty file capability is where kernel builds differ
    // (pathwarden/kernel_rules.h): mainline's rule here, the other in
    // tests/api/kernel_rules_test.cc.
    m.SetKernelRules({.empty_file_caps = EmptyFileCaps::kStored});
    EXPECT_EQ(Set(alice, "/f", "security.capability", ""), 0);  // no header check when empty
    EXPECT_EQ(Get(alice, "/f", "security.capability"), EINVAL);
    m.SetKernelRules({.empty_file_caps = EmptyFileCaps::kRefused});
    EXPECT_EQ(Set(alice, "/f", "security.capability", ""), EINVAL);
    m.SetKernelRules(RunningKernelRules());
  }
  EXPECT_EQ(Set(alice, "/f", "security.capability", "xx"), EINVAL);
  EXPECT_EQ(Set(alice, "/f", "system.foo"), EOPNOTSUPP);
  EXPECT_EQ(Set(alice, "/f", "foo.bar"), EOPNOTSUPP);
  EXPECT_EQ(Set(alice, "/f", "user."), EINVAL);
  EXPECT_EQ(Set(alice, "/f", ""), ERANGE);
  EXPECT_EQ(Set(alice, "/f", "user." + std::string(251, 'x')), ERANGE);
  EXPECT_EQ(Set(alice, "/f", "user.big", std::string(65537, 'x')), E2BIG);
  EXPECT_EQ(Set(alice, "/fifo", "user.a"), EPERM);
  EXPECT_EQ(Get(alice, "/fifo", "user.a"), ENODATA);
  EXPECT_EQ(Set(alice, "/sticky", "user.a"), EPERM);
  EXPECT_EQ(Set(Process{0}, "/sticky", "user.a"), 0);
}

TEST_F(Xattr, AccessAclThroughTheXattrMovesTheMode) {
  const std::string acl = AclEntriesToXattr({{AclTag::kUserObj, 6, 0},
                                             {AclTag::kUser, 4, 2000},
                                             {AclTag::kGroupObj, 4, 0},
                                             {AclTag::kMask, 4, 0},
                                             {AclTag::kOther, 0, 0}});
  EXPECT_EQ(Set(bob, "/f", "system.posix_acl_access", acl), EPERM);  // not the owner
  EXPECT_EQ(Set(alice, "/f", "system.posix_acl_access", acl), 0);
  uint32_t mode = 0;
  EXPECT_EQ(AclOf("/f", &mode), "u::rw-,u:2000:r--,g::r--,m::r--,o::---");
  EXPECT_EQ(mode, 0640u);
  EXPECT_EQ(Get(bob, "/f", "system.posix_acl_access"), 0);
  EXPECT_EQ(Set(alice, "/f", "system.posix_acl_default", acl), EACCES);  // not a directory
  EXPECT_EQ(Set(alice, "/f", "system.posix_acl_access", "\x02"), EINVAL);
  EXPECT_EQ(Set(alice, "/f", "system.posix_acl_access", std::string("\x01\0\0\0", 4)), EOPNOTSUPP);
  EXPECT_EQ(m.Apply(alice, Removexattr{.path = "/f", .name = "system.posix_acl_access"}).err(), 0);
  EXPECT_EQ(AclOf("/f", &mode), "");
}

TEST_F(Xattr, FallocateNeedsAWritableFdAndDropsSetuid) {
  const Decision ro = m.Apply(alice, Open{.path = "/suid", .flags = O_RDONLY});
  ASSERT_EQ(ro.err(), 0);
  EXPECT_EQ(m.Evaluate(alice, Fallocate{.fd = ro.fd(), .len = 10}).err(), EBADF);
  const Decision rw = m.Apply(alice, Open{.path = "/suid", .flags = O_RDWR});
  ASSERT_EQ(rw.err(), 0);
  EXPECT_EQ(m.Evaluate(alice, Fallocate{.fd = rw.fd(), .mode = FALLOC_FL_PUNCH_HOLE}).err(),
            EOPNOTSUPP);
  EXPECT_EQ(m.Evaluate(alice, Fallocate{.fd = rw.fd(), .len = 0}).err(), EINVAL);
  EXPECT_EQ(m.Apply(alice, Fallocate{.fd = rw.fd(), .mode = FALLOC_FL_KEEP_SIZE, .len = 10}).err(),
            0);
  uint32_t mode = 0;
  (void)AclOf("/suid", &mode);
  EXPECT_EQ(mode, 0775u);
  EXPECT_EQ(m.Apply(alice, Fchmod{.fd = rw.fd(), .mode = 0600}).err(), 0);
  (void)AclOf("/suid", &mode);
  EXPECT_EQ(mode, 0600u);
  EXPECT_EQ(m.Evaluate(bob, Fchmod{.fd = rw.fd(), .mode = 0600}).err(), EBADF);  // not bob's fd
  EXPECT_EQ(m.Evaluate(alice, Fchown{.fd = rw.fd(), .uid = 2000}).err(), EPERM);
  EXPECT_EQ(m.Evaluate(alice, Futimens{.fd = rw.fd()}).err(), 0);
}

}  // namespace
}  // namespace pathwarden
