// landlockconfig files into Config: the schema
// (landlockconfig:schema/landlockconfig.json), the right names and the
// abi.* groups (landlockconfig:src/parser.rs), templates
// (landlockconfig:src/variable.rs), as ecosystem.md §1 describes them.

#include "src/policy/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace pathwarden::policy::internal {

using input::Doc;
using landlock::AccessMask;

std::string Template::Key() const {
  std::string k;
  for (const Token& t : tokens) {
    if (t.var) {
      k += "${" + t.text + "}";
      continue;
    }
    for (char c : t.text) {
      if (c == '$') k += '$';
      k += c;
    }
  }
  return k;
}

Result<void, std::string> CheckName(std::string_view name) {
  if (name.empty()) return Unexpected(std::string("name cannot be empty"));
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0]))
    return Unexpected(fmt::format(
        "invalid first character in name (must be ASCII alphabetic): {}", name));
  for (char c : name)
    if (!alpha(c) && !digit(c) && c != '_')
      return Unexpected(fmt::format(
          "invalid character(s) in name (must be ASCII alphanumeric or '_'): {}", name));
  return {};
}

Result<Template, std::string> ParseTemplate(std::string_view s) {
  Template t;
  std::string text;
  auto flush = [&] {
    if (!text.empty()) t.tokens.push_back({false, std::move(text)});
    text.clear();
  };
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      text += s[i++];
      continue;
    }
    if (s[i + 1] == '$') {  // "$$": one '$'
      text += '$';
      i += 2;
      continue;
    }
    if (s[i + 1] != '{') {  // a '$' before anything else is literal
      text += s[i++];
      continue;
    }
    size_t close = s.find('}', i + 2);
    if (close == std::string_view::npos)
      return Unexpected(fmt::format("unclosed variable reference starting at position {}", i));
    std::string_view name = s.substr(i + 2, close - i - 2);
    if (auto ok = CheckName(name); !ok)
      return Unexpected(fmt::format("invalid variable name at position {}: {}", i, ok.error()));
    flush();
    t.tokens.push_back({true, std::string(name)});
    i = close + 1;
  }
  flush();
  return t;
}

namespace {

// The abi.* groups (landlockconfig:src/parser.rs, rust-landlock's tables,
// which are the kernel's per ABI).
AccessMask FsGroup(std::string_view g, int abi) {
  const AccessMask all = landlock::RightsForAbi(abi).fs;
  if (g == "abi.all") return all;
  if (g == "abi.read_execute")
    return landlock::kFsExecute | landlock::kFsReadFile | landlock::kFsReadDir |
           (all & landlock::kFsRefer);
  return all & ~landlock::kFsExecute;  // abi.read_write
}

enum class Family { kFs, kNet, kScope };

class Parser {
 public:
  Parser(std::string name, bool json) : name_(std::move(name)), json_(json) {}

  Result<Config, std::string> Run(const Doc& root) {
    ParseTop(root);
    if (!errors_.empty()) return Unexpected(fmt::format("{}", fmt::join(errors_, "\n")));
    return std::move(c_);
  }

 private:
  // The key as this format spells it.
  std::string_view K(std::string_view json, std::string_view toml) const {
    return json_ ? json : toml;
  }
  void Error(const input::Loc& loc, std::string msg) {
    if (errors_.size() < 50) errors_.push_back(input::Where(name_, loc) + ": " + msg);
  }
  Origin OriginOf(const input::Loc& loc) const { return Origin{name_, loc.line, loc.col}; }

  bool CheckTable(const Doc& t, std::string_view what,
                  std::initializer_list<std::string_view> allowed) {
    if (t.kind != Doc::Kind::kTable) {
      Error(t.loc, fmt::format("{} must be a table, not {}", what, t.KindName()));
      return false;
    }
    bool ok = true;
    for (size_t i = 0; i < t.fields.size(); ++i) {
      const std::string& k = t.fields[i].first;
      bool known = false;
      for (auto a : allowed) known = known || a == k;
      if (!known) {
        Error(t.key_locs[i], fmt::format("unknown key \"{}\" in {}", k, what));
        ok = false;
      }
    }
    return ok;
  }

  // A non-empty array (landlockconfig's NonEmptySet), or nullptr after an
  // error.
  const std::vector<Doc>* NonEmptyArray(const Doc& d, std::string_view key) {
    if (d.kind != Doc::Kind::kArray) {
      Error(d.loc, fmt::format("\"{}\" must be an array, not {}", key, d.KindName()));
      return nullptr;
    }
    if (d.items.empty()) {
      Error(d.loc, fmt::format("\"{}\" must not be empty", key));
      return nullptr;
    }
    return &d.items;
  }

  const Doc* Required(const Doc& t, std::string_view key, std::string_view what) {
    const Doc* d = t.Get(key);
    if (d == nullptr) Error(t.loc, fmt::format("{} needs \"{}\"", what, key));
    return d;
  }

  // A list of right names of one family; groups need the file's abi.
  std::optional<AccessMask> Rights(const Doc& d, std::string_view key, Family fam) {
    const auto* items = NonEmptyArray(d, key);
    if (items == nullptr) return std::nullopt;
    AccessMask m = 0;
    bool ok = true;
    for (const Doc& item : *items) {
      if (item.kind != Doc::Kind::kString) {
        Error(item.loc, fmt::format("\"{}\" must hold right names, not {}", key, item.KindName()));
        ok = false;
        continue;
      }
      const std::string& n = item.s;
      const bool group = fam == Family::kFs
                             ? (n == "abi.all" || n == "abi.read_execute" || n == "abi.read_write")
                             : n == "abi.all";
      if (group) {
        if (abi_bad_) continue;  // its error said enough
        if (!c_.abi) {
          Error(item.loc, fmt::format("\"{}\" needs the top-level \"abi\" (variable 'abi' not found)", n));
          ok = false;
          continue;
        }
        const landlock::AbiRights r = landlock::RightsForAbi(*c_.abi);
        m |= fam == Family::kFs ? FsGroup(n, *c_.abi) : fam == Family::kNet ? r.net : r.scoped;
        continue;
      }
      std::optional<AccessMask> bit = fam == Family::kFs    ? landlock::FsRightFromName(n)
                                      : fam == Family::kNet ? landlock::NetRightFromName(n)
                                                            : landlock::ScopeFromName(n);
      if (!bit) {
        std::string_view kind = fam == Family::kFs    ? "filesystem right"
                                : fam == Family::kNet ? "network right"
                                                      : "scope";
        Error(item.loc, fmt::format("unknown {} \"{}\" in \"{}\"", kind, n, key));
        ok = false;
        continue;
      }
      m |= *bit;
    }
    if (!ok) return std::nullopt;
    return m;
  }

  void ParseTop(const Doc& root) {
    const std::string_view path_key = K("pathBeneath", "path_beneath");
    const std::string_view port_key = K("netPort", "net_port");
    if (!CheckTable(root, "the policy", {"abi", "variable", "ruleset", path_key, port_key}) &&
        root.kind != Doc::Kind::kTable)
      return;
    if (!root.Get("variable") && !root.Get("ruleset") && !root.Get(path_key) &&
        !root.Get(port_key))
      Error(root.loc, fmt::format("a policy needs at least one of \"variable\", \"ruleset\", "
                                  "\"{}\", \"{}\"",
                                  path_key, port_key));
    if (const Doc* abi = root.Get("abi")) {
      if (abi->kind != Doc::Kind::kInt) {
        Error(abi->loc, fmt::format("\"abi\" must be an integer, not {}", abi->KindName()));
      } else if (auto v = abi->IntIn(1, INT32_MAX)) {
        // Above the newest ABI known: the newest (rust-landlock's
        // ABI::from(i32)).
        c_.abi = static_cast<int>(std::min<int64_t>(*v, landlock::kAbiLatest));
      } else {
        Error(abi->loc, fmt::format("\"abi\" = {} is out of range [1, {}]", abi->num_text, INT32_MAX));
      }
      abi_bad_ = !c_.abi;
    }
    if (const Doc* vars = root.Get("variable"))
      if (const auto* items = NonEmptyArray(*vars, "variable"))
        for (const Doc& v : *items) ParseVariable(v);
    if (const Doc* rs = root.Get("ruleset"))
      if (const auto* items = NonEmptyArray(*rs, "ruleset"))
        for (const Doc& r : *items) ParseRuleset(r);
    if (const Doc* pb = root.Get(path_key))
      if (const auto* items = NonEmptyArray(*pb, path_key))
        for (const Doc& r : *items) ParsePathBeneath(r, path_key);
    if (const Doc* np = root.Get(port_key))
      if (const auto* items = NonEmptyArray(*np, port_key))
        for (const Doc& r : *items) ParseNetPort(r, port_key);
  }

  void ParseVariable(const Doc& v) {
    if (!CheckTable(v, "a variable", {"name", "literal"})) return;
    const Doc* name = Required(v, "name", "a variable");
    if (name == nullptr) return;
    if (name->kind != Doc::Kind::kString) {
      Error(name->loc, fmt::format("\"name\" must be a string, not {}", name->KindName()));
      return;
    }
    if (auto ok = CheckName(name->s); !ok) {
      Error(name->loc, ok.error());
      return;
    }
    // A variable without "literal" is an empty set (it expands to
    // nothing); one declared twice has both sets.
    std::set<std::string>& values = c_.variables[name->s];
    if (const Doc* lit = v.Get("literal")) {
      if (const auto* items = NonEmptyArray(*lit, "literal")) {
        for (const Doc& s : *items) {
          if (s.kind != Doc::Kind::kString) {
            Error(s.loc, fmt::format("\"literal\" must hold strings, not {}", s.KindName()));
            continue;
          }
          values.insert(s.s);
        }
      }
    }
  }

  void ParseRuleset(const Doc& r) {
    const std::string_view fs_key = K("handledAccessFs", "handled_access_fs");
    const std::string_view net_key = K("handledAccessNet", "handled_access_net");
    if (!CheckTable(r, "a ruleset", {fs_key, net_key, "scoped"})) return;
    if (r.fields.empty()) {
      Error(r.loc, "empty ruleset");
      return;
    }
    if (const Doc* d = r.Get(fs_key))
      if (auto m = Rights(*d, fs_key, Family::kFs)) c_.handled_fs |= *m;
    if (const Doc* d = r.Get(net_key))
      if (auto m = Rights(*d, net_key, Family::kNet)) c_.handled_net |= *m;
    if (const Doc* d = r.Get("scoped"))
      if (auto m = Rights(*d, "scoped", Family::kScope)) c_.scoped |= *m;
  }

  // A rule's table: `family` rights ("allowedAccess") on each of the
  // items of `list_key` ("parent", "port"), which `add(item, rights)`
  // takes. Handled rights follow the rules (landlockconfig:
  // "Automatically augment and keep the ruleset consistent"), into
  // `handled`.
  template <class Add>
  void ParseRule(const Doc& r, std::string_view what, std::string_view list_key, Family family,
                 AccessMask& handled, Add add) {
    const std::string_view access_key = K("allowedAccess", "allowed_access");
    const std::string w = fmt::format("a \"{}\" entry", what);
    if (!CheckTable(r, w, {access_key, list_key})) return;
    const Doc* access = Required(r, access_key, w);
    const Doc* list = Required(r, list_key, w);
    if (access == nullptr || list == nullptr) return;
    auto m = Rights(*access, access_key, family);
    const auto* items = NonEmptyArray(*list, list_key);
    if (!m || items == nullptr) return;
    handled |= *m;
    for (const Doc& p : *items) add(p, *m);
  }

  void ParsePathBeneath(const Doc& r, std::string_view what) {
    ParseRule(r, what, "parent", Family::kFs, c_.handled_fs, [&](const Doc& p, AccessMask m) {
      if (p.kind != Doc::Kind::kString)
        return Error(p.loc, fmt::format("\"parent\" must hold strings, not {}", p.KindName()));
      auto t = ParseTemplate(p.s);
      if (!t) return Error(p.loc, fmt::format("\"parent\" \"{}\": {}", p.s, t.error()));
      PathEntry& e = c_.paths[t->Key()];
      e.parent = std::move(*t);
      e.access |= m;
      e.origins.push_back(OriginOf(p.loc));
    });
  }

  void ParseNetPort(const Doc& r, std::string_view what) {
    ParseRule(r, what, "port", Family::kNet, c_.handled_net, [&](const Doc& p, AccessMask m) {
      if (p.kind != Doc::Kind::kInt)
        return Error(p.loc, fmt::format("\"port\" must hold integers, not {}", p.KindName()));
      auto v = p.IntIn(0, 65535);
      if (!v) return Error(p.loc, fmt::format("port {} is out of range [0, 65535]", p.num_text));
      PortEntry& e = c_.ports[static_cast<uint64_t>(*v)];
      e.access |= m;
      e.origins.push_back(OriginOf(p.loc));
    });
  }

  std::string name_;
  bool json_;
  bool abi_bad_ = false;  // "abi" given but invalid
  Config c_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<Config, std::string> ParseConfig(const Doc& root, const std::string& name, bool json) {
  return Parser(name, json).Run(root);
}

void Compose(Config& into, const Config& other) {
  const AccessMask fs = into.handled_fs & other.handled_fs;
  const AccessMask net = into.handled_net & other.handled_net;
  for (auto it = into.paths.begin(); it != into.paths.end();) {
    it->second.access &= fs;
    it = it->second.access ? std::next(it) : into.paths.erase(it);
  }
  for (auto it = into.ports.begin(); it != into.ports.end();) {
    it->second.access &= net;
    it = it->second.access ? std::next(it) : into.ports.erase(it);
  }
  for (const auto& [key, e] : other.paths) {
    if (!(e.access & fs)) continue;
    PathEntry& mine = into.paths[key];
    mine.parent = e.parent;
    mine.access |= e.access & fs;
    mine.origins.insert(mine.origins.end(), e.origins.begin(), e.origins.end());
  }
  for (const auto& [port, e] : other.ports) {
    if (!(e.access & net)) continue;
    PortEntry& mine = into.ports[port];
    mine.access |= e.access & net;
    mine.origins.insert(mine.origins.end(), e.origins.begin(), e.origins.end());
  }
  for (const auto& [name, values] : other.variables)
    into.variables[name].insert(values.begin(), values.end());
  into.handled_fs = fs;
  into.handled_net = net;
  into.scoped &= other.scoped;
  if (other.abi && (!into.abi || *other.abi < *into.abi)) into.abi = other.abi;
}

std::string NormalisePath(std::string_view p) {
  const bool absolute = !p.empty() && p[0] == '/';
  std::vector<std::string_view> parts;
  bool leading_dot = false;
  size_t i = 0;
  bool first = true;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view c = p.substr(i, j - i);
    if (c == "." && first && !absolute) leading_dot = true;
    else if (!c.empty() && c != ".") parts.push_back(c);
    if (!c.empty()) first = false;
    i = j + 1;
  }
  std::string out = absolute ? "/" : leading_dot ? "." : "";
  for (std::string_view c : parts) {
    if (!out.empty() && out.back() != '/') out += '/';
    out += c;
  }
  return out;
}

Result<Policy, std::string> Resolve(const Config& c, const std::string& cwd) {
  Policy p;
  p.abi = c.abi;
  p.handled_fs = c.handled_fs;
  p.handled_net = c.handled_net;
  p.scoped = c.scoped;
  std::map<std::string, PathRule> paths;
  std::vector<std::string> errors;
  uint64_t expanded_paths = 0, expanded_bytes = 0;
  for (const auto& [key, e] : c.paths) {
    // The values of each reference, in order; the product in
    // lexicographic order of the value lists.
    std::vector<std::vector<std::string>> choices;
    bool ok = true;
    for (const Template::Token& t : e.parent.tokens) {
      if (!t.var) {
        choices.push_back({t.text});
        continue;
      }
      auto v = c.variables.find(t.text);
      if (v == c.variables.end()) {
        const Origin& o = e.origins.front();
        errors.push_back(fmt::format("{}:{}:{}: \"parent\" \"{}\": variable \"{}\" not found",
                                     o.file, o.line, o.col, key, t.text));
        ok = false;
        break;
      }
      choices.emplace_back(v->second.begin(), v->second.end());
    }
    if (!ok) continue;
    // An empty template ("") names no path, as landlockconfig's expansion
    // of no tokens gives none (variable.rs VecStringIterator: an empty
    // product); its rights stay handled. A variable whose value is ""
    // still names the path "", as there.
    if (choices.empty()) continue;
    bool empty = false;
    for (const auto& ch : choices) empty = empty || ch.empty();
    if (empty) continue;  // a variable without values: no path
    // The product is bounded before it is made: a 300-byte policy of
    // twelve references to two 4-value variables made 4^12 paths (53 s,
    // 5.7 GB), sixteen of them would fill any memory. Upper bounds,
    // saturating: the paths of this parent, and their bytes at most.
    auto mul = [](uint64_t a, uint64_t b) {
      return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
    };
    uint64_t count = 1, longest = 0;
    for (const auto& ch : choices) {
      count = mul(count, ch.size());
      size_t len = 0;
      for (const std::string& v : ch) len = std::max(len, v.size());
      longest = longest + len < longest ? UINT64_MAX : longest + len;
    }
    expanded_paths = expanded_paths + count < expanded_paths ? UINT64_MAX : expanded_paths + count;
    const uint64_t bytes = mul(count, longest);
    expanded_bytes = expanded_bytes + bytes < expanded_bytes ? UINT64_MAX : expanded_bytes + bytes;
    if (expanded_paths > kMaxExpandedPaths || expanded_bytes > input::kMaxFile) {
      const Origin& o = e.origins.front();
      errors.push_back(fmt::format(
          "{}:{}:{}: \"parent\" \"{}\": the variables expand to more than {} paths or {} bytes "
          "in the policy",
          o.file, o.line, o.col, key, kMaxExpandedPaths, input::kMaxFile));
      break;
    }
    std::vector<size_t> idx(choices.size(), 0);
    while (true) {
      std::string s;
      for (size_t k = 0; k < choices.size(); ++k) s += choices[k][idx[k]];
      std::string path = NormalisePath(s);
      // Relative: opened from the command's directory ("" stays "", which
      // opens nothing).
      if (!cwd.empty() && !path.empty() && path[0] != '/') path = NormalisePath(cwd + "/" + path);
      if (e.access) {
        PathRule& r = paths[path];
        r.path = path;
        r.access |= e.access;
        r.origins.insert(r.origins.end(), e.origins.begin(), e.origins.end());
      }
      size_t k = choices.size();
      while (k > 0) {
        --k;
        if (++idx[k] < choices[k].size()) break;
        idx[k] = 0;
        if (k == 0) {
          k = SIZE_MAX;
          break;
        }
      }
      if (k == SIZE_MAX || choices.empty()) break;
    }
  }
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
    return Unexpected(all);
  }
  for (auto& [path, r] : paths) p.paths.push_back(std::move(r));
  for (const auto& [port, e] : c.ports)
    if (e.access) p.ports.push_back(PortRule{port, e.access, e.origins});
  return p;
}

}  // namespace pathwarden::policy::internal
