// The scenario parser: its state (the file's name, its errors) and its
// pieces, by what they read. parse.cc: the document's top level, nodes,
// layers and processes, and the public ParseScenario(); parse_values.cc:
// typed values, each refused with its file:line:col; parse_step.cc: steps
// and their flags. Internal to src/scenario.

#ifndef PATHWARDEN_SRC_SCENARIO_PARSER_H_
#define PATHWARDEN_SRC_SCENARIO_PARSER_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pathwarden/acl.h"
#include "pathwarden/result.h"
#include "pathwarden/scenario.h"
#include "src/input/doc.h"

namespace pathwarden::scenario_internal {

// Calls `fn` with each name of "A|B | C", blanks around each name trimmed
// (an empty one too, so that "A||B" can be refused).
template <typename Fn>
void ForEachFlagName(std::string_view text, Fn fn) {
  while (true) {
    const size_t bar = text.find('|');
    std::string_view name = text.substr(0, bar);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    fn(name);
    if (bar == std::string_view::npos) return;
    text.remove_prefix(bar + 1);
  }
}

inline SourceLoc ToSourceLoc(const input::Loc& l) { return SourceLoc{l.line, l.col, l.key_path}; }

// Parser
//
// One file's document tree into a Scenario: Run() gives the scenario, or
// every error found (at most 50), one per line, each with its location.
class Parser {
 public:
  Parser(std::string name, bool json) : name_(std::move(name)), json_(json) {}

  Result<Scenario, std::string> Run(const input::Doc& root);

 private:
  std::string Where(const input::Loc& loc) const { return input::Where(name_, loc); }
  void Error(const input::Loc& loc, std::string msg) {
    if (errors_.size() < 50) errors_.push_back(Where(loc) + ": " + msg);
  }

  // Reports keys of `t` outside `allowed`; returns false if `t` is no table.
  bool CheckTable(const input::Doc& t, std::string_view what,
                  std::initializer_list<std::string_view> allowed) {
    return CheckTable(t, what, std::span(allowed.begin(), allowed.size()));
  }
  bool CheckTable(const input::Doc& t, std::string_view what,
                  std::span<const std::string_view> allowed);
  std::optional<int64_t> Int(const input::Doc* d, std::string_view key, int64_t lo, int64_t hi);
  std::optional<std::string> Str(const input::Doc* d, std::string_view key);
  // Str() of key `key` of table `t` (`table`: "[[node]]"), which it
  // must have: "[[node]] needs \"path\"" when it is missing.
  std::optional<std::string> RequiredStr(const input::Doc& t, std::string_view key,
                                         std::string_view table);
  std::optional<bool> Bool(const input::Doc* d, std::string_view key);
  // Modes: integers (TOML 0o644); JSON also takes "0o644".
  std::optional<uint32_t> Mode(const input::Doc* d, std::string_view key, uint32_t max);
  std::vector<std::string> StrArray(const input::Doc* d, std::string_view key);
  const std::vector<input::Doc>* TableArray(const input::Doc* d, std::string_view key);
  std::optional<std::vector<AclEntry>> Acl(const input::Doc* d, std::string_view key);
  std::optional<std::pair<uint32_t, uint32_t>> Rdev(const input::Doc* d);
  void ParseTop(const input::Doc& root, Scenario& s);
  void ParseNode(const input::Doc& d, Scenario& s);
  std::optional<landlock::AccessMask> Rights(
      const input::Doc* d, std::string_view key,
      std::optional<landlock::AccessMask> (*lookup)(std::string_view));
  std::optional<LayerSpec> ParseLayer(const input::Doc& d);
  void ParseProcess(const input::Doc& d, Scenario& s);
  void ParseStep(const input::Doc& d, Scenario& s);
  // `name`, `value`, `acl` and `xattr_flags` of the xattr calls.
  void ParseXattrKeys(const input::Doc& d, StepSpec& st);
  // `attr_set` or `attr_clr` of mount_setattr: MOUNT_ATTR_* names.
  uint64_t ParseMountAttrs(const input::Doc& d, std::string_view key);
  void ParseFlags(const input::Doc& d, StepSpec& st);

  std::string name_;
  bool json_;
  std::vector<std::string> errors_;
};

}  // namespace pathwarden::scenario_internal

#endif  // PATHWARDEN_SRC_SCENARIO_PARSER_H_
