// What the C API's tests share: the last error as a string, and the
// Landlock rights they name (LANDLOCK_ACCESS_FS_*, as a C program writes
// them).

#ifndef PATHWARDEN_SRC_CAPI_CAPI_TEST_UTIL_H_
#define PATHWARDEN_SRC_CAPI_CAPI_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "pathwarden/pathwarden.h"

namespace pathwarden::capi_testing {

inline constexpr uint64_t kFsExecute = 1u << 0;
inline constexpr uint64_t kFsReadFile = 1u << 2;
inline constexpr uint64_t kFsReadDir = 1u << 3;

inline std::string LastError() { return pathwarden_last_error(); }

}  // namespace pathwarden::capi_testing

#endif  // PATHWARDEN_SRC_CAPI_CAPI_TEST_UTIL_H_
