// Paths as text, without asking any filesystem.

#ifndef PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_
#define PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_

#include <string>
#include <string_view>
#include <vector>

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

// LexicallyNormal()
//
// `p` as an absolute, normalised path, without asking any filesystem:
// empty and "." components dropped, ".." removing the one before it
// (none above "/"). "/a/./b//c/../d" is "/a/b/d"; "a/../.." is "/".
inline std::string LexicallyNormal(std::string_view p) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    const std::string_view c = p.substr(i, j - i);
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!c.empty() && c != ".") {
      parts.push_back(c);
    }
    i = j + 1;
  }
  std::string out;
  for (std::string_view c : parts) {
    out += '/';
    out += c;
  }
  return out.empty() ? "/" : out;
}

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_LEXICAL_PATH_H_
