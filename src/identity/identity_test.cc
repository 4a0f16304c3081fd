// Identities from flags, the user database and /proc.

#include "src/identity/identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace pathwarden::identity {
namespace {

IdentityOptions Uid(uint32_t uid) {
  IdentityOptions o;
  o.uid = uid;
  return o;
}

TEST(Identity, CapsByNameAnyCase) {
  EXPECT_EQ(*ParseCaps("CAP_DAC_OVERRIDE,chown"), CapBit(kCapDacOverride) | CapBit(kCapChown));
  EXPECT_EQ(*ParseCaps("Cap_Fowner"), CapBit(kCapFowner));
  EXPECT_EQ(*ParseCaps("none"), 0u);
  EXPECT_EQ(*ParseCaps("all"), kCapAll);
  EXPECT_EQ(ParseCaps("cap_bogus").error(),
            "\"cap_bogus\" is not a capability (like CAP_DAC_OVERRIDE or chown)");
  EXPECT_EQ(CapNames(CapBit(kCapChown) | CapBit(kCapFowner)), "CAP_CHOWN,CAP_FOWNER");
}

TEST(Identity, IdsGroupsAndUmask) {
  EXPECT_EQ(*ParseId("0", "--uid"), 0u);
  EXPECT_EQ(*ParseId("4294967294", "--uid"), 4294967294u);
  EXPECT_FALSE(ParseId("4294967295", "--uid"));
  EXPECT_FALSE(ParseId("-1", "--uid"));
  EXPECT_EQ(ParseId("x", "--gid").error(), "--gid \"x\" is not an id (0 to 4294967294)");
  EXPECT_EQ(*ParseGroups("27,1000"), (std::vector<uint32_t>{27, 1000}));
  EXPECT_TRUE(ParseGroups("none")->empty());
  EXPECT_FALSE(ParseGroups("1,,2"));
  EXPECT_EQ(*ParseUmask("027"), 027u);
  EXPECT_FALSE(ParseUmask("1000"));
}

TEST(Identity, ByUidFromTheUserDatabase) {
  // uid 0 is root everywhere: its gid, its groups, every capability.
  auto r = ResolveIdentity(Uid(0));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->cred.euid, 0u);
  EXPECT_EQ(r->cred.egid, 0u);
  EXPECT_EQ(r->cred.cap_effective, kCapAll);
  // Another uid has no capabilities; options given win.
  IdentityOptions o = Uid(65534);
  o.gid = 65534u;
  o.groups = std::vector<uint32_t>{};
  r = ResolveIdentity(o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->cred.cap_effective, 0u);
  EXPECT_TRUE(r->cred.groups().empty());
  o = Uid(1000);
  o.gid = 5u;
  o.caps = CapBit(kCapFowner);
  r = ResolveIdentity(o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->cred.egid, 5u);
  EXPECT_EQ(r->cred.cap_effective, CapBit(kCapFowner));
  // A uid nobody has needs --gid.
  EXPECT_EQ(ResolveIdentity(Uid(4123456789u)).error(),
            "uid 4123456789 is not in the user database: give --gid");
  IdentityOptions rel;
  rel.cwd = "relative";
  EXPECT_FALSE(ResolveIdentity(rel));
}

// --uid changes who asks, not where: the caller's working directory and
// umask stay (as sudo -u keeps them), unless --cwd or --umask say more.
TEST(Identity, ByUidKeepsTheCallersDirectoryAndUmask) {
  const mode_t old = umask(027);
  IdentityOptions o = Uid(65534);
  o.gid = 65534u;
  auto r = ResolveIdentity(o);
  umask(old);
  ASSERT_TRUE(r) << r.error();
  char* here = getcwd(nullptr, 0);
  ASSERT_NE(here, nullptr);
  EXPECT_EQ(r->cwd, here);
  std::free(here);
  EXPECT_EQ(r->cred.umask, 027u);
  o.cwd = "/etc";
  o.umask = 0u;
  r = ResolveIdentity(o);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->cwd, "/etc");
  EXPECT_EQ(r->cred.umask, 0u);
}

TEST(Identity, TheCallersOwnAndAProcesss) {
  auto self = ResolveIdentity(IdentityOptions{});
  ASSERT_TRUE(self) << self.error();
  EXPECT_EQ(self->cred.euid, geteuid());
  EXPECT_EQ(self->cred.egid, getegid());
  IdentityOptions mine;
  mine.pid = getpid();
  auto byPid = ResolveIdentity(mine);
  ASSERT_TRUE(byPid) << byPid.error();
  EXPECT_EQ(byPid->cred.euid, geteuid());
  EXPECT_EQ(byPid->mountinfo, "/proc/" + std::to_string(getpid()) + "/mountinfo");
  ASSERT_EQ(byPid->notes.size(), 1u);
  EXPECT_NE(byPid->notes[0].find("Landlock domain"), std::string::npos);
  IdentityOptions none;
  none.pid = 999999999;
  EXPECT_FALSE(ResolveIdentity(none));
}

TEST(Identity, UserNamespaceMapsAsUidMapTakesThem) {
  auto m = ParseIdMap("0:1000:1,1:100000:65536", "--userns");
  ASSERT_TRUE(m.has_value()) << m.error();
  EXPECT_EQ(*m, (std::vector<IdRange>{{0, 1000, 1}, {1, 100000, 65536}}));
  // What map_write() refuses, each with the range and where it starts.
  EXPECT_EQ(ParseIdMap("0:1000:1,5:6", "--userns").error(),
            "--userns: range 2 \"5:6\" at character 10: not INSIDE:OUTSIDE:COUNT (three ids)");
  EXPECT_EQ(ParseIdMap("0:1000:0", "--userns").error(),
            "--userns: range 1 \"0:1000:0\" at character 1: the count must be at least 1");
  EXPECT_EQ(ParseIdMap("0:4294967290:10", "--userns").error(),
            "--userns: range 1 \"0:4294967290:10\" at character 1: the range goes past id "
            "4294967294");
  EXPECT_EQ(ParseIdMap("0:1000:10,5:2000:1", "--userns").error(),
            "--userns: range 2 \"5:2000:1\" at character 11: it overlaps 0:1000:10 inside");
  EXPECT_EQ(ParseIdMap("0:1000:10,20:1005:1", "--userns").error(),
            "--userns: range 2 \"20:1005:1\" at character 11: it overlaps 0:1000:10 outside");
  EXPECT_FALSE(ParseIdMap("", "--userns").has_value());
  EXPECT_FALSE(ParseIdMap("a:1:1", "--userns").has_value());
  std::string many;
  for (int i = 0; i < 341; ++i) many += fmt::format("{}{}:{}:1", i ? "," : "", i, i);
  EXPECT_NE(ParseIdMap(many, "--userns").error().find("at most 340 ranges"), std::string::npos);
  many.resize(many.rfind(','));
  EXPECT_TRUE(ParseIdMap(many, "--userns").has_value());
}

TEST(Identity, InANewUserNamespace) {
  // unshare -r: the namespace's root, mapped onto uid 1000.
  IdentityOptions o;
  o.userns_uids = std::vector<IdRange>{{0, 1000, 1}};
  o.gid = 0;
  auto id = ResolveIdentity(o);
  ASSERT_TRUE(id.has_value()) << id.error();
  EXPECT_EQ(id->cred.euid, 1000u);
  EXPECT_EQ(id->cred.fsgid, 1000u);
  EXPECT_EQ(id->cred.cap_effective, kCapAll);
  ASSERT_NE(id->cred.userns, nullptr);
  EXPECT_FALSE(id->cred.userns->reader_inside);
  EXPECT_EQ(id->cred.userns->gid_map, id->cred.userns->uid_map);
  // A user of the namespace: its ids and groups through the maps, no
  // capabilities.
  o.uid = 5;
  o.gid = 5;
  o.groups = std::vector<uint32_t>{6};
  o.userns_uids = std::vector<IdRange>{{0, 100000, 65536}};
  id = ResolveIdentity(o);
  ASSERT_TRUE(id.has_value()) << id.error();
  EXPECT_EQ(id->cred.fsuid, 100005u);
  EXPECT_EQ(std::vector<uint32_t>(id->cred.groups().begin(), id->cred.groups().end()),
            std::vector<uint32_t>{100006});
  EXPECT_EQ(id->cred.cap_effective, 0u);
  // Ids it does not map, and a process's own namespace, are refused.
  o.groups = std::vector<uint32_t>{70000};
  EXPECT_EQ(ResolveIdentity(o).error(),
            "group 70000 has no mapping in --userns (uid_map 0 100000 65536; gid_map 0 100000 "
            "65536)");
  o.groups.reset();
  o.uid = 70000;
  EXPECT_NE(ResolveIdentity(o).error().find("uid 70000 has no mapping"), std::string::npos);
  o.uid = 5;
  o.pid = getpid();
  EXPECT_NE(ResolveIdentity(o).error().find("--userns and --pid"), std::string::npos);
}

TEST(ReadControllingTtyTest, CountsFieldsAfterTheName) {
  char dir[] = "/tmp/pw-stat-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string f = std::string(dir) + "/stat";
  auto write = [&](const std::string& text) {
    FILE* out = std::fopen(f.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(text.c_str(), out);
    std::fclose(out);
  };
  write("42 (a) b (c)) S 1 42 42 34816 42 4194560\n");
  EXPECT_EQ(ReadControllingTty(f), true);
  // A name holding a newline and what looks like the fields after it.
  write("42 (a) S 1 1 1 0\n) S 1 42 42 34816 42 4194560\n");
  EXPECT_EQ(ReadControllingTty(f), true);
  write("42 (sh) S 1 42 42 0 -1 4194560\n");
  EXPECT_EQ(ReadControllingTty(f), false);
  write("42 (sh S 1\n");
  EXPECT_EQ(ReadControllingTty(f), std::nullopt);
  EXPECT_EQ(ReadControllingTty(std::string(dir) + "/none"), std::nullopt);
  std::remove(f.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace pathwarden::identity
