// JSON as pathwarden writes it (the counterpart of the one reader,
// doc.h): never an exception, whatever the names it carries.

#ifndef PATHWARDEN_SRC_INPUT_JSON_TEXT_H_
#define PATHWARDEN_SRC_INPUT_JSON_TEXT_H_

#include <string>

namespace pathwarden::input {

// JsonText()
//
// `j` as JSON text (one line, or indented by `indent`). JSON strings are
// Unicode: a path or name holding bytes that are not valid UTF-8 (Linux
// allows any byte but '/' and NUL) has each such byte written as U+FFFD,
// so the output is always valid JSON; that name cannot be recovered
// exactly from it. nlohmann-json's default would throw (type_error 316)
// and end the process.
template <class Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace pathwarden::input

#endif  // PATHWARDEN_SRC_INPUT_JSON_TEXT_H_
