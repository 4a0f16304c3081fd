// The scenario parser's typed values (parser.h): each read from the
// document or refused with its location.

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pathwarden/acl.h"
#include "src/input/doc.h"
#include "src/scenario/parser.h"

namespace pathwarden::scenario_internal {

using input::Doc;

bool Parser::CheckTable(const Doc& t, std::string_view what,
                        std::span<const std::string_view> allowed) {
  if (t.kind != Doc::Kind::kTable) {
    Error(t.loc, fmt::format("{} must be a table, not {}", what, t.KindName()));
    return false;
  }
  for (size_t i = 0; i < t.fields.size(); ++i) {
    const std::string& k = t.fields[i].first;
    bool ok = false;
    for (auto a : allowed) ok = ok || a == k;
    if (!ok) Error(t.key_locs[i], fmt::format("unknown key \"{}\" in {}", k, what));
  }
  return true;
}

std::optional<int64_t> Parser::Int(const Doc* d, std::string_view key, int64_t lo, int64_t hi) {
  if (d == nullptr) return std::nullopt;
  if (d->kind != Doc::Kind::kInt) {
    Error(d->loc, fmt::format("\"{}\" must be an integer, not {}", key, d->KindName()));
    return std::nullopt;
  }
  if (!d->IntIn(lo, hi)) {
    Error(d->loc, fmt::format("\"{}\" = {} is out of range [{}, {}]", key, d->num_text, lo, hi));
    return std::nullopt;
  }
  return d->i;
}

std::optional<std::string> Parser::Str(const Doc* d, std::string_view key) {
  if (d == nullptr) return std::nullopt;
  if (d->kind != Doc::Kind::kString) {
    Error(d->loc, fmt::format("\"{}\" must be a string, not {}", key, d->KindName()));
    return std::nullopt;
  }
  return d->s;
}

std::optional<std::string> Parser::RequiredStr(const Doc& t, std::string_view key,
                                               std::string_view table) {
  const Doc* d = t.Get(key);
  if (d == nullptr) Error(t.loc, fmt::format("{} needs \"{}\"", table, key));
  return Str(d, key);
}

std::optional<bool> Parser::Bool(const Doc* d, std::string_view key) {
  if (d == nullptr) return std::nullopt;
  if (d->kind != Doc::Kind::kBool) {
    Error(d->loc, fmt::format("\"{}\" must be a boolean, not {}", key, d->KindName()));
    return std::nullopt;
  }
  return d->b;
}

// Modes: integers (TOML 0o644); JSON also takes "0o644".
std::optional<uint32_t> Parser::Mode(const Doc* d, std::string_view key, uint32_t max) {
  if (d == nullptr) return std::nullopt;
  int64_t v = 0;
  if (d->kind == Doc::Kind::kInt) {
    if (d->int_overflow) {
      Error(d->loc,
            fmt::format("\"{}\" = {} is out of range (at most {:#o})", key, d->num_text, max));
      return std::nullopt;
    }
    v = d->i;
  } else if (d->kind == Doc::Kind::kString && json_) {
    std::string_view t = d->s;
    if (!t.starts_with("0o")) {
      Error(d->loc, fmt::format("\"{}\" = \"{}\": a mode string is written \"0o644\"", key, t));
      return std::nullopt;
    }
    t.remove_prefix(2);
    if (t.empty() || t.size() > 7) {
      Error(d->loc, fmt::format("\"{}\": bad mode \"{}\"", key, d->s));
      return std::nullopt;
    }
    for (char c : t) {
      if (c < '0' || c > '7') {
        Error(d->loc, fmt::format("\"{}\": bad mode \"{}\"", key, d->s));
        return std::nullopt;
      }
      v = v * 8 + (c - '0');
    }
  } else {
    Error(d->loc,
          fmt::format("\"{}\" must be an integer mode (0o644), not {}", key, d->KindName()));
    return std::nullopt;
  }
  if (v < 0 || v > max) {
    // A negative mode as written ("-1"): {:#o} would show -1 as "-01".
    const std::string shown = v < 0 ? std::to_string(v) : fmt::format("{:#o}", v);
    Error(d->loc, fmt::format("\"{}\" = {} is out of range (at most {:#o})", key, shown, max));
    return std::nullopt;
  }
  return static_cast<uint32_t>(v);
}

std::vector<std::string> Parser::StrArray(const Doc* d, std::string_view key) {
  std::vector<std::string> out;
  if (d == nullptr) return out;
  if (d->kind != Doc::Kind::kArray) {
    Error(d->loc, fmt::format("\"{}\" must be an array of strings, not {}", key, d->KindName()));
    return out;
  }
  for (const Doc& item : d->items) {
    if (item.kind != Doc::Kind::kString) {
      Error(item.loc, fmt::format("\"{}\" must hold strings, not {}", key, item.KindName()));
      continue;
    }
    out.push_back(item.s);
  }
  return out;
}

const std::vector<Doc>* Parser::TableArray(const Doc* d, std::string_view key) {
  if (d == nullptr) return nullptr;
  if (d->kind != Doc::Kind::kArray) {
    Error(d->loc, fmt::format("\"{}\" must be an array of tables ([[{}]]), not {}", key, key,
                              d->KindName()));
    return nullptr;
  }
  return &d->items;
}

std::optional<std::vector<AclEntry>> Parser::Acl(const Doc* d, std::string_view key) {
  auto text = Str(d, key);
  if (!text) return std::nullopt;
  auto entries = PosixAcl::ParseEntries(*text);
  if (!entries) {
    Error(d->loc, fmt::format("\"{}\": {}", key, entries.error()));
    return std::nullopt;
  }
  return *entries;
}

std::optional<std::pair<uint32_t, uint32_t>> Parser::Rdev(const Doc* d) {
  auto text = Str(d, "rdev");
  if (!text) return std::nullopt;
  // Digits only, each part within the kernel's 12-bit major and 20-bit
  // minor (MKDEV()). sscanf("%u") took "4294967296:3" as major 0 (the
  // value wraps), " 1: 3" and "+1:3".
  uint32_t maj = 0, min = 0;
  auto part = [](std::string_view t, uint32_t limit, uint32_t& out) {
    if (t.empty() || t.size() > 7) return false;
    uint32_t v = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    out = v;
    return v <= limit;
  };
  const std::string_view t = *text;
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos || !part(t.substr(0, colon), 4095, maj) ||
      !part(t.substr(colon + 1), 0xfffff, min)) {
    Error(d->loc, fmt::format("\"rdev\" = \"{}\" is not major:minor", *text));
    return std::nullopt;
  }
  return std::pair{maj, min};
}

std::optional<landlock::AccessMask> Parser::Rights(
    const Doc* d, std::string_view key,
    std::optional<landlock::AccessMask> (*lookup)(std::string_view)) {
  if (d == nullptr) return landlock::AccessMask{0};
  landlock::AccessMask m = 0;
  bool ok = true;
  for (const std::string& r : StrArray(d, key)) {
    auto bit = lookup(r);
    if (!bit) {
      Error(d->loc, fmt::format("unknown right \"{}\" in \"{}\"", r, key));
      ok = false;
      continue;
    }
    m |= *bit;
  }
  if (!ok) return std::nullopt;
  return m;
}

}  // namespace pathwarden::scenario_internal
