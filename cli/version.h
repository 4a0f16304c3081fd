// `pathwarden --version`: the project's VERSION and the git commit it was
// built from, written at build time (cmake/version.cmake).

#ifndef PATHWARDEN_CLI_VERSION_H_
#define PATHWARDEN_CLI_VERSION_H_

namespace pathwarden::cli {

extern const char kVersion[];     // "0.1.0"
extern const char kCommit[];      // "22f7333abcde" ("-dirty" with changes), or "unknown"
extern const char kCommitDate[];  // "2026-12-01", or ""

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_VERSION_H_
