// TOML as pathwarden writes it (the counterpart of the one reader, doc.h,
// beside json_text.h): the scenario writer, the policy printer and the
// policy learner all write strings through here.

#ifndef PATHWARDEN_SRC_INPUT_TOML_TEXT_H_
#define PATHWARDEN_SRC_INPUT_TOML_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace pathwarden::input {

// TomlString()
//
// `s` as a TOML basic string: in double quotes, '"' and '\' escaped, the
// control characters TOML names (\b \t \n \f \r) by name and every other
// one (C0, DEL) as \uXXXX. Any other byte is written as it is, so the
// string reads back as the same bytes when `s` is UTF-8 (TOML text must
// be; the callers refuse or never hold other names).
std::string TomlString(std::string_view s);

// TomlArray()
//
// `items` (strings, or what TomlString() takes) as a TOML array of basic
// strings on one line: ["ro", "nodev"].
template <typename String = std::string>
std::string TomlArray(const std::vector<String>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += TomlString(items[i]);
  }
  return out + "]";
}

}  // namespace pathwarden::input

#endif  // PATHWARDEN_SRC_INPUT_TOML_TEXT_H_
