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

TEST(AclText, AnAclIsItsSortedEntries) {
  PosixAcl acl = PosixAcl::FromMode(0750);
  acl.Modify({{AclTag::kGroup, 4, 50}, {AclTag::kUser, 6, 1001}});
  EXPECT_EQ(acl.ToText(), "u::rwx,u:1001:rw-,g::r-x,g:50:r--,m::rwx,o::---");
  EXPECT_EQ(acl.ToText(), AclEntriesToText(acl.entries()));
}

}  // namespace
}  // namespace pathwarden
