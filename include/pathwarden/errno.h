// File: pathwarden/errno.h
//
// Errno values as results. pathwarden reports exactly the errno Linux
// returns; 0 means the call succeeded. These helpers convert between the
// numeric values of <cerrno> and their symbolic names ("EACCES").

#ifndef PATHWARDEN_ERRNO_H_
#define PATHWARDEN_ERRNO_H_

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// ErrnoName()
//
// "ok" for 0, the symbolic name for a known errno ("EACCES"), else "E<n>".
std::string ErrnoName(int err);

// ErrnoFromName()
//
// The value of "ok" (0) or of a symbolic errno name; nullopt when unknown.
std::optional<int> ErrnoFromName(std::string_view name);

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_ERRNO_H_
