// File: pathwarden/sysctls.h
//
// The machine-global fs.protected_* sysctls that change what a path walk,
// an open or a link answers (Documentation/admin-guide/sysctl/fs.rst), by
// name. A scenario's `[sysctl]` table, the engine and the kernel
// executor's guard of the host's values all read them from here.
//
// Example:
//   Sysctls s;
//   s.protected_regular = 2;
//   for (const SysctlField& f : kSysctlFields)
//     fmt::print("{} = {}\n", f.name, s.*f.value);

#ifndef PATHWARDEN_SYSCTLS_H_
#define PATHWARDEN_SYSCTLS_H_

#include <compare>
#include <string_view>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Sysctls
//
// 0 is off (what a scenario without `[sysctl]` gets); the ranges are the
// kernel's: protected_symlinks and protected_hardlinks 0..1,
// protected_regular and protected_fifos 0..2. Ordered (field by field) so
// that values can key a map.
struct Sysctls {
  int protected_symlinks = 0;
  int protected_hardlinks = 0;
  int protected_regular = 0;
  int protected_fifos = 0;
  friend auto operator<=>(const Sysctls&, const Sysctls&) = default;
};

// SysctlField
//
// One sysctl: its name (the `[sysctl]` key and /proc/sys/fs/<name>), its
// field, and the largest value the kernel accepts.
struct SysctlField {
  std::string_view name;
  int Sysctls::*value;
  int max;
};

// kSysctlFields
//
// Every field of Sysctls once, in the order of the format's spec (and of
// the kernel executor's saved file).
inline constexpr SysctlField kSysctlFields[] = {
    {"protected_symlinks", &Sysctls::protected_symlinks, 1},
    {"protected_hardlinks", &Sysctls::protected_hardlinks, 1},
    {"protected_regular", &Sysctls::protected_regular, 2},
    {"protected_fifos", &Sysctls::protected_fifos, 2},
};
static_assert(sizeof(Sysctls) == sizeof(kSysctlFields) / sizeof(SysctlField) * sizeof(int),
              "a field of Sysctls is missing from kSysctlFields");

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_SYSCTLS_H_
