// Paths as text, without asking any filesystem.

#ifndef PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_
#define PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_

#include <string_view>

namespace pathwarden::internal {

// IsNormalisedAbsolute()
//
// Whether `p` is absolute and normalised: "/" or "/a/b", no empty, "." or
// ".." component and no trailing '/'. The scenario format's bind sources
// and the learner's paths are written this way.
inline bool IsNormalisedAbsolute(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  if (p == "/") return true;
  if (p.back() == '/') return false;
  size_t i = 1;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    const std::string_view c = p.substr(i, j - i);
    if (c.empty() || c == "." || c == "..") return false;
    i = j + 1;
  }
  return true;
}

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_
