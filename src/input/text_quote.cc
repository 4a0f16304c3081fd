// Names in text: C escapes, quoted when needed (text_quote.h).

#include "src/input/text_quote.h"

#include <cstdint>

namespace pathwarden::input {
namespace {

// The length of the UTF-8 sequence at `s[i]` and its code point, or 0 when
// the byte there does not start a valid one (overlong forms, surrogates
// and code points past U+10FFFF are not valid).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    v = v << 6 | (b(k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

// Characters written as escapes although they are valid: controls, and
// those that break lines or reorder what a terminal shows.
bool Hidden(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c ||
         cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void Octal(std::string* out, uint8_t byte) {
  out->push_back('\\');
  out->push_back(static_cast<char>('0' + (byte >> 6)));
  out->push_back(static_cast<char>('0' + ((byte >> 3) & 7)));
  out->push_back(static_cast<char>('0' + (byte & 7)));
}

// `s` with the escapes; `quote`: '"' escaped too.
std::string Escape(std::string_view s, bool quote) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) {
      Octal(&out, static_cast<uint8_t>(s[i]));
      ++i;
      continue;
    }
    if (n == 1) {
      const char c = s[i];
      switch (c) {
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\v': out += "\\v"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        case '\\': out += "\\\\"; break;
        case '"':
          out += quote ? "\\\"" : "\"";
          break;
        default:
          if (Hidden(cp)) {
            Octal(&out, static_cast<uint8_t>(c));
          } else {
            out.push_back(c);
          }
      }
    } else if (Hidden(cp)) {
      for (size_t k = 0; k < n; ++k) Octal(&out, static_cast<uint8_t>(s[i + k]));
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

bool NeedsQuoting(std::string_view name) {
  if (name.empty()) return true;
  for (size_t i = 0; i < name.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(name, i, &cp);
    if (n == 0 || Hidden(cp) || cp == ' ' || cp == '"' || cp == '\\') return true;
    i += n;
  }
  return false;
}

std::string QuoteName(std::string_view name) {
  if (!NeedsQuoting(name)) return std::string(name);
  return "\"" + Escape(name, true) + "\"";
}

std::string EscapeText(std::string_view text) { return Escape(text, false); }

}  // namespace pathwarden::input
