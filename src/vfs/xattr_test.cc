// Encoded xattr sets, their rendering, and the file capability header.

#include "src/vfs/xattr.h"

#include <gtest/gtest.h>

#include "src/vfs/world.h"

namespace pathwarden::vfs {
namespace {

TEST(XattrSet, EncodesAndFindsByName) {
  XattrMap m{{"user.a", "1"}, {"trusted.b", std::string("\0x", 2)}, {"user.empty", ""}};
  const std::string enc = EncodeXattrs(m);
  EXPECT_EQ(DecodeXattrs(enc), m);
  EXPECT_EQ(FindXattr(enc, "user.a"), std::optional<std::string_view>("1"));
  EXPECT_EQ(FindXattr(enc, "user.empty"), std::optional<std::string_view>(""));
  EXPECT_FALSE(FindXattr(enc, "user.b").has_value());
  EXPECT_TRUE(EncodeXattrs({}).empty());
}

TEST(XattrSet, MalformedInputStopsWithoutReadingPastTheEnd) {
  const std::string enc = EncodeXattrs({{"user.a", "1"}, {"user.b", "2"}});
  for (size_t cut = 0; cut < enc.size(); ++cut) {
    const XattrMap m = DecodeXattrs(std::string_view(enc).substr(0, cut));
    EXPECT_LE(m.size(), 1u) << cut;
  }
}

TEST(XattrSet, TextEscapesAndShowsErrors) {
  EXPECT_EQ(XattrsText({{"user.b", "x\"\\\x01", ""}, {"user.a", "", "ENODATA"}}),
            "user.a=<ENODATA>, user.b=\"x\\\"\\\\\\x01\"");
  // An empty security.capability reads back as EINVAL, a v2 one as bytes.
  std::string v2(20, '\0');
  v2[3] = 2;
  EXPECT_EQ(SnapshotXattrs(EncodeXattrs({{"security.capability", ""}})),
            "security.capability=<EINVAL>");
  EXPECT_EQ(SnapshotXattrs(EncodeXattrs({{"security.capability", v2}})),
            "security.capability=\"" + std::string("\\x00\\x00\\x00\\x02") +
                [] {
                  std::string s;
                  for (int i = 0; i < 16; ++i) s += "\\x00";
                  return s;
                }() + "\"");
}

TEST(XattrSet, FileCapabilityHeaders) {
  uint32_t root = 7;
  std::string v2(20, '\0');
  v2[3] = 2;
  EXPECT_TRUE(ValidFileCaps(v2, &root));
  EXPECT_EQ(root, 0u);
  v2[0] = 1;  // VFS_CAP_FLAGS_EFFECTIVE
  EXPECT_TRUE(ValidFileCaps(v2, &root));
  v2[0] = 2;  // another flag
  EXPECT_FALSE(ValidFileCaps(v2, &root));
  std::string v3(24, '\0');
  v3[3] = 3;
  v3[20] = 5;
  EXPECT_TRUE(ValidFileCaps(v3, &root));
  EXPECT_EQ(root, 5u);
  EXPECT_FALSE(ValidFileCaps(v3.substr(0, 20), &root));
  EXPECT_FALSE(ValidFileCaps("", &root));
}

TEST(XattrSet, NamespacesByPrefix) {
  EXPECT_EQ(NamespaceOf("user.x"), XattrNs::kUser);
  EXPECT_EQ(NamespaceOf("trusted."), XattrNs::kTrusted);
  EXPECT_EQ(NamespaceOf("security.capability"), XattrNs::kSecurity);
  EXPECT_EQ(NamespaceOf("system.posix_acl_access"), XattrNs::kSystem);
  EXPECT_EQ(NamespaceOf("user"), XattrNs::kOther);
  EXPECT_TRUE(IsPosixAclName("system.posix_acl_default"));
  EXPECT_FALSE(IsPosixAclName("system.posix_acl_accessx"));
}

TEST(XattrWorld, SetsLiveBesideInodesAndGoWithThem) {
  World w;
  const InodeId root = w.inode_of(w.root().dentry);
  EXPECT_TRUE(w.xattrs(root).empty());
  w.SetXattrs(root, EncodeXattrs({{"user.a", "1"}}));
  EXPECT_EQ(FindXattr(w.xattrs(root), "user.a"), std::optional<std::string_view>("1"));
  w.SetXattrs(root, EncodeXattrs({{"user.a", "2"}}));
  EXPECT_EQ(FindXattr(w.xattrs(root), "user.a"), std::optional<std::string_view>("2"));
  w.SetXattrs(root, {});
  EXPECT_TRUE(w.xattrs(root).empty());
}

}  // namespace
}  // namespace pathwarden::vfs
