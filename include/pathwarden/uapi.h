// Linux UAPI values newer than Debian's 6.1 headers and glibc 2.36, as
// Linux 6.18 defines them (include/uapi/linux/*.h). Facts, not code.

#ifndef PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_
#define PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_

#include <cstdint>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

inline constexpr uint64_t kMsNosymfollow = 256;      // MS_NOSYMFOLLOW, Linux 5.10
inline constexpr uint32_t kAtExecveCheck = 0x10000;  // AT_EXECVE_CHECK, Linux 6.14

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_INCLUDE_PATHWARDEN_UAPI_H_
