// File: pathwarden/acl.h
//
// POSIX access control lists as Linux stores them on tmpfs: a canonical,
// sorted list of entries (owner, named users, owning group, named groups,
// mask, other). Parsed from and printed in setfacl's short text form:
//
//   u::rw-,u:1001:r-x,g::r--,g:50:rwx,m::r-x,o::---
//
// The permission walk over an ACL lives in the engine (src/perm); this
// header is the value type and the mode arithmetic Linux does on ACLs.

#ifndef PATHWARDEN_ACL_H_
#define PATHWARDEN_ACL_H_

#include <cstdint>
#include "pathwarden/result.h"
#include <string>
#include <string_view>
#include <vector>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Tags, ordered as Linux sorts them (include/uapi/linux/posix_acl.h values).
enum class AclTag : uint8_t {
  kUserObj = 0x01,
  kUser = 0x02,
  kGroupObj = 0x04,
  kGroup = 0x08,
  kMask = 0x10,
  kOther = 0x20,
};

// kAclNoId
//
// (uid_t)-1: no user or group has it; Linux refuses it as an ACL
// qualifier (EINVAL), so no reader here accepts it.
inline constexpr uint32_t kAclNoId = 0xffffffffu;

struct AclEntry {
  AclTag tag;
  uint8_t perm;  // rwx as 4|2|1
  uint32_t id;   // qualifier for kUser/kGroup, else 0
  friend bool operator==(const AclEntry&, const AclEntry&) = default;
};

// PosixAcl
//
// Always valid when built through the functions below: exactly one owner,
// owning-group and other entry, a mask whenever there are named entries,
// named entries sorted by qualifier and unique.
class PosixAcl {
 public:
  // FromMode()
  //
  // The three-entry ACL equivalent to the permission bits of `mode`.
  static PosixAcl FromMode(uint32_t mode);

  // ParseEntries()
  //
  // Parses the short text form into a list of entries (not yet an ACL).
  // A qualifier of kAclNoId is an error, as Linux refuses it.
  static Result<std::vector<AclEntry>, std::string> ParseEntries(
      std::string_view text);

  // Modify()
  //
  // As `setfacl -m`: each entry replaces the one with the same tag and
  // qualifier or is added; unless `entries` sets the mask explicitly, the
  // mask is recomputed as the union of the group class (when the ACL has
  // named entries or a mask).
  void Modify(const std::vector<AclEntry>& entries);

  // IsMinimal()
  //
  // Only owner, owning group and other: the ACL says no more than a mode.
  bool IsMinimal() const noexcept { return entries_.size() == 3; }

  // EquivMode()
  //
  // Linux: fs/posix_acl.c posix_acl_equiv_mode(). Replaces the permission
  // bits of *mode by the ACL's (owner, mask or owning group, other) and
  // returns whether the ACL is equivalent to a mode: no named entries and
  // no mask (a mask alone keeps the ACL, as in Linux).
  bool EquivMode(uint32_t* mode) const noexcept;

  // Chmod()
  //
  // Linux: fs/posix_acl.c __posix_acl_chmod(): owner, mask (or owning
  // group when there is no mask) and other take the bits of `mode`.
  void Chmod(uint32_t mode) noexcept;

  // CreateMasq()
  //
  // Linux: fs/posix_acl.c posix_acl_create_masq(): masks a parent's default
  // ACL by the requested `*mode` for a new inode and narrows *mode to
  // match. Returns whether the result needs an ACL (is not equivalent to a
  // mode).
  bool CreateMasq(uint32_t* mode) noexcept;

  const std::vector<AclEntry>& entries() const noexcept { return entries_; }
  std::string ToText() const;
  friend bool operator==(const PosixAcl&, const PosixAcl&) = default;

 private:
  void Sort();
  AclEntry* Find(AclTag tag, uint32_t id = 0) noexcept;
  const AclEntry* Find(AclTag tag, uint32_t id = 0) const noexcept;

  std::vector<AclEntry> entries_;
};

// PermString()
//
// "r-x" for 5.
std::string PermString(uint32_t perm);

// AclEntriesToText()
//
// The short text form of entries as they are, in their order, not
// completed to an ACL (a scenario's `acl = "u:1001:r-x"`); what
// PosixAcl::ParseEntries() reads back, and PosixAcl::ToText() of an ACL's
// entries.
//
// Example:
//   AclEntriesToText({{AclTag::kUser, 5, 1001}})  // "u:1001:r-x"
std::string AclEntriesToText(const std::vector<AclEntry>& entries);

// AclEntriesFromXattr() / AclEntriesToXattr()
//
// The entries of a system.posix_acl_access or _default value, in the
// binary form the xattr calls carry (include/uapi/linux/posix_acl_xattr.h:
// a version word 2, then {tag, perm, id} per entry, little-endian), as they
// are (not validated as an ACL), and back. The error is the errno Linux's
// posix_acl_from_xattr() gives: EINVAL for a short or ragged value, an
// unknown tag or the invalid id (uid_t)-1, EOPNOTSUPP for another version.
// An empty value, or one with no entries, is an empty list: the call
// removes the ACL. `drop_invalid_ids`: a named entry of (uid_t)-1 is left
// out instead, as getxattr() through an idmapped mount shows an id the
// mount maps nowhere (such an entry matches no one).
Result<std::vector<AclEntry>, int> AclEntriesFromXattr(std::string_view value,
                                                      bool drop_invalid_ids = false);
std::string AclEntriesToXattr(const std::vector<AclEntry>& entries);

// AclFromValidEntries()
//
// The ACL of entries as Linux's posix_acl_valid() checks them (EINVAL
// unless: one owner entry first, named users, the owning group, named
// groups, then a mask, required with named entries, and other last;
// permissions within rwx). Entries Linux accepts but this type cannot
// hold (named entries out of order, or twice) are kAclOutsideModel, no
// errno: the caller cannot know what Linux then decides.
inline constexpr int kAclOutsideModel = -1;
Result<PosixAcl, int> AclFromValidEntries(const std::vector<AclEntry>& entries);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_ACL_H_
