// The ACL's text form: entries as written, and a whole ACL, in one
// rendering that ParseEntries() reads back.

#include <gtest/gtest.h>

#include "pathwarden/acl.h"

namespace pathwarden {
namespace {

TEST(AclText, EntriesAreWrittenAsGivenNotCompleted) {
  const std::vector<AclEntry> entries = {
      {AclTag::kOther, 0, 0}, {AclTag::kUser, 5, 1001}, {AclTag::kMask, 7, 0}};
  EXPECT_EQ(AclEntriesToText(entries), "o::---,u:1001:r-x,m::rwx");
  EXPECT_EQ(AclEntriesToText({}), "");
  auto back = PosixAcl::ParseEntries(AclEntriesToText(entries));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, entries);
}

TEST(AclText, TheIdThatIsNoIdIsRefused) {
  // (uid_t)-1: Linux's make_kuid() of it is invalid, posix_acl_from_xattr()
  // answers EINVAL; the text form refuses it too, for users and groups.
  for (const char* text : {"u:4294967295:r--", "g:4294967295:rwx", "user:4294967295:---"}) {
    auto e = PosixAcl::ParseEntries(text);
    ASSERT_FALSE(e.has_value()) << text;
    EXPECT_NE(e.error().find("(uid_t)-1"), std::string::npos) << e.error();
  }
  // The id below it is an id like any other.
  auto ok = PosixAcl::ParseEntries("u:4294967294:r--");
  ASSERT_TRUE(ok.has_value()) << ok.error();
  EXPECT_EQ((*ok)[0].id, 4294967294u);
}

TEST(AclText, AnAclIsItsSortedEntries) {
  PosixAcl acl = PosixAcl::FromMode(0750);
  acl.Modify({{AclTag::kGroup, 4, 50}, {AclTag::kUser, 6, 1001}});
  EXPECT_EQ(acl.ToText(), "u::rwx,u:1001:rw-,g::r-x,g:50:r--,m::rwx,o::---");
  EXPECT_EQ(acl.ToText(), AclEntriesToText(acl.entries()));
}

TEST(AclXattr, RoundTripsAndRefusesAsLinuxDoes) {
  const std::vector<AclEntry> e = {{AclTag::kUserObj, 6, 0}, {AclTag::kUser, 4, 2000},
                                   {AclTag::kGroupObj, 4, 0}, {AclTag::kMask, 4, 0},
                                   {AclTag::kOther, 0, 0}};
  const std::string v = AclEntriesToXattr(e);
  EXPECT_EQ(v.size(), 4u + 5 * 8);
  EXPECT_EQ(v.substr(0, 4), std::string("\x02\0\0\0", 4));
  auto back = AclEntriesFromXattr(v);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, e);
  EXPECT_TRUE(AclEntriesFromXattr("")->empty());
  EXPECT_TRUE(AclEntriesFromXattr(std::string("\x02\0\0\0", 4))->empty());
  EXPECT_EQ(AclEntriesFromXattr("ab").error(), EINVAL);
  EXPECT_EQ(AclEntriesFromXattr(std::string("\x01\0\0\0", 4)).error(), EOPNOTSUPP);
  EXPECT_EQ(AclEntriesFromXattr(v.substr(0, v.size() - 1)).error(), EINVAL);
  std::string bad_tag = v;
  bad_tag[4] = 0x40;
  EXPECT_EQ(AclEntriesFromXattr(bad_tag).error(), EINVAL);
  // A named user of id (uid_t)-1 (bytes 8..11 of the second entry).
  std::string no_id = v;
  no_id.replace(4 + 8 + 4, 4, "\xff\xff\xff\xff");
  EXPECT_EQ(AclEntriesFromXattr(no_id).error(), EINVAL);
  // Read through an idmapped mount, that is an id the mount maps nowhere:
  // the entry is left out.
  auto dropped = AclEntriesFromXattr(no_id, /*drop_invalid_ids=*/true);
  ASSERT_TRUE(dropped);
  EXPECT_EQ(*dropped, (std::vector<AclEntry>{e[0], e[2], e[3], e[4]}));
}

TEST(AclXattr, ValidityIsPosixAclValid) {
  auto acl = AclFromValidEntries({{AclTag::kUserObj, 6, 0}, {AclTag::kUser, 4, 2000},
                                  {AclTag::kGroupObj, 4, 0}, {AclTag::kMask, 4, 0},
                                  {AclTag::kOther, 0, 0}});
  ASSERT_TRUE(acl);
  EXPECT_EQ(acl->ToText(), "u::rw-,u:2000:r--,g::r--,m::r--,o::---");
  // A mask alone is valid and kept.
  EXPECT_TRUE(AclFromValidEntries({{AclTag::kUserObj, 6, 0}, {AclTag::kGroupObj, 4, 0},
                                   {AclTag::kMask, 4, 0}, {AclTag::kOther, 0, 0}}));
  // Named entries need a mask; every base entry must be there, in order.
  EXPECT_EQ(AclFromValidEntries({{AclTag::kUserObj, 6, 0}, {AclTag::kUser, 4, 2000},
                                 {AclTag::kGroupObj, 4, 0}, {AclTag::kOther, 0, 0}})
                .error(),
            EINVAL);
  EXPECT_EQ(AclFromValidEntries({{AclTag::kUserObj, 6, 0}, {AclTag::kOther, 0, 0}}).error(),
            EINVAL);
  EXPECT_EQ(AclFromValidEntries({{AclTag::kGroupObj, 4, 0}, {AclTag::kUserObj, 6, 0},
                                 {AclTag::kOther, 0, 0}})
                .error(),
            EINVAL);
  EXPECT_EQ(AclFromValidEntries({{AclTag::kUserObj, 8, 0}, {AclTag::kGroupObj, 4, 0},
                                 {AclTag::kOther, 0, 0}})
                .error(),
            EINVAL);
  // Linux takes named entries out of order; this type cannot hold them.
  EXPECT_EQ(AclFromValidEntries({{AclTag::kUserObj, 6, 0}, {AclTag::kUser, 4, 2000},
                                 {AclTag::kUser, 4, 1000}, {AclTag::kGroupObj, 4, 0},
                                 {AclTag::kMask, 4, 0}, {AclTag::kOther, 0, 0}})
                .error(),
            kAclOutsideModel);
}

}  // namespace
}  // namespace pathwarden
