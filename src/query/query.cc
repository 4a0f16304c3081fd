// Queries: the tokenizer and the grammar (see query.h).

#include "src/query/query.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "pathwarden/scenario.h"
#include "src/scenario/names.h"

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

// The flags of `family` (and, for access, the modes) a token names:
// "O_WRONLY|O_CREAT". nullopt when any part is not a flag of them.
std::optional<uint64_t> FlagsOf(std::string_view token, FlagFamily family, bool access_modes,
                                uint64_t* modes) {
  uint64_t flags = 0;
  size_t i = 0;
  if (token.empty()) return std::nullopt;
  while (i <= token.size()) {
    size_t end = token.find('|', i);
    if (end == std::string_view::npos) end = token.size();
    const std::string_view name = token.substr(i, end - i);
    bool found = false;
    for (const FlagName& f : scenario_internal::FlagsOf(family))
      if (f.name == name) {
        flags |= f.value;
        found = true;
      }
    if (!found && access_modes) {
      for (const FlagName& f : scenario_internal::AccessModeNames())
        if (f.name == name) {
          *modes |= f.value;
          found = true;
        }
    }
    if (!found) return std::nullopt;
    i = end + 1;
  }
  return flags;
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

Result<Query, std::string> ParseQuery(const std::vector<Token>& tokens) {
  if (tokens.empty()) return At(1, "no operation");
  const Token& op_token = tokens[0];
  const std::optional<Op> op = OpFromName(op_token.text);
  static constexpr std::string_view kOps =
      "open, stat, lstat, readlink, chdir, exec_check, access, mkdir, mknod, symlink, link, "
      "rename, unlink, rmdir, truncate, chmod, chown, lchown, getxattr, listxattr, setxattr, "
      "removexattr, bind_tcp or connect_tcp";
  auto unknown_op = [&] {
    return At(op_token.col, fmt::format("unknown operation \"{}\" (one of {})", op_token.text, kOps));
  };
  if (!op) return unknown_op();
  Query q;
  q.op = op_token.text;
  const size_t end_col = tokens.back().col + tokens.back().text.size();
  // Positional arguments (after the operation) and the flags token.
  const FlagFamily family = scenario_internal::FamilyFor(*op);
  const bool access_modes = *op == Op::kAccess;
  std::vector<const Token*> args;
  uint64_t flags = 0, modes = 0;
  bool have_flags = false;
  for (size_t k = 1; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    // A flags token stands after PATH (the first argument).
    if (k >= 2 && (family != FlagFamily::kNone || access_modes)) {
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
  auto need = [&](size_t min, size_t max, std::string_view usage) -> Result<void, std::string> {
    if (args.size() < min)
      return At(args.empty() ? end_col : args.back()->col + args.back()->text.size(),
                fmt::format("{} takes {}", q.op, usage));
    if (args.size() > max)
      return At(args[max]->col, fmt::format("an argument too many: \"{}\" ({} takes {})",
                                            args[max]->text, q.op, usage));
    return {};
  };
  auto path = [&](size_t k) -> const std::string& { return args[k]->text; };
  switch (*op) {
    case Op::kOpen: {
      if (auto r = need(1, 2, "PATH [FLAGS] [MODE]"); !r) return Unexpected(r.error());
      uint32_t mode = 0644;
      if (args.size() == 2) {
        auto m = Mode(args[1]->text);
        if (!m)
          return At(args[1]->col, fmt::format("\"{}\" is neither open flags (O_RDONLY, "
                                              "O_WRONLY|O_CREAT, ...) nor an octal mode",
                                              args[1]->text));
        mode = *m;
      }
      q.path = path(0);
      q.request = Open{.path = q.path, .flags = flags, .mode = mode};
      q.read_only = (flags & (O_CREAT | O_TRUNC)) == 0 && (flags & O_TMPFILE) != O_TMPFILE;
      return q;
    }
    case Op::kStat:
    case Op::kLstat:
    case Op::kReadlink:
    case Op::kChdir:
    case Op::kExecCheck: {
      if (auto r = need(1, 1, "PATH"); !r) return Unexpected(r.error());
      q.path = path(0);
      q.read_only = true;
      if (*op == Op::kStat) q.request = Stat{.path = q.path, .flags = flags};
      if (*op == Op::kLstat) q.request = Lstat{.path = q.path, .flags = flags};
      if (*op == Op::kReadlink) q.request = Readlink{.path = q.path};
      if (*op == Op::kChdir) q.request = Chdir{.path = q.path};
      if (*op == Op::kExecCheck) q.request = ExecCheck{.path = q.path, .flags = flags};
      return q;
    }
    case Op::kAccess: {
      if (auto r = need(1, 1, "PATH [R_OK|W_OK|X_OK|F_OK|AT_EACCESS|AT_SYMLINK_NOFOLLOW]"); !r)
        return Unexpected(r.error());
      q.path = path(0);
      q.request = Access{.path = q.path, .mode = static_cast<uint32_t>(modes), .flags = flags};
      q.read_only = true;
      return q;
    }
    case Op::kMkdir: {
      if (auto r = need(1, 2, "PATH [MODE]"); !r) return Unexpected(r.error());
      uint32_t mode = 0755;
      if (args.size() == 2) {
        auto m = Mode(args[1]->text);
        if (!m) return At(args[1]->col, fmt::format("\"{}\" is not an octal mode", args[1]->text));
        mode = *m;
      }
      q.path = path(0);
      q.request = Mkdir{.path = q.path, .mode = mode};
      return q;
    }
    case Op::kMknod: {
      if (auto r = need(2, 3, "PATH file|fifo|socket [MODE]"); !r) return Unexpected(r.error());
      const std::string& type = args[1]->text;
      uint32_t t;
      if (type == "file") {
        t = S_IFREG;
      } else if (type == "fifo") {
        t = S_IFIFO;
      } else if (type == "socket") {
        t = S_IFSOCK;
      } else {
        return At(args[1]->col, fmt::format("\"{}\" is not file, fifo or socket", type));
      }
      uint32_t mode = 0644;
      if (args.size() == 3) {
        auto m = Mode(args[2]->text);
        if (!m) return At(args[2]->col, fmt::format("\"{}\" is not an octal mode", args[2]->text));
        mode = *m;
      }
      q.path = path(0);
      q.request = Mknod{.path = q.path, .type = t, .mode = mode};
      return q;
    }
    case Op::kSymlink: {
      if (auto r = need(2, 2, "PATH TARGET"); !r) return Unexpected(r.error());
      q.path = path(0);
      q.path2 = path(1);
      q.request = Symlink{.target = q.path2, .path = q.path};
      return q;
    }
    case Op::kLink:
    case Op::kRename: {
      if (auto r = need(2, 2, *op == Op::kLink ? "PATH PATH2 [AT_SYMLINK_FOLLOW]"
                                               : "PATH PATH2 [RENAME_NOREPLACE|RENAME_EXCHANGE|"
                                                 "RENAME_WHITEOUT]");
          !r)
        return Unexpected(r.error());
      q.path = path(0);
      q.path2 = path(1);
      if (*op == Op::kLink) {
        q.request = Link{.oldpath = q.path, .newpath = q.path2, .flags = flags};
      } else {
        q.request = Rename{.oldpath = q.path, .newpath = q.path2, .flags = flags};
      }
      return q;
    }
    case Op::kUnlink:
    case Op::kRmdir:
    case Op::kTruncate: {
      if (auto r = need(1, 1, "PATH"); !r) return Unexpected(r.error());
      q.path = path(0);
      if (*op == Op::kUnlink) q.request = Unlink{.path = q.path, .flags = flags};
      if (*op == Op::kRmdir) q.request = Rmdir{.path = q.path};
      if (*op == Op::kTruncate) q.request = Truncate{.path = q.path};
      return q;
    }
    case Op::kChmod: {
      if (auto r = need(2, 2, "PATH MODE"); !r) return Unexpected(r.error());
      auto m = Mode(args[1]->text);
      if (!m) return At(args[1]->col, fmt::format("\"{}\" is not an octal mode", args[1]->text));
      q.path = path(0);
      q.request = Chmod{.path = q.path, .mode = *m, .flags = flags};
      return q;
    }
    case Op::kChown:
    case Op::kLchown: {
      if (auto r = need(2, 2, "PATH UID:GID"); !r) return Unexpected(r.error());
      const std::string& ids = args[1]->text;
      const size_t colon = ids.find(':');
      std::optional<int64_t> uid, gid;
      if (colon != std::string::npos) {
        uid = Id(std::string_view(ids).substr(0, colon));
        gid = Id(std::string_view(ids).substr(colon + 1));
      }
      if (!uid || !gid)
        return At(args[1]->col, fmt::format("\"{}\" is not UID:GID (ids 0 to 4294967294, or -1 "
                                            "to keep)",
                                            ids));
      q.path = path(0);
      if (*op == Op::kChown) {
        q.request = Chown{.path = q.path, .uid = *uid, .gid = *gid, .flags = flags};
      } else {
        q.request = Lchown{.path = q.path, .uid = *uid, .gid = *gid, .flags = flags};
      }
      return q;
    }
    case Op::kGetxattr:
    case Op::kRemovexattr: {
      if (auto r = need(2, 2, "PATH NAME [FLAGS]"); !r) return Unexpected(r.error());
      q.path = path(0);
      if (*op == Op::kGetxattr) {
        q.request = Getxattr{.path = q.path, .name = args[1]->text, .flags = flags};
        q.read_only = true;
      } else {
        q.request = Removexattr{.path = q.path, .name = args[1]->text, .flags = flags};
      }
      return q;
    }
    case Op::kListxattr: {
      if (auto r = need(1, 1, "PATH [FLAGS]"); !r) return Unexpected(r.error());
      q.path = path(0);
      q.request = Listxattr{.path = q.path, .flags = flags};
      q.read_only = true;
      return q;
    }
    case Op::kSetxattr: {
      if (auto r = need(2, 3, "PATH NAME [VALUE] [FLAGS]"); !r) return Unexpected(r.error());
      q.path = path(0);
      q.request = Setxattr{.path = q.path,
                           .name = args[1]->text,
                           .value = args.size() == 3 ? args[2]->text : std::string(),
                           .flags = flags};
      return q;
    }
    case Op::kBindTcp:
    case Op::kConnectTcp: {
      if (auto r = need(1, 1, "PORT"); !r) return Unexpected(r.error());
      uint32_t port = 0;
      const std::string& t = args[0]->text;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), port);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size() || port > 65535)
        return At(args[0]->col, fmt::format("\"{}\" is not a port (0 to 65535)", t));
      q.path = t;
      if (*op == Op::kBindTcp) {
        q.request = BindTcp{.port = port};
      } else {
        q.request = ConnectTcp{.port = port};
      }
      return q;
    }
    default:
      return unknown_op();
  }
}

std::vector<std::string> Grammar() {
  // "[A|B|C]": the flag names an operation takes (access: its modes too).
  auto flags = [](Op op) {
    std::string s;
    auto add = [&](std::span<const FlagName> names) {
      for (const FlagName& f : names) s += (s.empty() ? "" : "|") + std::string(f.name);
    };
    if (op == Op::kAccess) add(scenario_internal::AccessModeNames());
    add(scenario_internal::FlagsOf(scenario_internal::FamilyFor(op)));
    return "[" + s + "]";
  };
  return {
      "open PATH " + flags(Op::kOpen) + " [MODE]  (O_RDONLY by default; MODE octal, for "
          "O_CREAT: 0644 by default)",
      "stat|lstat|exec_check PATH " + flags(Op::kStat),
      "readlink|chdir PATH",
      "access PATH " + flags(Op::kAccess) + "  (faccessat2; F_OK by default)",
      "mkdir PATH [MODE]  (0755 by default)",
      "mknod PATH file|fifo|socket [MODE]  (0644 by default)",
      "symlink PATH TARGET",
      "link PATH PATH2 " + flags(Op::kLink),
      "rename PATH PATH2 " + flags(Op::kRename),
      "unlink PATH " + flags(Op::kUnlink),
      "rmdir|truncate PATH",
      "chmod PATH MODE " + flags(Op::kChmod),
      "chown|lchown PATH UID:GID " + flags(Op::kChown) + "  (-1 keeps the id)",
      "getxattr|removexattr PATH NAME " + flags(Op::kGetxattr),
      "listxattr PATH " + flags(Op::kListxattr),
      "setxattr PATH NAME [VALUE] " + flags(Op::kSetxattr),
      "bind_tcp|connect_tcp PORT  (0 to 65535)",
  };
}

Result<Query, std::string> ParseQueryLine(std::string_view line) {
  auto tokens = Tokenize(line);
  if (!tokens) return Unexpected(tokens.error());
  return ParseQuery(*tokens);
}

}  // namespace pathwarden::query
