// The scenario files `pathwarden selftest` carries (tests/scenarios/ and
// the tour), written at build time by cmake/embed_suites.cmake.

#ifndef PATHWARDEN_CLI_EMBEDDED_SUITES_H_
#define PATHWARDEN_CLI_EMBEDDED_SUITES_H_

#include <vector>

#include "src/fuzz/selftest.h"

namespace pathwarden::cli {

// EmbeddedSuites()
//
// Each file's path in the source tree and its text.
const std::vector<fuzz::SuiteFile>& EmbeddedSuites();

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_EMBEDDED_SUITES_H_
