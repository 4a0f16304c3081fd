// TOML (toml++) and JSON (nlohmann-json, SAX) into the neutral Doc tree,
// with positions for every value and key, and the strictness of doc.h.

#include "src/input/doc.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace pathwarden::input {
namespace {

// Checks a key or string value: no NUL byte, at most kMaxField bytes.
std::optional<std::string> BadString(std::string_view s, std::string_view what) {
  if (s.size() > kMaxField)
    return fmt::format("{} of {} bytes is longer than the limit of {} bytes", what, s.size(),
                       kMaxField);
  if (s.find('\0') != std::string_view::npos) return fmt::format("{} holds a NUL byte", what);
  return std::nullopt;
}

// ---- TOML ----

Loc LocOf(const toml::source_region& r) {
  return Loc{static_cast<int>(r.begin.line), static_cast<int>(r.begin.column), ""};
}

struct TomlError {
  Loc loc;
  std::string message;
};

// toml++ bounds arrays and inline tables (TOML_MAX_NESTED_VALUES) but not
// the tables a dotted key or a table header makes: `a.a.a... = 1` or
// `[a.a.a...]` 100,000 deep overflowed the stack inside toml::parse()
// (its recursion over the tables made). So before parsing, outside
// strings and comments, no run of dots between two separators (`=`, `,`,
// a bracket or brace, a newline) may make a key deeper than kMaxDepth: a
// value has at most one dot (1.5, a time's fraction), a key one per
// level. Brackets and braces are bounded the same way. Returns where the
// first excess is.
std::optional<Loc> TooDeepToml(std::string_view text) {
  enum class In { kCode, kComment, kBasic, kLiteral, kMlBasic, kMlLiteral };
  In in = In::kCode;
  int line = 1, col = 0, dots = 0, brackets = 0;
  bool escape = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      col = 0;
    } else if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) {
      ++col;
    }
    auto at = [&](std::string_view s) { return text.substr(i, s.size()) == s; };
    switch (in) {
      case In::kComment:
        if (c == '\n') {
          in = In::kCode;
          dots = 0;
        }
        continue;
      case In::kBasic:
        if (escape) escape = false;
        else if (c == '\\') escape = true;
        else if (c == '"' || c == '\n') in = In::kCode;
        continue;
      case In::kLiteral:
        if (c == '\'' || c == '\n') in = In::kCode;
        continue;
      case In::kMlBasic:
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
        } else if (at("\"\"\"")) {
          in = In::kCode;
          i += 2;
          col += 2;
        }
        continue;
      case In::kMlLiteral:
        if (at("\'\'\'")) {
          in = In::kCode;
          i += 2;
          col += 2;
        }
        continue;
      case In::kCode:
        break;
    }
    switch (c) {
      case '#':
        in = In::kComment;
        break;
      case '"':
        if (at("\"\"\"")) {
          in = In::kMlBasic;
          i += 2;
          col += 2;
        } else {
          in = In::kBasic;
        }
        break;
      case '\'':
        if (at("\'\'\'")) {
          in = In::kMlLiteral;
          i += 2;
          col += 2;
        } else {
          in = In::kLiteral;
        }
        break;
      case '.':
        if (++dots >= kMaxDepth) return Loc{line, col, ""};
        break;
      case '[':
      case '{':
        dots = 0;
        if (++brackets > kMaxDepth + 2) return Loc{line, col, ""};
        break;
      case ']':
      case '}':
        dots = 0;
        if (brackets > 0) --brackets;
        break;
      case '=':
      case ',':
      case '\n':
        dots = 0;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

// Depth-bounded by kMaxDepth (toml++ bounds its own nesting too).
std::optional<TomlError> FromToml(const toml::node& n, int depth, Doc& d) {
  d.loc = LocOf(n.source());
  switch (n.type()) {
    case toml::node_type::boolean:
      d.kind = Doc::Kind::kBool;
      d.b = n.as_boolean()->get();
      break;
    case toml::node_type::integer:
      d.kind = Doc::Kind::kInt;
      d.i = n.as_integer()->get();
      d.num_text = std::to_string(d.i);
      break;
    case toml::node_type::floating_point:
      d.kind = Doc::Kind::kFloat;
      d.f = n.as_floating_point()->get();
      d.num_text = fmt::format("{}", d.f);
      break;
    case toml::node_type::string:
      d.kind = Doc::Kind::kString;
      d.s = n.as_string()->get();
      if (auto bad = BadString(d.s, "a string")) return TomlError{d.loc, *bad};
      break;
    case toml::node_type::array:
    case toml::node_type::table:
      if (depth >= kMaxDepth)
        return TomlError{d.loc, fmt::format("nesting deeper than {} levels", kMaxDepth)};
      if (const toml::array* a = n.as_array()) {
        d.kind = Doc::Kind::kArray;
        d.items.reserve(a->size());
        for (const toml::node& item : *a) {
          d.items.emplace_back();
          if (auto e = FromToml(item, depth + 1, d.items.back())) return e;
        }
      } else {
        d.kind = Doc::Kind::kTable;
        for (const auto& [k, v] : *n.as_table()) {
          if (auto bad = BadString(k.str(), "a key")) return TomlError{LocOf(k.source()), *bad};
          d.fields.push_back({std::string(k.str()), Doc{}});
          d.key_locs.push_back(LocOf(k.source()));
          if (auto e = FromToml(v, depth + 1, d.fields.back().second)) return e;
        }
      }
      break;
    default:
      d.kind = Doc::Kind::kOther;
      break;
  }
  return std::nullopt;
}

// ---- JSON ----

// Follows the bytes nlohmann's lexer reads and remembers where the value
// being read began: nlohmann calls back right after the token of a value
// (a number after one byte of lookahead, never a structural one that
// matters here), so the start of the last token that can begin a value
// ('"', '{', '[', or the first byte of a number or literal) is the
// position of the value or key just reported.
class Tracker {
 public:
  void Consume(unsigned char c) {
    // Columns count characters: UTF-8 continuation bytes add none.
    if (c == '\n') {
      ++line_;
      col_ = 0;
    } else if ((c & 0xc0) != 0x80) {
      ++col_;
    }
    if (in_string_) {
      if (escape_) escape_ = false;
      else if (c == '\\') escape_ = true;
      else if (c == '"') in_string_ = false;
      return;
    }
    switch (c) {
      case '"':
        Start();
        in_string_ = true;
        bare_ = false;
        break;
      case '{':
      case '[':
        Start();
        bare_ = false;
        break;
      case '}': case ']': case ',': case ':':
      case ' ': case '\t': case '\n': case '\r':
        bare_ = false;
        break;
      default:
        if (!bare_) Start();
        bare_ = true;
        break;
    }
  }
  int start_line() const { return start_line_; }
  int start_col() const { return start_col_; }

 private:
  void Start() {
    start_line_ = line_;
    start_col_ = col_;
  }
  int line_ = 1, col_ = 0;
  int start_line_ = 1, start_col_ = 1;
  bool in_string_ = false, escape_ = false, bare_ = false;
};

// An input iterator over the text that tells the tracker each byte the
// lexer takes (nlohmann's iterator input adapter advances it once per
// byte read).
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, Tracker* t) : p_(p), t_(t) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    t_->Consume(static_cast<unsigned char>(*p_));
    ++p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  // (C++20 rewrites `a != b`, which is what nlohmann asks, as !(a == b).)
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) {
    return a.p_ == b.p_;
  }

 private:
  const char* p_;
  Tracker* t_;
};

// Line and column (characters) of byte `offset` of `text`.
Loc LocAtByte(std::string_view text, size_t offset) {
  Loc l{1, 0, ""};
  for (size_t i = 0; i < text.size() && i <= offset; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && i < offset) {
      ++l.line;
      l.col = 0;
    } else if ((c & 0xc0) != 0x80) {
      ++l.col;
    }
  }
  if (l.col == 0) l.col = 1;
  return l;
}

// Builds the Doc from nlohmann's SAX events; the first error stops it.
class JsonBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonBuilder(std::string_view text, const Tracker* t) : text_(text), t_(t) {}

  bool null() override { return Scalar(Doc::Kind::kOther); }
  bool boolean(bool v) override {
    Doc* d = Value(Doc::Kind::kBool);
    if (d) d->b = v;
    return d != nullptr;
  }
  bool number_integer(number_integer_t v) override {
    Doc* d = Value(Doc::Kind::kInt);
    if (d) {
      d->i = v;
      d->num_text = std::to_string(v);
    }
    return d != nullptr;
  }
  bool number_unsigned(number_unsigned_t v) override {
    Doc* d = Value(Doc::Kind::kInt);
    if (d) {
      d->num_text = std::to_string(v);
      if (v > static_cast<uint64_t>(INT64_MAX)) d->int_overflow = true;
      else d->i = static_cast<int64_t>(v);
    }
    return d != nullptr;
  }
  bool number_float(number_float_t v, const string_t& raw) override {
    // An integer written beyond uint64 reaches here as a float: it is an
    // integer out of every range, not a float.
    bool integral = !raw.empty();
    for (size_t k = 0; k < raw.size(); ++k)
      integral = integral && (std::isdigit(static_cast<unsigned char>(raw[k])) ||
                              (k == 0 && raw[k] == '-'));
    Doc* d = Value(integral ? Doc::Kind::kInt : Doc::Kind::kFloat);
    if (d) {
      d->num_text = raw;
      if (integral) d->int_overflow = true;
      else d->f = v;
    }
    return d != nullptr;
  }
  bool string(string_t& v) override {
    if (auto bad = BadString(v, "a string")) return Fail(Here(), *bad);
    Doc* d = Value(Doc::Kind::kString);
    if (d) d->s = std::move(v);
    return d != nullptr;
  }
  bool binary(binary_t&) override { return Scalar(Doc::Kind::kOther); }
  bool start_object(std::size_t) override { return Open(Doc::Kind::kTable); }
  bool key(string_t& k) override {
    Loc here = Here();
    if (auto bad = BadString(k, "a key")) return Fail(here, *bad);
    Frame& f = stack_.back();
    here.key_path = f.doc->loc.key_path == "/" ? "/" + k : f.doc->loc.key_path + "/" + k;
    if (!f.keys.insert(k).second)
      return Fail(here, fmt::format("duplicate key \"{}\"", k));
    pending_key_ = std::move(k);
    pending_loc_ = std::move(here);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Doc::Kind::kArray); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5:
    // syntax error while parsing value - ..." -> the part after the
    // position, which we give ourselves.
    if (size_t close = what.find("] "); what.starts_with("[json.exception.") &&
                                        close != std::string::npos)
      what.erase(0, close + 2);
    if (size_t col = what.find(", column "); what.starts_with("parse error at line ") &&
                                             col != std::string::npos) {
      size_t colon = what.find(": ", col);
      if (colon != std::string::npos) what = "parse error: " + what.substr(colon + 2);
    }
    if (ex.id == 406) {
      // A float beyond double ("1e999"): where the number began.
      return Fail(Here(), what);
    }
    return Fail(LocAtByte(text_, position == 0 ? 0 : position - 1), what);
  }

  bool failed() const { return !error_.empty(); }
  const std::string& error_message() const { return error_; }
  const Loc& error_loc() const { return error_loc_; }
  Doc& root() { return root_; }

 private:
  struct Frame {
    Doc* doc;
    std::set<std::string> keys;
  };

  Loc Here() const { return Loc{t_->start_line(), t_->start_col(), ""}; }

  bool Fail(Loc loc, std::string msg) {
    if (error_.empty()) {
      error_ = std::move(msg);
      error_loc_ = std::move(loc);
    }
    return false;
  }

  // A new value at the current place: the root, the next array item or
  // the value of the pending key.
  Doc* Value(Doc::Kind kind) {
    Doc* d = nullptr;
    std::string path;
    Loc loc = Here();
    if (stack_.empty()) {
      if (have_root_) return nullptr;  // nlohmann reports trailing input itself
      have_root_ = true;
      d = &root_;
      path = "/";
    } else {
      Doc* parent = stack_.back().doc;
      const std::string& base = parent->loc.key_path == "/" ? "" : parent->loc.key_path;
      if (parent->kind == Doc::Kind::kArray) {
        path = fmt::format("{}/{}", base, parent->items.size());
        parent->items.emplace_back();
        d = &parent->items.back();
      } else {
        path = pending_loc_.key_path;
        parent->fields.push_back({std::move(pending_key_), Doc{}});
        parent->key_locs.push_back(pending_loc_);
        d = &parent->fields.back().second;
      }
    }
    d->kind = kind;
    d->json = true;
    d->loc = Loc{loc.line, loc.col, std::move(path)};
    return d;
  }
  bool Scalar(Doc::Kind kind) { return Value(kind) != nullptr; }
  bool Open(Doc::Kind kind) {
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      return Fail(Here(), fmt::format("nesting deeper than {} levels", kMaxDepth));
    Doc* d = Value(kind);
    if (d == nullptr) return false;
    stack_.push_back(Frame{d, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  const Tracker* t_;
  Doc root_;
  bool have_root_ = false;
  std::vector<Frame> stack_;
  std::string pending_key_;
  Loc pending_loc_;
  std::string error_;
  Loc error_loc_;
};

std::string Message(const std::string& name, const Loc& loc, std::string_view msg) {
  return fmt::format("{}: {}", Where(name, loc), msg);
}

}  // namespace

std::string_view Doc::KindName() const {
  switch (kind) {
    case Kind::kBool: return "a boolean";
    case Kind::kInt: return "an integer";
    case Kind::kFloat: return "a float";
    case Kind::kString: return "a string";
    case Kind::kArray: return "an array";
    case Kind::kTable: return "a table";
    case Kind::kOther: break;
  }
  return "a value of another type";
}

std::optional<int64_t> Doc::IntIn(int64_t lo, int64_t hi) const {
  if (kind != Kind::kInt || int_overflow || i < lo || i > hi) return std::nullopt;
  return i;
}

std::string Where(const std::string& name, const Loc& loc) {
  if (!loc.key_path.empty())
    return fmt::format("{}:{}:{}: {}", name, loc.line, loc.col, loc.key_path);
  return fmt::format("{}:{}:{}", name, loc.line, loc.col);
}

Result<Doc, std::string> ParseTomlDoc(std::string_view text, const std::string& name) {
  if (text.size() > kMaxFile)
    return Unexpected(fmt::format("{}: input larger than {} bytes", name, kMaxFile));
  if (auto deep = TooDeepToml(text))
    return Unexpected(Message(name, *deep, fmt::format("nesting deeper than {} levels", kMaxDepth)));
  try {
#if TOML_EXCEPTIONS
    toml::table t;
    try {
      t = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
      return Unexpected(Message(name, LocOf(e.source()), e.description()));
    }
#else
    toml::parse_result r = toml::parse(text, name);
    if (!r) return Unexpected(Message(name, LocOf(r.error().source()), r.error().description()));
    const toml::table& t = r.table();
#endif
    Doc d;
    if (auto e = FromToml(t, 0, d)) return Unexpected(Message(name, e->loc, e->message));
    if (d.loc.line == 0) d.loc = Loc{1, 1, ""};
    return d;
  } catch (const std::exception& e) {
    return Unexpected(fmt::format("{}:1:1: cannot parse: {}", name, e.what()));
  }
}

Result<Doc, std::string> ParseJsonDoc(std::string_view text, const std::string& name) {
  if (text.size() > kMaxFile)
    return Unexpected(fmt::format("{}: input larger than {} bytes", name, kMaxFile));
  try {
    Tracker tracker;
    JsonBuilder builder(text, &tracker);
    CountingIterator first(text.data(), &tracker);
    CountingIterator last(text.data() + text.size(), &tracker);
    const bool ok = nlohmann::json::sax_parse(first, last, &builder);
    if (builder.failed()) {
      Loc loc = builder.error_loc();
      return Unexpected(Message(name, loc, builder.error_message()));
    }
    if (!ok) return Unexpected(fmt::format("{}:1:1: cannot parse", name));
    return std::move(builder.root());
  } catch (const std::exception& e) {
    return Unexpected(fmt::format("{}:1:1: cannot parse: {}", name, e.what()));
  }
}

bool IsJsonName(std::string_view name) { return name.ends_with(".json"); }

namespace {

std::string TooLarge(const std::string& name) {
  return fmt::format("{}: input larger than {} bytes", name, kMaxFile);
}

// Reads `fd` to its end or to one byte past kMaxFile, whichever comes
// first: an endless device costs at most kMaxFile bytes of memory.
Result<std::string, std::string> ReadAll(int fd, const std::string& name, size_t size_hint) {
  std::string data;
  data.reserve(std::min(size_hint, kMaxFile));
  char buf[65536];
  for (;;) {
    const size_t room = kMaxFile + 1 - data.size();
    const ssize_t n = read(fd, buf, std::min(sizeof buf, room));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unexpected(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
    }
    if (n == 0) break;
    // Refused before appending: the string never grows past kMaxFile.
    if (data.size() + static_cast<size_t>(n) > kMaxFile) return Unexpected(TooLarge(name));
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

}  // namespace

Result<std::string, std::string> ReadFile(const std::string& path) {
  // A FIFO blocks here until it has a writer, as for cat(1): the shell's
  // <(...) is one.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Unexpected(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return Unexpected(fmt::format("{}: cannot read: {}", path, std::strerror(e)));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return Unexpected(fmt::format("{}: is a directory, not a file", path));
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxFile) {
    close(fd);
    return Unexpected(TooLarge(path));
  }
  auto data = ReadAll(fd, path, S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0);
  close(fd);
  return data;
}

Result<std::string, std::string> ReadStdin(const std::string& name) {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) != 0)
    return Unexpected(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return Unexpected(fmt::format("{}: is a directory, not a file", name));
  return ReadAll(STDIN_FILENO, name, S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0);
}

}  // namespace pathwarden::input
