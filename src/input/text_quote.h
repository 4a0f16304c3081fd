// Names in text as pathwarden writes them (the text counterpart of
// json_text.h). To Linux a name is any bytes but '/' and NUL, so a name
// printed raw could hold a newline that forges a line of output, or a
// terminal escape that rewrites the screen. Names are written with C
// escapes, as `ls --quoting-style=c` writes them, and quoted only when
// they need it (`ls --quoting-style=c-maybe`, and also for a blank, so
// that a quoted or bare name is always one token, which the query grammar
// reads back as the same bytes: src/query/query.h):
//
//   \a \b \t \n \v \f \r   those control characters
//   \" \\                  a double quote, a backslash
//   \ooo                   three octal digits: each byte of any other
//                          control character (C0, DEL, C1), of a Unicode
//                          character that breaks or reorders lines
//                          (U+061C, U+200E, U+200F, U+2028, U+2029,
//                          U+202A to U+202E, U+2066 to U+2069), and each
//                          byte that is not part of valid UTF-8
//
// Example: the name "a<newline>b" is written "a\nb" (with the quotes),
// ESC[2J is written "\033[2J", /tmp/x is written /tmp/x.

#ifndef PATHWARDEN_SRC_INPUT_TEXT_QUOTE_H_
#define PATHWARDEN_SRC_INPUT_TEXT_QUOTE_H_

#include <string>
#include <string_view>

namespace pathwarden::input {

// QuoteName()
//
// A path or a name on its own: as it is when it is not empty and holds
// only printable characters other than blanks, '"' and '\'; else in
// double quotes, with the escapes above.
std::string QuoteName(std::string_view name);

// EscapeText()
//
// Prose that embeds names (a reason, a source): the escapes above except
// `\"` (a '"' stays: prose quotes with it), without quotes around. A
// backslash is doubled, so an escape always stands for the byte it
// names, and the result is one line whatever the names held.
std::string EscapeText(std::string_view text);

// NeedsQuoting()
//
// Whether QuoteName() quotes `name`.
bool NeedsQuoting(std::string_view name);

}  // namespace pathwarden::input

#endif  // PATHWARDEN_SRC_INPUT_TEXT_QUOTE_H_
