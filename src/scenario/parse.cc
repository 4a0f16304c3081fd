// Scenario files: validation of the document tree into a Scenario.
// Spec: docs/scenario-spec.md (format 1) and docs/scenario-format.md.

#include <sys/stat.h>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <set>
#include <span>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/input/doc.h"
#include "src/scenario/names.h"

namespace pathwarden {

using input::Doc;
using scenario_internal::FlagFamily;

namespace {

// Calls `fn` with each name of "A|B | C", blanks around each name trimmed
// (an empty one too, so that "A||B" can be refused).
template <typename Fn>
void ForEachFlagName(std::string_view text, Fn fn) {
  while (true) {
    const size_t bar = text.find('|');
    std::string_view name = text.substr(0, bar);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    fn(name);
    if (bar == std::string_view::npos) return;
    text.remove_prefix(bar + 1);
  }
}

// The keys of `[kernel]`.
constexpr auto kKernelKeys = [] {
  std::array<std::string_view, std::size(kKernelRuleFields)> keys{};
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = kKernelRuleFields[i].key;
  return keys;
}();

// The keys of `[sysctl]`.
constexpr auto kSysctlKeys = [] {
  std::array<std::string_view, std::size(kSysctlFields)> keys{};
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = kSysctlFields[i].name;
  return keys;
}();

// Where a fallocate step's range may end (see ParseStep()).
constexpr int64_t kMaxFallocateEnd = int64_t{1} << 20;

// "0a1b" to its bytes.
std::optional<std::string> FromHex(std::string_view h) {
  if (h.size() % 2) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) {
    const int hi = digit(h[i]), lo = digit(h[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi << 4 | lo);
  }
  return out;
}

SourceLoc ToSourceLoc(const input::Loc& l) { return SourceLoc{l.line, l.col, l.key_path}; }

// Is `p` an absolute, normalised path ("/", "/a/b"; no "//", ".", "..",
// trailing slash)?
bool IsNormalisedAbsolute(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  if (p == "/") return true;
  if (p.back() == '/') return false;
  size_t i = 1;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view c = p.substr(i, j - i);
    if (c.empty() || c == "." || c == "..") return false;
    i = j + 1;
  }
  return true;
}

class Parser {
 public:
  Parser(std::string name, bool json) : name_(std::move(name)), json_(json) {}

  Result<Scenario, std::string> Run(const Doc& root) {
    Scenario s;
    s.file = name_;
    ParseTop(root, s);
    if (!errors_.empty()) {
      std::string all;
      for (const auto& e : errors_) {
        if (!all.empty()) all += '\n';
        all += e;
      }
      return Unexpected(all);
    }
    return s;
  }

 private:
  std::string Where(const input::Loc& loc) const { return input::Where(name_, loc); }
  void Error(const input::Loc& loc, std::string msg) {
    if (errors_.size() < 50) errors_.push_back(Where(loc) + ": " + msg);
  }

  // Reports keys of `t` outside `allowed`; returns false if `t` is no table.
  bool CheckTable(const Doc& t, std::string_view what,
                  std::initializer_list<std::string_view> allowed) {
    return CheckTable(t, what, std::span(allowed.begin(), allowed.size()));
  }
  bool CheckTable(const Doc& t, std::string_view what,
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

  std::optional<int64_t> Int(const Doc* d, std::string_view key, int64_t lo,
                             int64_t hi) {
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

  std::optional<std::string> Str(const Doc* d, std::string_view key) {
    if (d == nullptr) return std::nullopt;
    if (d->kind != Doc::Kind::kString) {
      Error(d->loc, fmt::format("\"{}\" must be a string, not {}", key, d->KindName()));
      return std::nullopt;
    }
    return d->s;
  }

  std::optional<bool> Bool(const Doc* d, std::string_view key) {
    if (d == nullptr) return std::nullopt;
    if (d->kind != Doc::Kind::kBool) {
      Error(d->loc, fmt::format("\"{}\" must be a boolean, not {}", key, d->KindName()));
      return std::nullopt;
    }
    return d->b;
  }

  // Modes: integers (TOML 0o644); JSON also takes "0o644".
  std::optional<uint32_t> Mode(const Doc* d, std::string_view key,
                               uint32_t max) {
    if (d == nullptr) return std::nullopt;
    int64_t v = 0;
    if (d->kind == Doc::Kind::kInt) {
      if (d->int_overflow) {
        Error(d->loc, fmt::format("\"{}\" = {} is out of range (at most {:#o})", key, d->num_text, max));
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
      Error(d->loc, fmt::format("\"{}\" must be an integer mode (0o644), not {}", key, d->KindName()));
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

  std::vector<std::string> StrArray(const Doc* d, std::string_view key) {
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

  const std::vector<Doc>* TableArray(const Doc* d, std::string_view key) {
    if (d == nullptr) return nullptr;
    if (d->kind != Doc::Kind::kArray) {
      Error(d->loc, fmt::format("\"{}\" must be an array of tables ([[{}]]), not {}", key, key, d->KindName()));
      return nullptr;
    }
    return &d->items;
  }

  std::optional<std::vector<AclEntry>> Acl(const Doc* d, std::string_view key) {
    auto text = Str(d, key);
    if (!text) return std::nullopt;
    auto entries = PosixAcl::ParseEntries(*text);
    if (!entries) {
      Error(d->loc, fmt::format("\"{}\": {}", key, entries.error()));
      return std::nullopt;
    }
    return *entries;
  }

  std::optional<std::pair<uint32_t, uint32_t>> Rdev(const Doc* d) {
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

  void ParseTop(const Doc& root, Scenario& s) {
    if (!CheckTable(root, "the scenario",
                    {"format", "description", "abi", "sysctl", "kernel", "node",
                     "process", "step"}))
      return;
    const Doc* format = root.Get("format");
    if (format == nullptr) {
      Error(root.loc, "missing required key \"format\"");
    } else if (auto f = Int(format, "format", 1, 1)) {
      s.format = static_cast<int>(*f);
    }
    if (auto d = Str(root.Get("description"), "description")) {
      if (d->find('\n') != std::string::npos)
        Error(root.Get("description")->loc, "\"description\" is one line");
      s.description = *d;
    }
    if (auto abi = Int(root.Get("abi"), "abi", 1, landlock::kAbiLatest))
      s.abi = static_cast<int>(*abi);
    if (const Doc* sys = root.Get("sysctl")) {
      if (CheckTable(*sys, "[sysctl]", kSysctlKeys)) {
        for (const SysctlField& f : kSysctlFields)
          if (auto v = Int(sys->Get(f.name), f.name, 0, f.max))
            s.sysctl.*f.value = static_cast<int>(*v);
      }
    }
    if (const Doc* k = root.Get("kernel")) {
      if (CheckTable(*k, "[kernel]", kKernelKeys)) {
        for (size_t i = 0; i < std::size(kKernelRuleFields); ++i) {
          const KernelRuleField& f = kKernelRuleFields[i];
          const Doc* v = k->Get(f.key);
          auto name = Str(v, f.key);
          if (!name) continue;
          // names[0] is "unknown": a scenario names what a kernel does.
          size_t at = 1;
          while (at < f.names.size() && f.names[at] != *name) ++at;
          if (at == f.names.size()) {
            std::string allowed;
            for (size_t j = 1; j < f.names.size(); ++j)
              allowed += fmt::format("{}\"{}\"", j > 1 ? " or " : "", f.names[j]);
            Error(v->loc, fmt::format("\"{}\" = \"{}\": the rule is {}", f.key, *name, allowed));
            continue;
          }
          s.kernel.rules.*f.value = static_cast<EmptyFileCaps>(at);
          s.kernel.named[i] = true;
        }
      }
    }
    if (auto nodes = TableArray(root.Get("node"), "node"))
      for (const Doc& n : *nodes) ParseNode(n, s);
    if (auto procs = TableArray(root.Get("process"), "process"))
      for (const Doc& p : *procs) ParseProcess(p, s);
    if (auto steps = TableArray(root.Get("step"), "step"))
      for (const Doc& st : *steps) ParseStep(st, s);
  }

  void ParseNode(const Doc& d, Scenario& s) {
    if (!CheckTable(d, "[[node]]",
                    {"path", "type", "mode", "uid", "gid", "acl",
                     "default_acl", "target", "rdev", "source", "mount_flags",
                     "content", "attrs"}))
      return;
    NodeSpec n;
    n.loc = ToSourceLoc(d.loc);
    auto path = Str(d.Get("path"), "path");
    if (!path) {
      if (!d.Get("path")) Error(d.loc, "[[node]] needs \"path\"");
      return;
    }
    n.path = *path;
    if (!IsNormalisedAbsolute(n.path)) {
      Error(d.Get("path")->loc,
            fmt::format("node path \"{}\" must be absolute and normalised", n.path));
      return;
    }
    if (auto t = Str(d.Get("type"), "type")) {
      auto type = scenario_internal::NodeTypeFromName(*t);
      if (!type) {
        Error(d.Get("type")->loc, fmt::format("unknown node type \"{}\"", *t));
        return;
      }
      n.type = *type;
    }
    auto present = [&](std::string_view k) { return d.Get(k) != nullptr; };
    auto forbid = [&](std::string_view k, std::string_view why) {
      if (const Doc* v = d.Get(k))
        Error(v->loc, fmt::format("\"{}\" {}", k, why));
    };
    const NodeType t = n.type;
    const bool is_dir = t == NodeType::kDir || t == NodeType::kTmpfs;
    if (t == NodeType::kBind) {
      for (auto k : {"mode", "uid", "gid", "acl", "default_acl", "target",
                     "rdev", "content", "attrs"})
        forbid(k, "does not apply to a bind node (it takes only source and mount_flags)");
      auto src = Str(d.Get("source"), "source");
      if (!src) {
        if (!present("source")) Error(d.loc, "a bind node needs \"source\"");
        return;
      }
      if (!IsNormalisedAbsolute(*src))
        Error(d.Get("source")->loc, fmt::format("bind source \"{}\" must be absolute and normalised", *src));
      n.source = *src;
    } else {
      forbid("source", "applies only to bind nodes");
    }
    if ((t == NodeType::kTmpfs || t == NodeType::kBind) && n.path == "/")
      Error(d.loc, "the root cannot be covered by a mount");
    if (n.path == "/" && t != NodeType::kDir)
      Error(d.loc, "the node \"/\" can only be a dir (it changes the root's mode, owner or ACL)");
    if (auto m = Mode(d.Get("mode"), "mode", 07777)) n.mode = *m;
    if (t == NodeType::kSymlink) forbid("mode", "does not apply to a symlink");
    if (auto u = Int(d.Get("uid"), "uid", 0, 0xfffffffe)) {
      n.uid = static_cast<uint32_t>(*u);
      n.has_owner = true;
    }
    if (auto g = Int(d.Get("gid"), "gid", 0, 0xfffffffe)) {
      n.gid = static_cast<uint32_t>(*g);
      n.has_owner = true;
    }
    if (present("acl")) {
      if (t == NodeType::kSymlink)
        forbid("acl", "does not apply to a symlink (Linux has no ACLs on symlinks)");
      else
        n.acl = Acl(d.Get("acl"), "acl");
    }
    if (present("default_acl")) {
      if (!is_dir)
        forbid("default_acl", "applies to directories only");
      else
        n.default_acl = Acl(d.Get("default_acl"), "default_acl");
    }
    if (t == NodeType::kSymlink) {
      auto target = Str(d.Get("target"), "target");
      if (!target) {
        if (!present("target")) Error(d.loc, "a symlink node needs \"target\"");
      } else if (target->empty() || target->size() >= 4096 ||
                 target->find('\0') != std::string::npos) {
        Error(d.Get("target")->loc, "a symlink target is 1 to 4095 bytes without NUL");
      } else {
        n.target = *target;
      }
    } else {
      forbid("target", "applies only to symlinks");
    }
    if (t == NodeType::kChar || t == NodeType::kBlock) {
      if (auto r = Rdev(d.Get("rdev"))) std::tie(n.rdev_major, n.rdev_minor) = *r;
    } else {
      forbid("rdev", "applies only to char and block devices");
    }
    if (present("mount_flags")) {
      if (t != NodeType::kTmpfs && t != NodeType::kBind) {
        forbid("mount_flags", "applies only to tmpfs and bind nodes");
      } else {
        for (const std::string& f : StrArray(d.Get("mount_flags"), "mount_flags")) {
          if (auto bit = scenario_internal::BitFromName(scenario_internal::MountFlagBits(), f))
            n.mount_flags |= *bit;
          else
            Error(d.Get("mount_flags")->loc, fmt::format("unknown mount flag \"{}\"", f));
        }
      }
    }
    if (auto c = Str(d.Get("content"), "content")) {
      if (t != NodeType::kFile) forbid("content", "applies only to regular files");
      n.content = *c;
    }
    if (present("attrs")) {
      if (t != NodeType::kFile && t != NodeType::kDir) {
        forbid("attrs", "applies only to files and directories");
      } else {
        const auto table = scenario_internal::AttrBits();
        for (const std::string& a : StrArray(d.Get("attrs"), "attrs")) {
          if (auto bit = scenario_internal::BitFromName(table, a))
            n.attrs |= *bit;
          else
            Error(d.Get("attrs")->loc,
                  fmt::format("unknown attribute \"{}\" ({})", a,
                              fmt::join(scenario_internal::BitNames(table, ~0u), ", ")));
        }
      }
    }
    s.nodes.push_back(std::move(n));
  }

  std::optional<landlock::AccessMask> Rights(
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

  std::optional<LayerSpec> ParseLayer(const Doc& d) {
    if (!CheckTable(d, "a layer", {"handled_fs", "handled_net", "scoped", "rule"}))
      return std::nullopt;
    LayerSpec l;
    l.loc = ToSourceLoc(d.loc);
    auto fs = Rights(d.Get("handled_fs"), "handled_fs", landlock::FsRightFromName);
    auto net = Rights(d.Get("handled_net"), "handled_net", landlock::NetRightFromName);
    auto sc = Rights(d.Get("scoped"), "scoped", landlock::ScopeFromName);
    if (!fs || !net || !sc) return std::nullopt;
    l.handled_fs = *fs;
    l.handled_net = *net;
    l.scoped = *sc;
    if (auto rules = TableArray(d.Get("rule"), "rule")) {
      for (const Doc& r : *rules) {
        if (!CheckTable(r, "a rule", {"path", "access", "nofollow", "port"}))
          continue;
        RuleSpec rule;
        rule.loc = ToSourceLoc(r.loc);
        const bool has_path = r.Get("path") != nullptr;
        const bool has_port = r.Get("port") != nullptr;
        if (has_path == has_port) {
          Error(r.loc, "a rule has either \"path\" or \"port\"");
          continue;
        }
        if (r.Get("access") == nullptr) {
          Error(r.loc, "a rule needs \"access\"");
          continue;
        }
        if (has_path) {
          auto p = Str(r.Get("path"), "path");
          if (!p) continue;
          if (p->empty()) {
            Error(r.Get("path")->loc, "a rule path is not empty");
            continue;
          }
          rule.path = *p;
          if (auto nf = Bool(r.Get("nofollow"), "nofollow")) rule.nofollow = *nf;
          auto acc = Rights(r.Get("access"), "access", landlock::FsRightFromName);
          if (!acc) continue;
          rule.access = *acc;
        } else {
          if (r.Get("nofollow")) Error(r.Get("nofollow")->loc, "\"nofollow\" applies to path rules");
          auto port = Int(r.Get("port"), "port", 0, 65535);
          if (!port) continue;
          rule.is_port = true;
          rule.port = static_cast<uint64_t>(*port);
          auto acc = Rights(r.Get("access"), "access", landlock::NetRightFromName);
          if (!acc) continue;
          rule.access = *acc;
        }
        l.rules.push_back(std::move(rule));
      }
    }
    return l;
  }

  void ParseProcess(const Doc& d, Scenario& s) {
    if (!CheckTable(d, "[[process]]",
                    {"name", "parent", "uid", "gid", "groups", "caps", "cwd",
                     "umask", "layer"}))
      return;
    ProcessSpec p;
    p.loc = ToSourceLoc(d.loc);
    auto name = Str(d.Get("name"), "name");
    if (!name) {
      if (!d.Get("name")) Error(d.loc, "[[process]] needs \"name\"");
      return;
    }
    if (name->empty() || *name == "root") {
      Error(d.Get("name")->loc, fmt::format("process name \"{}\" is reserved or empty", *name));
      return;
    }
    for (const auto& other : s.processes)
      if (other.name == *name) {
        Error(d.Get("name")->loc, fmt::format("process \"{}\" is defined twice", *name));
        return;
      }
    p.name = *name;
    if (auto parent = Str(d.Get("parent"), "parent")) {
      bool found = *parent == "root";
      for (const auto& other : s.processes) found = found || other.name == *parent;
      if (!found)
        Error(d.Get("parent")->loc, fmt::format("parent \"{}\" is not a process defined earlier", *parent));
      p.parent = *parent;
      for (auto k : {"uid", "gid", "groups", "caps"})
        if (const Doc* v = d.Get(k))
          Error(v->loc, fmt::format("a process with a parent inherits \"{}\" (it may add only layer, umask and cwd)", k));
    }
    if (auto u = Int(d.Get("uid"), "uid", 0, 0xfffffffe)) p.uid = static_cast<uint32_t>(*u);
    if (auto g = Int(d.Get("gid"), "gid", 0, 0xfffffffe)) p.gid = static_cast<uint32_t>(*g);
    if (const Doc* groups = d.Get("groups")) {
      if (groups->kind != Doc::Kind::kArray) {
        Error(groups->loc, "\"groups\" must be an array of integers");
      } else {
        for (const Doc& g : groups->items)
          if (auto v = Int(&g, "groups", 0, 0xfffffffe)) p.groups.push_back(static_cast<uint32_t>(*v));
      }
    }
    if (const Doc* caps = d.Get("caps")) {
      uint64_t set = 0;
      for (const std::string& c : StrArray(caps, "caps")) {
        auto cap = CapFromName(c);
        if (!cap) {
          Error(caps->loc, fmt::format("unknown capability \"{}\"", c));
          continue;
        }
        set |= CapBit(*cap);
      }
      p.caps = set;
    }
    if (auto cwd = Str(d.Get("cwd"), "cwd")) {
      if (cwd->empty()) Error(d.Get("cwd")->loc, "\"cwd\" is not empty");
      p.cwd = *cwd;
    }
    if (auto um = Mode(d.Get("umask"), "umask", 0777)) p.umask = *um;
    if (auto layers = TableArray(d.Get("layer"), "layer"))
      for (const Doc& l : *layers)
        if (auto layer = ParseLayer(l)) p.layers.push_back(std::move(*layer));
    s.processes.push_back(std::move(p));
  }

  void ParseStep(const Doc& d, Scenario& s) {
    if (d.kind != Doc::Kind::kTable) {
      CheckTable(d, "[[step]]", {});
      return;
    }
    StepSpec st;
    st.loc = ToSourceLoc(d.loc);
    auto op_name = Str(d.Get("op"), "op");
    if (!op_name) {
      if (!d.Get("op")) Error(d.loc, "[[step]] needs \"op\"");
      return;
    }
    auto op = OpFromName(*op_name);
    if (!op) {
      Error(d.Get("op")->loc, fmt::format("unknown operation \"{}\"", *op_name));
      return;
    }
    st.op = *op;
    const scenario_internal::StepKeys& keys = scenario_internal::StepKeysFor(st.op);
    for (size_t i = 0; i < d.fields.size(); ++i) {
      const std::string& k = d.fields[i].first;
      if (k == "as" || k == "op" || k == "expect" || scenario_internal::StepTakes(st.op, k))
        continue;
      Error(d.key_locs[i],
            scenario_internal::IsStepKey(k)
                ? fmt::format("\"{}\" does not apply to {}", k, *op_name)
                : fmt::format("unknown key \"{}\" in [[step]]", k));
    }
    for (auto k : keys.required)
      if (!d.Get(k)) Error(d.loc, fmt::format("{} needs \"{}\"", *op_name, k));

    if (auto as = Str(d.Get("as"), "as")) {
      bool found = *as == "root";
      for (const auto& p : s.processes) found = found || p.name == *as;
      if (!found) Error(d.Get("as")->loc, fmt::format("no process named \"{}\"", *as));
      st.as = *as;
    }
    if (auto p = Str(d.Get("path"), "path")) st.path = *p;
    if (auto p = Str(d.Get("path2"), "path2")) st.path2 = *p;
    if (auto p = Str(d.Get("dirfd"), "dirfd")) {
      if (p->empty()) Error(d.Get("dirfd")->loc, "\"dirfd\" names an fd");
      st.dirfd = *p;
    }
    if (auto p = Str(d.Get("fd"), "fd")) {
      if (p->empty()) Error(d.Get("fd")->loc, "\"fd\" names an fd");
      st.fd = *p;
    }
    if (auto p = Str(d.Get("target"), "target")) {
      st.target = *p;
      if (st.op == Op::kSignal || st.op == Op::kConnectAbstract || st.op == Op::kSendFd) {
        bool found = *p == "root";
        for (const auto& proc : s.processes) found = found || proc.name == *p;
        if (!found) Error(d.Get("target")->loc, fmt::format("no process named \"{}\"", *p));
      }
    }
    ParseFlags(d, st);
    switch (st.op) {
      case Op::kOpen:
      case Op::kMknod: st.mode = 0644; break;
      case Op::kMkdir: st.mode = 0755; break;
      default: break;
    }
    if (auto m = Mode(d.Get("mode"), "mode", 07777)) st.mode = *m;
    if (auto t = Str(d.Get("type"), "type")) {
      std::vector<std::string_view> names;
      bool found = false;
      for (NodeType type : scenario_internal::MknodTypes()) {
        names.push_back(NodeTypeName(type));
        if (names.back() == *t) {
          st.mknod_type = type;
          found = true;
        }
      }
      if (!found)
        Error(d.Get("type")->loc, fmt::format("mknod type \"{}\" is not {}", *t,
                                              scenario_internal::Alternatives(names)));
    }
    if (d.Get("rdev")) {
      if (auto r = Rdev(d.Get("rdev"))) std::tie(st.rdev_major, st.rdev_minor) = *r;
    }
    if (auto u = Int(d.Get("uid"), "uid", -1, 0xfffffffe)) st.uid = *u;
    if (auto g = Int(d.Get("gid"), "gid", -1, 0xfffffffe)) st.gid = *g;
    if (auto port = Int(d.Get("port"), "port", 0, 65535)) st.port = static_cast<uint32_t>(*port);
    if (auto c = Str(d.Get("cmd"), "cmd")) {
      auto cmd = scenario_internal::IoctlFromName(*c);
      if (!cmd) Error(d.Get("cmd")->loc, fmt::format("unknown ioctl command \"{}\"", *c));
      else st.cmd = *cmd;
      st.cmd_text = *c;
    }
    if (const Doc* l = d.Get("layer")) st.layer = ParseLayer(*l);
    if (const Doc* t = d.Get("times")) {
      auto v = StrArray(t, "times");
      const std::vector<std::string_view> names = scenario_internal::TimeSpecNames();
      if (v.size() != 2) {
        Error(t->loc, fmt::format("\"times\" holds two of \"{}\" (atime, mtime)",
                                  fmt::join(names, "\", \"")));
      } else {
        std::array<TimeSpec, 2> times{};
        for (int i = 0; i < 2; ++i) {
          if (auto ts = scenario_internal::TimeSpecFromName(v[i]))
            times[i] = *ts;
          else
            Error(t->loc, fmt::format("\"times\": \"{}\" is not {}", v[i],
                                      scenario_internal::Alternatives(names)));
        }
        st.times = times;
      }
    }
    ParseXattrKeys(d, st);
    if (auto o = Int(d.Get("offset"), "offset", INT64_MIN, INT64_MAX)) st.offset = *o;
    if (auto l = Int(d.Get("len"), "len", INT64_MIN, INT64_MAX)) st.len = *l;
    // Both executors keep a fallocated file small: a range the calls
    // refuse before allocating anything, or one ending within 1 MiB.
    if (st.op == Op::kFallocate && st.offset > 0 && st.len > 0 &&
        st.len <= INT64_MAX - st.offset && st.offset + st.len > kMaxFallocateEnd)
      Error(d.loc, fmt::format("fallocate: offset + len ends past {} (1 MiB); a range past "
                               "the largest file size (2^63 - 1) is allowed",
                               kMaxFallocateEnd));
    if (auto e = Str(d.Get("expect"), "expect")) {
      auto err = ErrnoFromName(*e);
      if (!err) Error(d.Get("expect")->loc, fmt::format("\"{}\" is neither ok nor an errno name", *e));
      else st.expect = *err;
      st.expect_text = *e;
    } else if (!d.Get("expect")) {
      Error(d.loc, "[[step]] needs \"expect\" (ok or an errno name)");
    }
    s.steps.push_back(std::move(st));
  }

  // `name`, `value`, `acl` and `xattr_flags` of the xattr calls.
  void ParseXattrKeys(const Doc& d, StepSpec& st) {
    if (auto n = Str(d.Get("name"), "name")) st.xattr_name = *n;
    if (auto v = Str(d.Get("value"), "value")) st.xattr_value = *v;
    if (auto h = Str(d.Get("value_hex"), "value_hex")) {
      if (d.Get("value")) Error(d.Get("value_hex")->loc, "\"value_hex\" and \"value\" exclude each other");
      auto bytes = FromHex(*h);
      if (!bytes) Error(d.Get("value_hex")->loc, "\"value_hex\" holds pairs of hex digits");
      else st.xattr_value = *bytes;
    }
    if (auto a = Str(d.Get("acl"), "acl")) {
      if (d.Get("value") || d.Get("value_hex"))
        Error(d.Get("acl")->loc, "\"acl\" excludes \"value\" and \"value_hex\"");
      if (st.xattr_name != "system.posix_acl_access" && st.xattr_name != "system.posix_acl_default")
        Error(d.Get("acl")->loc,
              "\"acl\" is the value of system.posix_acl_access or system.posix_acl_default");
      std::vector<AclEntry> entries;
      if (!a->empty()) {
        auto e = PosixAcl::ParseEntries(*a);
        if (!e) Error(d.Get("acl")->loc, fmt::format("\"acl\": {}", e.error()));
        else entries = *e;
      }
      // An empty `acl` is the empty value (it removes the ACL).
      st.xattr_value = entries.empty() ? std::string() : AclEntriesToXattr(entries);
      st.xattr_acl = *a;
    }
    auto text = Str(d.Get("xattr_flags"), "xattr_flags");
    if (!text) return;
    ForEachFlagName(*text, [&](std::string_view name) {
      bool found = false;
      for (const auto& f : scenario_internal::XattrFlagNames())
        if (f.name == name) {
          st.xattr_flags |= static_cast<uint32_t>(f.value);
          found = true;
        }
      if (!found)
        Error(d.Get("xattr_flags")->loc,
              fmt::format("\"xattr_flags\": {} is not XATTR_CREATE or XATTR_REPLACE", name));
    });
  }

  void ParseFlags(const Doc& d, StepSpec& st) {
    auto text = Str(d.Get("flags"), "flags");
    if (!text) return;
    st.flags_text = *text;
    FlagFamily fam = scenario_internal::FamilyFor(st.op);
    ForEachFlagName(*text, [&](std::string_view name) {
      bool found = false;
      if (fam == FlagFamily::kAccess) {
        for (const auto& f : scenario_internal::AccessModeNames())
          if (f.name == name) {
            st.access_mode |= static_cast<uint32_t>(f.value);
            found = true;
          }
      }
      for (const auto& f : scenario_internal::FlagsOf(fam))
        if (f.name == name) {
          st.flags |= f.value;
          found = true;
        }
      if (!found) {
        Error(d.Get("flags")->loc,
              name.empty() ? std::string("empty flag name in \"flags\"")
                           : fmt::format("flag {} does not apply to {}", name, OpName(st.op)));
      }
    });
  }

  std::string name_;
  bool json_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<Scenario, std::string> ParseScenario(std::string_view text,
                                                  const std::string& name,
                                                  bool json) {
  auto doc = json ? input::ParseJsonDoc(text, name) : input::ParseTomlDoc(text, name);
  if (!doc) return Unexpected(doc.error());
  return Parser(name, json).Run(*doc);
}

Result<Scenario, std::string> LoadScenarioFile(const std::string& path) {
  auto text = input::ReadFile(path);
  if (!text) return Unexpected(text.error());
  return ParseScenario(*text, path, input::IsJsonName(path));
}

std::string FormatStepFlags(const StepSpec& step) {
  FlagFamily fam = scenario_internal::FamilyFor(step.op);
  std::string s;
  auto add = [&](std::string_view n) {
    if (!s.empty()) s += '|';
    s += n;
  };
  const auto flags = scenario_internal::FlagsOf(fam);
  if (fam == FlagFamily::kOpen) {
    // The access mode: O_RDONLY, O_WRONLY, O_RDWR, or 3, which has no name
    // and is written as the two that OR to it.
    const uint64_t acc = step.flags & 3;
    if (acc == 3) {
      add(flags[1].name);
      add(flags[2].name);
    } else {
      add(flags[acc].name);
    }
  }
  if (fam == FlagFamily::kAccess) {
    if (step.access_mode == 0) add("F_OK");
    for (const auto& f : scenario_internal::AccessModeNames())
      if (f.value && (step.access_mode & f.value)) add(f.name);
  }
  for (const auto& f : flags) {
    if (f.value == 0 || (fam == FlagFamily::kOpen && f.value <= 2)) continue;
    if ((step.flags & f.value) == f.value) add(f.name);
  }
  return s;
}

}  // namespace pathwarden
