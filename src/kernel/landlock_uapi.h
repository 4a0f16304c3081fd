// Landlock's system-call structs and entry points, carried here because
// Debian's <linux/landlock.h> stops at ABI 2. Linux: include/uapi/linux/landlock.h

#ifndef PATHWARDEN_SRC_KERNEL_LANDLOCK_UAPI_H_
#define PATHWARDEN_SRC_KERNEL_LANDLOCK_UAPI_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace pathwarden::kernel_internal {

// The ABI 6 layout (24 bytes): the size this executor always passes, so the
// kernel sees every field a scenario can set.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};
static_assert(sizeof(LandlockRulesetAttr) == 24);

struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access = 0;
  int32_t parent_fd = -1;
};
static_assert(sizeof(LandlockPathBeneathAttr) == 12);

struct LandlockNetPortAttr {
  uint64_t allowed_access = 0;
  uint64_t port = 0;
};
static_assert(sizeof(LandlockNetPortAttr) == 16);

// x86-64 and the other architectures with the unified syscall table agree
// on these numbers; glibc 2.36 has no names for them.
inline constexpr long kSysLandlockCreateRuleset = 444;
inline constexpr long kSysLandlockAddRule = 445;
inline constexpr long kSysLandlockRestrictSelf = 446;

// Each returns the syscall's result, or -1 with errno set.
inline int LandlockCreateRuleset(const LandlockRulesetAttr* attr, size_t size,
                                 uint32_t flags) {
  return static_cast<int>(syscall(kSysLandlockCreateRuleset, attr, size, flags));
}
inline int LandlockAddRule(int ruleset_fd, int rule_type, const void* attr,
                           uint32_t flags) {
  return static_cast<int>(
      syscall(kSysLandlockAddRule, ruleset_fd, rule_type, attr, flags));
}
inline int LandlockRestrictSelf(int ruleset_fd, uint32_t flags) {
  return static_cast<int>(syscall(kSysLandlockRestrictSelf, ruleset_fd, flags));
}

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_LANDLOCK_UAPI_H_
