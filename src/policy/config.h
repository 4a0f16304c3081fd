// A landlockconfig file before resolution (landlockconfig's `Config`):
// groups already resolved at the file's ABI, handled rights widened to
// the rules' rights, rules keyed by their unexpanded `parent` template, so
// that files can be composed (variables of one file may serve another)
// before variables are expanded and paths normalised.

#ifndef PATHWARDEN_SRC_POLICY_CONFIG_H_
#define PATHWARDEN_SRC_POLICY_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/landlock.h"
#include "pathwarden/result.h"
#include "src/input/doc.h"
#include "src/policy/policy.h"

namespace pathwarden::policy::internal {

// Template
//
// A `parent` string: text and `${name}` references. Key() is its canonical
// spelling ('$' as "$$", references as "${name}"), the rule's map key.
struct Template {
  struct Token {
    bool var = false;
    std::string text;  // the text, or the variable's name
  };
  std::vector<Token> tokens;
  std::string Key() const;
};

// ParseTemplate()
//
// landlockconfig's template syntax: "${name}" a reference, "$$" a '$',
// any other '$' literal. Errors: "unclosed variable reference starting
// at position N", "invalid variable name at position N: ...".
Result<Template, std::string> ParseTemplate(std::string_view s);

// CheckName()
//
// A variable name: an ASCII letter, then ASCII letters, digits or '_'.
Result<void, std::string> CheckName(std::string_view name);

struct PathEntry {
  Template parent;
  landlock::AccessMask access = 0;
  std::vector<Origin> origins;
};
struct PortEntry {
  landlock::AccessMask access = 0;
  std::vector<Origin> origins;
};

struct Config {
  std::optional<int> abi;
  landlock::AccessMask handled_fs = 0;
  landlock::AccessMask handled_net = 0;
  landlock::AccessMask scoped = 0;
  std::map<std::string, PathEntry> paths;  // by Template::Key()
  std::map<uint64_t, PortEntry> ports;
  std::map<std::string, std::set<std::string>> variables;
};

// ParseConfig()
//
// One file's document. `json` picks the key spelling (camelCase or
// snake_case). Errors: "NAME:LINE:COL: message" lines.
Result<Config, std::string> ParseConfig(const input::Doc& root, const std::string& name, bool json);

// Compose()
//
// landlockconfig's Config::compose(): handled rights and scopes
// intersected, every rule downgraded to the common handled rights and
// dropped when empty, rules and variables unioned, the smaller ABI.
void Compose(Config& into, const Config& other);

// At most this many paths from the variables of one policy (and at most
// input::kMaxFile bytes of them): the product grows exponentially with
// the references of a parent.
inline constexpr uint64_t kMaxExpandedPaths = 1u << 16;

// Resolve()
//
// Variables expanded (Cartesian product; kMaxExpandedPaths), paths normalised and, when
// relative, joined to `cwd`, rules on one path merged, empty rules
// dropped. Errors: "NAME:LINE:COL: variable "x" not found".
Result<Policy, std::string> Resolve(const Config& c, const std::string& cwd);

// NormalisePath()
//
// As Rust's PathBuf compares paths (landlockconfig keys rules by them):
// repeated and trailing '/' and every "." but a leading one dropped,
// ".." kept.
std::string NormalisePath(std::string_view p);

}  // namespace pathwarden::policy::internal

#endif  // PATHWARDEN_SRC_POLICY_CONFIG_H_
