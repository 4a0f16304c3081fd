// Queries: the tokenizer and the grammar (see query.h).

#include "src/query/query.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "pathwarden/scenario.h"
#include "src/scenario/names.h"
#include "src/scenario/op_codec.h"
#include "src/task/request_fields.h"

namespace pathwarden::query {
namespace {

using scenario_internal::FlagFamily;
using scenario_internal::FlagName;

// Far above any path or name Linux takes (those are answered
// ENAMETOOLONG), so that an endless line is an input error.
constexpr size_t kMaxToken = 1 << 20;

Unexpected<std::string> At(size_t col, std::string_view what) {
  return Unexpected(fmt::format("{}: {}", col, what));
}

// The value of `name` in `table` (every entry of that name), nullopt
// when it has none.
std::optional<uint64_t> ValueIn(std::span<const FlagName> table, std::string_view name) {
  std::optional<uint64_t> v;
  for (const FlagName& f : table)
    if (f.name == name) v = v.value_or(0) | f.value;
  return v;
}

// The bits of a token of names joined by "|" ("O_WRONLY|O_CREAT"), each
// name's from `find`; nullopt when any part is not a name it knows.
template <typename Find>
std::optional<uint64_t> NamesJoined(std::string_view token, Find find) {
  if (token.empty()) return std::nullopt;
  uint64_t bits = 0;
  for (size_t i = 0; i <= token.size();) {
    size_t end = token.find('|', i);
    if (end == std::string_view::npos) end = token.size();
    const std::optional<uint64_t> v = find(token.substr(i, end - i));
    if (!v) return std::nullopt;
    bits |= *v;
    i = end + 1;
  }
  return bits;
}

// The flags of `family` (and, for access, the modes, into *modes) a token
// names. nullopt when any part is not a flag of them.
std::optional<uint64_t> FlagsOf(std::string_view token, FlagFamily family, bool access_modes,
                                uint64_t* modes) {
  return NamesJoined(token, [&](std::string_view name) -> std::optional<uint64_t> {
    if (auto v = ValueIn(scenario_internal::FlagsOf(family), name)) return v;
    if (!access_modes) return std::nullopt;
    const auto m = ValueIn(scenario_internal::AccessModeNames(), name);
    if (!m) return std::nullopt;
    *modes |= *m;
    return 0;
  });
}

std::optional<uint32_t> Mode(std::string_view t) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 8);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v > 07777) return std::nullopt;
  return v;
}

// An id of chown: 0 to 2^32-2, or -1 (keep).
std::optional<int64_t> Id(std::string_view t) {
  if (t == "-1") return -1;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v > 0xfffffffeu)
    return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace

Result<std::vector<Token>, std::string> Tokenize(std::string_view line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.col = i + 1;
    if (c == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        const char d = line[i];
        if (d == '\0') return At(i + 1, "a NUL byte");
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\') {
          if (i + 1 == line.size()) break;
          const char e = line[i + 1];
          // The escapes names are printed with (src/input/text_quote.h):
          // C's, with one to three octal digits for any byte.
          if (e >= '0' && e <= '7') {
            unsigned v = 0;
            size_t k = i + 1;
            for (; k < line.size() && k < i + 4 && line[k] >= '0' && line[k] <= '7'; ++k)
              v = v * 8 + static_cast<unsigned>(line[k] - '0');
            if (v > 0377) return At(i + 1, fmt::format("\\{} is not a byte", line.substr(i + 1, 3)));
            if (v == 0) return At(i + 1, "a NUL byte");
            t.text.push_back(static_cast<char>(v));
            i = k;
            continue;
          }
          switch (e) {
            case '"': t.text.push_back('"'); break;
            case '\\': t.text.push_back('\\'); break;
            case 'a': t.text.push_back('\a'); break;
            case 'b': t.text.push_back('\b'); break;
            case 't': t.text.push_back('\t'); break;
            case 'n': t.text.push_back('\n'); break;
            case 'v': t.text.push_back('\v'); break;
            case 'f': t.text.push_back('\f'); break;
            case 'r': t.text.push_back('\r'); break;
            default:
              return At(i + 1, fmt::format("unknown escape \\{} (\\\" \\\\ \\a \\b \\t \\n \\v "
                                           "\\f \\r \\ooo)",
                                           e));
          }
          i += 2;
          continue;
        }
        t.text.push_back(d);
        ++i;
        if (t.text.size() > kMaxToken) return At(t.col, "a token over 1 MiB");
      }
      if (!closed) return At(t.col, "a quote that is not closed");
      if (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
        return At(i + 1, "a closing quote must end the token");
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
        if (line[i] == '\0') return At(i + 1, "a NUL byte");
        if (line[i] == '"') return At(i + 1, "a quote inside a token (quote the whole token)");
        t.text.push_back(line[i]);
        ++i;
      }
      if (t.text.size() > kMaxToken) return At(t.col, "a token over 1 MiB");
    }
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

using scenario_internal::CodecOf;
using scenario_internal::OpCodec;
using scenario_internal::QueryArg;

// The fields a query fills, named as MapRequestFields()
// (src/task/request_fields.h) names a flat form's: each goes to the
// request member of its name, as a scenario step's do.
struct QueryFields {
  std::string path, path2, target;
  uint64_t flags = 0;
  uint32_t mode = 0, access_mode = 0, mknod_type = 0;
  int64_t uid = -1, gid = -1;
  std::string xattr_name, xattr_value;
  uint32_t port = 0;
  uint64_t attr_set = 0, attr_clr = 0;
};

std::string_view ArgName(QueryArg a) {
  switch (a) {
    case QueryArg::kNone: break;
    case QueryArg::kPath: return "PATH";
    case QueryArg::kPath2: return "PATH2";
    case QueryArg::kTarget: return "TARGET";
    case QueryArg::kMode: return "MODE";
    case QueryArg::kOptMode: return "[MODE]";
    case QueryArg::kFileType: return "file|fifo|socket";
    case QueryArg::kOwner: return "UID:GID";
    case QueryArg::kName: return "NAME";
    case QueryArg::kOptValue: return "[VALUE]";
    case QueryArg::kPort: return "PORT";
    case QueryArg::kAttrs: return "ATTRS";
    case QueryArg::kOptAttrs: return "[ATTRS]";
  }
  return "";
}

bool Optional(QueryArg a) {
  return a == QueryArg::kOptMode || a == QueryArg::kOptValue || a == QueryArg::kOptAttrs;
}

bool IsQuery(const OpCodec& c) { return c.query[0] != QueryArg::kNone; }

// MOUNT_ATTR_* names joined by "|", or 0.
std::optional<uint64_t> MountAttrs(std::string_view token) {
  if (token == "0") return 0;
  return NamesJoined(token, [](std::string_view name) {
    return ValueIn(scenario_internal::MountAttrNames(), name);
  });
}

// "PATH [MODE]": an operation's positional arguments, as its errors name
// them; access's flags token carries its mode, so its usage names the
// modes (F_OK, the default, last) and the flags.
std::string Usage(const OpCodec& c) {
  std::string usage;
  for (QueryArg a : c.query)
    if (a != QueryArg::kNone) usage += (usage.empty() ? "" : " ") + std::string(ArgName(a));
  if (c.flags == FlagFamily::kAccess) {
    std::string names;
    for (bool zero : {false, true})
      for (const FlagName& f : scenario_internal::AccessModeNames())
        if ((f.value == 0) == zero) names += std::string(f.name) + "|";
    for (const FlagName& f : scenario_internal::FlagsOf(c.flags))
      names += std::string(f.name) + "|";
    names.pop_back();
    usage += " [" + names + "]";
  }
  return usage;
}

// One positional argument into `f` (and the query's path and path2).
Result<void, std::string> TakeArg(QueryArg a, const Token& t, const OpCodec& c, QueryFields& f,
                                  Query& q) {
  const std::string& text = t.text;
  switch (a) {
    case QueryArg::kNone:
      break;
    case QueryArg::kPath:
      f.path = q.path = text;
      return {};
    case QueryArg::kPath2:
      f.path2 = q.path2 = text;
      return {};
    case QueryArg::kTarget:
      f.target = q.path2 = text;
      return {};
    case QueryArg::kMode:
    case QueryArg::kOptMode: {
      auto m = Mode(text);
      if (!m)
        return At(t.col, c.flags == FlagFamily::kOpen
                             ? fmt::format("\"{}\" is neither open flags (O_RDONLY, "
                                           "O_WRONLY|O_CREAT, ...) nor an octal mode",
                                           text)
                             : fmt::format("\"{}\" is not an octal mode", text));
      f.mode = *m;
      return {};
    }
    case QueryArg::kFileType:
      if (text == "file") {
        f.mknod_type = S_IFREG;
      } else if (text == "fifo") {
        f.mknod_type = S_IFIFO;
      } else if (text == "socket") {
        f.mknod_type = S_IFSOCK;
      } else {
        return At(t.col, fmt::format("\"{}\" is not file, fifo or socket", text));
      }
      return {};
    case QueryArg::kOwner: {
      const size_t colon = text.find(':');
      std::optional<int64_t> uid, gid;
      if (colon != std::string::npos) {
        uid = Id(std::string_view(text).substr(0, colon));
        gid = Id(std::string_view(text).substr(colon + 1));
      }
      if (!uid || !gid)
        return At(t.col, fmt::format("\"{}\" is not UID:GID (ids 0 to 4294967294, or -1 "
                                     "to keep)",
                                     text));
      f.uid = *uid;
      f.gid = *gid;
      return {};
    }
    case QueryArg::kName:
      f.xattr_name = text;
      return {};
    case QueryArg::kOptValue:
      f.xattr_value = text;
      return {};
    case QueryArg::kPort: {
      uint32_t port = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
      if (text.empty() || ec != std::errc() || p != text.data() + text.size() || port > 65535)
        return At(t.col, fmt::format("\"{}\" is not a port (0 to 65535)", text));
      f.port = port;
      q.path = text;
      return {};
    }
    case QueryArg::kAttrs:
    case QueryArg::kOptAttrs: {
      auto attrs = MountAttrs(text);
      if (!attrs)
        return At(t.col, fmt::format("\"{}\" is not MOUNT_ATTR_* names joined by | (or 0)", text));
      (a == QueryArg::kAttrs ? f.attr_set : f.attr_clr) = *attrs;
      return {};
    }
  }
  return At(t.col, "an argument the operation does not take");
}

}  // namespace

Result<Query, std::string> ParseQuery(const std::vector<Token>& tokens) {
  if (tokens.empty()) return At(1, "no operation");
  const Token& op_token = tokens[0];
  const std::optional<Op> op = OpFromName(op_token.text);
  if (!op || !IsQuery(CodecOf(*op))) {
    std::vector<std::string_view> names;
    for (Op o : scenario_internal::QueryOps()) names.push_back(CodecOf(o).name);
    return At(op_token.col, fmt::format("unknown operation \"{}\" (one of {})", op_token.text,
                                        scenario_internal::Alternatives(names)));
  }
  const OpCodec& codec = CodecOf(*op);
  Query q;
  q.op = op_token.text;
  const size_t end_col = tokens.back().col + tokens.back().text.size();
  // Positional arguments (after the operation) and the flags token.
  const FlagFamily family = codec.flags;
  const bool access_modes = family == FlagFamily::kAccess;
  std::vector<const Token*> args;
  uint64_t flags = 0, modes = 0;
  bool have_flags = false;
  for (size_t k = 1; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    // A flags token stands after PATH (the first argument).
    if (k >= 2 && family != FlagFamily::kNone) {
      uint64_t m = 0;
      if (auto f = FlagsOf(t.text, family, access_modes, &m)) {
        if (have_flags) return At(t.col, "flags given twice");
        flags = *f;
        modes = m;
        have_flags = true;
        continue;
      }
    }
    args.push_back(&t);
  }
  size_t min = 0, max = 0;
  for (QueryArg a : codec.query) {
    if (a == QueryArg::kNone) continue;
    ++max;
    if (!Optional(a)) min = max;
  }
  if (args.size() < min)
    return At(args.empty() ? end_col : args.back()->col + args.back()->text.size(),
              fmt::format("{} takes {}", q.op, Usage(codec)));
  if (args.size() > max)
    return At(args[max]->col, fmt::format("an argument too many: \"{}\" ({} takes {})",
                                          args[max]->text, q.op, Usage(codec)));
  // The request type's defaults (a mode), then the arguments given.
  QueryFields fields;
  WithRequestType(*op, [&](const auto& r) { CopyRequestFields(r, fields); });
  for (size_t k = 0; k < args.size(); ++k)
    if (auto r = TakeArg(codec.query[k], *args[k], codec, fields, q); !r)
      return Unexpected(r.error());
  fields.flags = flags;
  if (access_modes) fields.access_mode = static_cast<uint32_t>(modes);
  WithRequestType(*op, [&](auto r) {
    CopyFieldsToRequest(fields, r);
    q.request = std::move(r);
  });
  q.read_only = scenario_internal::ChangesNothing(codec, flags);
  return q;
}

std::vector<std::string> Grammar() {
  // Each query form: its positional arguments and "[A|B|C]", the flag
  // names its operation takes (access: its modes too); operations of the
  // same form share a line.
  std::vector<std::pair<std::string, std::string>> forms;  // names, the rest
  for (Op o : scenario_internal::QueryOps()) {
    const OpCodec& c = CodecOf(o);
    std::string flags;
    auto add = [&](std::span<const FlagName> names) {
      for (const FlagName& f : names) flags += (flags.empty() ? "" : "|") + std::string(f.name);
    };
    if (c.flags == FlagFamily::kAccess) add(scenario_internal::AccessModeNames());
    add(scenario_internal::FlagsOf(c.flags));
    // The flags after the arguments, but before an optional mode
    // ("open PATH O_CREAT 0600").
    std::string rest;
    for (QueryArg a : c.query)
      if (a != QueryArg::kNone && a != QueryArg::kOptMode) rest += " " + std::string(ArgName(a));
    if (!flags.empty()) rest += " [" + flags + "]";
    if (std::ranges::find(c.query, QueryArg::kOptMode) != c.query.end())
      rest += " " + std::string(ArgName(QueryArg::kOptMode));
    if (!c.query_note.empty()) rest += "  " + std::string(c.query_note);
    auto same =
        std::find_if(forms.begin(), forms.end(), [&](const auto& f) { return f.second == rest; });
    if (same != forms.end()) {
      same->first += "|" + std::string(c.name);
    } else {
      forms.emplace_back(std::string(c.name), std::move(rest));
    }
  }
  std::vector<std::string> out;
  for (auto& [names, rest] : forms) out.push_back(names + rest);
  return out;
}

Result<Query, std::string> ParseQueryLine(std::string_view line) {
  auto tokens = Tokenize(line);
  if (!tokens) return Unexpected(tokens.error());
  return ParseQuery(*tokens);
}

}  // namespace pathwarden::query
