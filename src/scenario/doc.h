// A format-neutral document tree, so that one validator serves TOML and
// JSON scenario files with the same messages.

#ifndef PATHWARDEN_SRC_SCENARIO_DOC_H_
#define PATHWARDEN_SRC_SCENARIO_DOC_H_

#include <cstdint>
#include "pathwarden/result.h"
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pathwarden/scenario.h"

namespace pathwarden::scenario_internal {

struct DocField;

struct Doc {
  enum class Kind { kBool, kInt, kFloat, kString, kArray, kTable, kOther };
  Kind kind = Kind::kOther;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Doc> items;
  std::vector<DocField> fields;
  std::vector<SourceLoc> key_locs;  // parallel to fields
  SourceLoc loc;
  bool json = false;

  const Doc* Get(std::string_view key) const;
  std::string_view KindName() const;
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

// ParseTomlDoc() / ParseJsonDoc()
//
// The error is "name:line:col: message" (JSON: "name: message").
Result<Doc, std::string> ParseTomlDoc(std::string_view text,
                                            const std::string& name);
Result<Doc, std::string> ParseJsonDoc(std::string_view text,
                                            const std::string& name);

}  // namespace pathwarden::scenario_internal

#endif  // PATHWARDEN_SRC_SCENARIO_DOC_H_
