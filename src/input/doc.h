// Input documents: the one strict reader of every file a user hands in
// (scenario files, policy files, query lines), TOML (toml++) or JSON
// (nlohmann-json) into one format-neutral tree, so that each validator
// above it serves both formats with the same messages.
//
// Strictness, the same for both formats:
//   - every value and key knows its line and column (1-based, columns in
//     characters): TOML's from toml++, JSON's from a counting input
//     adapter under nlohmann's SAX parser (nlohmann-json 3.11 itself
//     reports positions only for syntax errors);
//   - duplicate keys are errors (JSON too);
//   - a NUL byte in a key or a string is an error, as is a string or key
//     over kMaxField bytes (far above PATH_MAX: a long path is the
//     kernel's ENAMETOOLONG to model, not an input error);
//   - nesting deeper than kMaxDepth is an error, and no step recurses
//     deeper than that;
//   - an integer keeps the text it was written as, and one beyond int64
//     (JSON 18446744073709551615, 1e999 is a float and an error of its
//     own) is marked out of range instead of wrapping;
//   - every exception of the parsing libraries is caught.
// Errors are "NAME:LINE:COL: message".

#ifndef PATHWARDEN_SRC_INPUT_DOC_H_
#define PATHWARDEN_SRC_INPUT_DOC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::input {

inline constexpr int kMaxDepth = 64;           // nested arrays and tables
inline constexpr size_t kMaxField = 1u << 20;  // bytes of one string or key
inline constexpr size_t kMaxFile = 64u << 20;  // bytes of one file

// Loc
//
// Where a value or key was written: line and column (1-based), and for
// JSON also its key path ("/step/3/flags"), which messages keep.
struct Loc {
  int line = 0;
  int col = 0;
  std::string key_path;
};

struct DocField;

// Doc
//
// One value. Tables keep their keys in the order written.
struct Doc {
  enum class Kind { kBool, kInt, kFloat, kString, kArray, kTable, kOther };
  Kind kind = Kind::kOther;
  bool b = false;
  int64_t i = 0;
  bool int_overflow = false;  // an integer beyond int64 (`i` meaningless)
  double f = 0;
  std::string s;          // a string's value
  std::string num_text;   // an integer or float as written
  std::vector<Doc> items;
  std::vector<DocField> fields;
  std::vector<Loc> key_locs;  // parallel to fields
  Loc loc;
  bool json = false;

  const Doc* Get(std::string_view key) const;
  std::string_view KindName() const;
  // IntIn(): the integer if it is one within [lo, hi].
  std::optional<int64_t> IntIn(int64_t lo, int64_t hi) const;
};

// One key of a table and its value. A struct of our own, not
// std::pair<std::string, Doc>: instantiating that pair inside Doc asks
// whether Doc is default-constructible while Doc is incomplete, which
// clang 14 with libstdc++ 12 rejects.
struct DocField {
  std::string first;
  Doc second;
};

inline const Doc* Doc::Get(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

// Where()
//
// "NAME:LINE:COL", then ": /key/path" for JSON.
std::string Where(const std::string& name, const Loc& loc);

// ParseTomlDoc() / ParseJsonDoc() / ParseDoc()
//
// The document `text`, named `name` in messages ("name:line:col: ...").
// ParseDoc() picks JSON for a name ending in ".json", else TOML.
Result<Doc, std::string> ParseTomlDoc(std::string_view text, const std::string& name);
Result<Doc, std::string> ParseJsonDoc(std::string_view text, const std::string& name);
bool IsJsonName(std::string_view name);

// ReadFile() / ReadStdin()
//
// The one reader of every input file a user names (scenario files, policy
// files, explain batches): the whole file, at most kMaxFile bytes, never
// more in memory than that. What is not a file to read is refused before
// anything is read: a directory is "PATH: is a directory, not a file"
// (LoadPolicy() takes directories itself, before calling this). Anything
// else that can be read is (a pipe, a FIFO, /dev/stdin, a character
// device), up to the limit: one that never ends (/dev/zero) stops at
// kMaxFile + 1 bytes with "PATH: input larger than N bytes". Other
// errors: "PATH: cannot read: ...". ReadStdin() reads standard input
// ("-" on a command line) with the same limit, named `name` in messages.
Result<std::string, std::string> ReadFile(const std::string& path);
Result<std::string, std::string> ReadStdin(const std::string& name);

}  // namespace pathwarden::input

#endif  // PATHWARDEN_SRC_INPUT_DOC_H_
