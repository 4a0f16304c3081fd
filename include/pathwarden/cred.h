// File: pathwarden/cred.h
//
// Credentials of a modelled process: the ids Linux checks (real, effective,
// saved and filesystem uid and gid), supplementary groups, the effective
// capability set, and the umask.
//
// Example:
//   Cred c = Cred::ForUser(1000, 1000);
//   c.SetGroups({50, 100});
//   c.cap_effective |= CapBit(CAP_DAC_READ_SEARCH);

#ifndef PATHWARDEN_CRED_H_
#define PATHWARDEN_CRED_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include "pathwarden/export.h"
#include "pathwarden/result.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Capability numbers are Linux's (<linux/capability.h>): CAP_CHOWN is 0.
inline constexpr int kCapChown = 0;
inline constexpr int kCapDacOverride = 1;
inline constexpr int kCapDacReadSearch = 2;
inline constexpr int kCapFowner = 3;
inline constexpr int kCapFsetid = 4;
inline constexpr int kCapKill = 5;
inline constexpr int kCapSetgid = 6;
inline constexpr int kCapSetuid = 7;
inline constexpr int kCapLinuxImmutable = 9;
inline constexpr int kCapNetBindService = 10;
inline constexpr int kCapNetAdmin = 12;
inline constexpr int kCapSysChroot = 18;
inline constexpr int kCapSysAdmin = 21;
inline constexpr int kCapSysResource = 24;
inline constexpr int kCapMknod = 27;
inline constexpr int kCapSetfcap = 31;
inline constexpr int kCapLast = 40;  // CAP_CHECKPOINT_RESTORE
inline constexpr uint64_t kCapAll = (uint64_t{1} << (kCapLast + 1)) - 1;

constexpr uint64_t CapBit(int cap) { return uint64_t{1} << cap; }

// CapFromName()
//
// "CAP_DAC_OVERRIDE" (or "cap_dac_override") to its number, via libcap.
std::optional<int> CapFromName(std::string_view name);

// CapName()
//
// The canonical upper-case name ("CAP_DAC_OVERRIDE").
std::string CapName(int cap);

// IdRange
//
// One line of a user namespace's uid_map or gid_map: `count` ids from
// `inside` (the namespace's own) onto ids from `outside` (its parent's).
struct IdRange {
  uint32_t inside = 0, outside = 0, count = 0;
  friend bool operator==(const IdRange&, const IdRange&) = default;
};

// IdOutside(), IdInside()
//
// An id through a map: the namespace's own `inside` id as its parent sees
// it, and back; none where no range covers it.
// Linux: kernel/user_namespace.c map_id_down(), map_id_up()
std::optional<uint32_t> IdOutside(std::span<const IdRange> map, uint32_t inside) noexcept;
std::optional<uint32_t> IdInside(std::span<const IdRange> map, uint32_t outside) noexcept;

// UserNamespace
//
// The user namespace credentials live in, when it is not the initial one
// (rootless containers, bubblewrap, Flatpak, `unshare -r`). There a
// capability counts in the namespace and its descendants only
// (ns_capable()); on an inode only when the inode's owner and group map
// into the namespace (capable_wrt_inode_uidgid()); capable() (the initial
// namespace's) never. Ids that do not map are refused where a call names
// them (chown: EINVAL) and shown as the overflow ids.
//
// The ids of a model are the reader's (the host as this process sees
// it). Whether an inode's ids map is then known exactly when the reader
// is inside the namespace (an id shown as itself maps; one shown as the
// overflow id does not, unless the namespace maps the overflow id too)
// or in the initial one (the maps' outside ids are the kernel's). What
// the model cannot know -- such an overflow id, a reader in a third
// namespace, a capability over a namespace the model does not hold (a
// mount's, a network's) -- is decided by `lenient`: the model answers
// with it false and true, and the answer stands only when both agree
// (capabilities only grant), else it is unknown.
struct UserNamespace {
  std::vector<IdRange> uid_map, gid_map;
  // Whether the ids a request names (chown's) and the ids read on the
  // host are the namespace's own: the reader is inside it.
  bool reader_inside = true;
  // Whether the reader (this process) is itself in a user namespace
  // other than the initial one, so that the host shows every id that does
  // not map into it as the overflow ids (/proc/sys/kernel/overflowuid,
  // overflowgid): an inode shown with them may be owned by anyone
  // unmapped.
  bool overflow_shown = false;
  uint32_t overflow_uid = 65534, overflow_gid = 65534;
  // The euid that made it (the reader's id; none: not known): a process
  // of the parent namespace with that euid has every capability in it.
  // Linux: security/commoncap.c cap_capable()
  std::optional<uint32_t> owner;
  // How what the model cannot know is taken (above): as granting.
  bool lenient = false;

  // MapsUid(), MapsGid(): `id` (the namespace's own) has a mapping.
  bool MapsUid(uint32_t id) const noexcept;
  bool MapsGid(uint32_t id) const noexcept;
  // ShownUidMaps(), ShownGidMaps(): `id`, as the reader sees it (an
  // inode's owner, an id a request names), maps into the namespace; where
  // that cannot be known, `lenient`.
  bool ShownUidMaps(uint32_t id) const noexcept;
  bool ShownGidMaps(uint32_t id) const noexcept;
  // NamedUidMaps(), NamedGidMaps(): `id`, as a request names it (the
  // namespace's own when the reader is inside, else the reader's), maps
  // into the namespace; where that cannot be known, `lenient`.
  bool NamedUidMaps(uint32_t id) const noexcept;
  bool NamedGidMaps(uint32_t id) const noexcept;
  // ShownIsRoot(): `uid`, as the reader sees it, is the namespace's uid
  // 0; where that cannot be known, `lenient`.
  bool ShownIsRoot(uint32_t uid) const noexcept;
  // "uid_map 0 1000 1; gid_map 0 1000 1"
  std::string Describe() const;
};

// ParseIdMap()
//
// A --userns map: "INSIDE:OUTSIDE:COUNT" ranges joined by commas, as
// uid_map takes them. Errors, with the range's position: not three ids,
// a count of 0, a range past 4294967294, ranges that overlap inside or
// outside, more than 340 ranges (the kernel refuses each).
// Linux: kernel/user_namespace.c map_write(), mappings_overlap()
Result<std::vector<IdRange>, std::string> ParseIdMap(std::string_view text, std::string_view what);

// ReadUserNamespace()
//
// The user namespace of /proc/PID (`proc`, "/proc/self" for this
// process): null for the initial one (uid_map and gid_map
// "0 0 4294967295"), else its maps, whether this process reads from
// inside it (the same /proc/PID/ns/user as its own), whether this process
// is itself outside the initial one (overflow_shown), and the overflow ids
// (/proc/sys/kernel/overflowuid, overflowgid). Errors: a map unreadable or
// malformed.
Result<std::shared_ptr<const UserNamespace>, std::string> ReadUserNamespace(
    const std::string& proc);

// Cred
//
// A value type; copying shares the (immutable) group list and user
// namespace.
struct Cred {
  uint32_t ruid = 0, euid = 0, suid = 0, fsuid = 0;
  uint32_t rgid = 0, egid = 0, sgid = 0, fsgid = 0;
  uint64_t cap_effective = kCapAll;
  uint64_t cap_permitted = kCapAll;
  uint32_t umask = 022;

  // All ids set to `uid`/`gid`; root gets every capability, others none.
  static Cred ForUser(uint32_t uid, uint32_t gid);

  // SetGroups()
  //
  // Replaces the supplementary groups (kept sorted and unique).
  void SetGroups(std::vector<uint32_t> groups);
  std::span<const uint32_t> groups() const noexcept {
    return groups_ ? std::span<const uint32_t>(*groups_)
                   : std::span<const uint32_t>();
  }

  // Capable()
  //
  // The capability is in the effective set: ns_capable() in the
  // process's own user namespace (chroot, Landlock's restrict_self).
  bool Capable(int cap) const noexcept {
    return (cap_effective & CapBit(cap)) != 0;
  }

  // CapableInitial()
  //
  // capable(): the capability in the initial user namespace (CAP_MKNOD
  // for device nodes, CAP_SYS_ADMIN for trusted.* attributes, CAP_FSETID
  // keeping setuid on a write).
  bool CapableInitial(int cap) const noexcept { return Capable(cap) && userns == nullptr; }

  // CapableWrtInode()
  //
  // capable_wrt_inode_uidgid(): the capability, and the inode's owner
  // `uid` and group `gid` map into the process's user namespace. The id
  // 4294967295 ((uid_t)-1: an idmapped mount maps the inode's id nowhere,
  // INVALID_VFSUID) maps into none.
  // Linux: kernel/capability.c privileged_wrt_inode_uidgid()
  bool CapableWrtInode(int cap, uint32_t uid, uint32_t gid) const noexcept {
    return Capable(cap) && uid != UINT32_MAX && gid != UINT32_MAX &&
           (userns == nullptr || (userns->ShownUidMaps(uid) && userns->ShownGidMaps(gid)));
  }

  // CapableOver()
  //
  // ns_capable() over a namespace the model does not hold (a mount
  // namespace's owner, a network namespace's, another process's): from the
  // initial namespace, the capability; from another, unknown to the
  // model (UserNamespace::lenient).
  bool CapableOver(int cap) const noexcept {
    return Capable(cap) && (userns == nullptr || userns->lenient);
  }

  // IsRootOfItsNs()
  //
  // `uid` (one of these credentials' ids) is root in their user
  // namespace (make_kuid(user_ns, 0)): what access() and exec give
  // capabilities to.
  bool IsRootOfItsNs(uint32_t uid) const noexcept {
    return userns == nullptr ? uid == 0 : userns->ShownIsRoot(uid);
  }

  // InGroup()
  //
  // Linux: kernel/groups.c in_group_p(): the fsgid or a supplementary group.
  bool InGroup(uint32_t gid) const noexcept;

  // The user namespace, when not the initial one (null: the initial).
  std::shared_ptr<const UserNamespace> userns;
  bool InInitialUserNs() const noexcept { return userns == nullptr; }

 private:
  std::shared_ptr<const std::vector<uint32_t>> groups_;
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_CRED_H_
