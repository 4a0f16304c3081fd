// Errno names: glibc's strerrorname_np() is the table.

#include "pathwarden/errno.h"

#include <string.h>

#include <fmt/format.h>

namespace pathwarden {

std::string ErrnoName(int err) {
  if (err == 0) return "ok";
  if (const char* name = strerrorname_np(err)) return name;
  return fmt::format("E{}", err);
}

std::optional<int> ErrnoFromName(std::string_view name) {
  if (name == "ok") return 0;
  // EWOULDBLOCK and EDEADLOCK are aliases glibc never names; accept them.
  if (name == "EWOULDBLOCK") return EWOULDBLOCK;
  if (name == "EDEADLOCK") return EDEADLOCK;
  for (int e = 1; e < 4096; ++e) {
    const char* n = strerrorname_np(e);
    if (n != nullptr && name == n) return e;
  }
  return std::nullopt;
}

}  // namespace pathwarden
