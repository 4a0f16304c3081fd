// Extended attributes of an inode other than its POSIX ACLs (user.*,
// trusted.*, security.*), as tmpfs keeps them (a simple_xattrs set):
// one immutable encoded string per set, so that a reader racing the
// writer always reads a whole set, old or new.
// Linux: fs/xattr.c simple_xattr_set(), simple_xattr_list(); mm/shmem.c

#ifndef PATHWARDEN_SRC_VFS_XATTR_H_
#define PATHWARDEN_SRC_VFS_XATTR_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pathwarden::vfs {

// The namespaces of attribute names, by prefix.
enum class XattrNs { kSecurity, kSystem, kTrusted, kUser, kOther };
inline constexpr std::string_view kXattrNameCaps = "security.capability";
inline constexpr std::string_view kXattrNameAclAccess = "system.posix_acl_access";
inline constexpr std::string_view kXattrNameAclDefault = "system.posix_acl_default";

// NamespaceOf() / PrefixOf()
//
// The namespace of a name ("user.x": kUser), and its prefix ("user.").
XattrNs NamespaceOf(std::string_view name);
std::string_view PrefixOf(XattrNs ns);

// IsPosixAclName()
//
// system.posix_acl_access or system.posix_acl_default, exactly
// (is_posix_acl_xattr()).
inline bool IsPosixAclName(std::string_view name) {
  return name == kXattrNameAclAccess || name == kXattrNameAclDefault;
}

// XattrMap
//
// Name to value, by name.
using XattrMap = std::map<std::string, std::string, std::less<>>;

// EncodeXattrs() / DecodeXattrs()
//
// The set as one string (per entry: name length, name, value length,
// value; lengths as 4 bytes), and back. Decoding stops at anything
// malformed (it never reads out of bounds).
std::string EncodeXattrs(const XattrMap& m);
XattrMap DecodeXattrs(std::string_view encoded);

// FindXattr()
//
// The value of `name` in an encoded set, without decoding the rest.
std::optional<std::string_view> FindXattr(std::string_view encoded, std::string_view name);

// XattrRead
//
// One attribute as getxattr() reads it back: its value, or the error the
// read gives (`err`, an errno name such as "EINVAL", when not empty).
struct XattrRead {
  std::string name, value, err;
};

// XattrsText()
//
// How trees show a set (TreeEntry::xattrs): `name="value"` (or
// `name=<ERR>`) by name, joined by ", ", with quotes, backslashes and
// bytes outside printable ASCII escaped as \xHH. The engine's snapshot
// and the kernel's capture both render through it, so equal sets compare
// equal. SnapshotXattrs() reads an encoded set as root would: a
// security.capability without a valid header reads as EINVAL
// (cap_inode_getsecurity()).
std::string XattrsText(std::vector<XattrRead> reads);
std::string SnapshotXattrs(std::string_view encoded);

// ValidFileCaps()
//
// The header check of a security.capability value (cap_convert_nscap(),
// cap_inode_getsecurity()): a v2 one (20 bytes), or a v3 one (24 bytes),
// whose root id *v3_root is then set.
bool ValidFileCaps(std::string_view v, uint32_t* v3_root);

}  // namespace pathwarden::vfs

#endif  // PATHWARDEN_SRC_VFS_XATTR_H_
