// Scenario files: validation of the document tree into a Scenario.
// Spec: docs/scenario-spec.md (format 1) and docs/scenario-format.md.

#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "pathwarden/scenario.h"
#include "src/base/lexical_path.h"
#include "src/input/doc.h"
#include "src/scenario/names.h"
#include "src/scenario/parser.h"

namespace pathwarden {
namespace scenario_internal {
namespace {

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

}  // namespace

using input::Doc;

Result<Scenario, std::string> Parser::Run(const Doc& root) {
  Scenario s;
  s.file = name_;
  ParseTop(root, s);
  if (!errors_.empty()) return Unexpected(fmt::format("{}", fmt::join(errors_, "\n")));
  return s;
}

void Parser::ParseTop(const Doc& root, Scenario& s) {
  if (!CheckTable(root, "the scenario",
                  {"format", "description", "abi", "sysctl", "kernel", "node", "process", "step"}))
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

void Parser::ParseNode(const Doc& d, Scenario& s) {
  if (!CheckTable(d, "[[node]]",
                  {"path", "type", "mode", "uid", "gid", "acl", "default_acl", "target", "rdev",
                   "source", "mount_flags", "content", "attrs"}))
    return;
  NodeSpec n;
  n.loc = ToSourceLoc(d.loc);
  auto path = RequiredStr(d, "path", "[[node]]");
  if (!path) return;
  n.path = *path;
  if (!internal::IsNormalisedAbsolute(n.path)) {
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
    if (const Doc* v = d.Get(k)) Error(v->loc, fmt::format("\"{}\" {}", k, why));
  };
  const NodeType t = n.type;
  const bool is_dir = t == NodeType::kDir || t == NodeType::kTmpfs;
  if (t == NodeType::kBind) {
    for (auto k :
         {"mode", "uid", "gid", "acl", "default_acl", "target", "rdev", "content", "attrs"})
      forbid(k, "does not apply to a bind node (it takes only source and mount_flags)");
    auto src = Str(d.Get("source"), "source");
    if (!src) {
      if (!present("source")) Error(d.loc, "a bind node needs \"source\"");
      return;
    }
    if (!internal::IsNormalisedAbsolute(*src))
      Error(d.Get("source")->loc,
            fmt::format("bind source \"{}\" must be absolute and normalised", *src));
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

std::optional<LayerSpec> Parser::ParseLayer(const Doc& d) {
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
      if (!CheckTable(r, "a rule", {"path", "access", "nofollow", "port"})) continue;
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

void Parser::ParseProcess(const Doc& d, Scenario& s) {
  if (!CheckTable(d, "[[process]]",
                  {"name", "parent", "uid", "gid", "groups", "caps", "cwd", "umask", "layer",
                   "userns", "userns_gids"}))
    return;
  ProcessSpec p;
  p.loc = ToSourceLoc(d.loc);
  auto name = RequiredStr(d, "name", "[[process]]");
  if (!name) return;
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
      Error(d.Get("parent")->loc,
            fmt::format("parent \"{}\" is not a process defined earlier", *parent));
    p.parent = *parent;
    for (auto k : {"uid", "gid", "groups", "caps", "userns", "userns_gids"})
      if (const Doc* v = d.Get(k))
        Error(v->loc,
              fmt::format(
                  "a process with a parent inherits \"{}\" (it may add only layer, umask and cwd)",
                  k));
  }
  if (auto u = Int(d.Get("uid"), "uid", 0, 0xfffffffe)) p.uid = static_cast<uint32_t>(*u);
  if (auto g = Int(d.Get("gid"), "gid", 0, 0xfffffffe)) p.gid = static_cast<uint32_t>(*g);
  if (const Doc* groups = d.Get("groups")) {
    if (groups->kind != Doc::Kind::kArray) {
      Error(groups->loc, "\"groups\" must be an array of integers");
    } else {
      for (const Doc& g : groups->items)
        if (auto v = Int(&g, "groups", 0, 0xfffffffe))
          p.groups.push_back(static_cast<uint32_t>(*v));
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
  // A user namespace of its own: the maps as uid_map takes them; its uid
  // and gid must map (its groups need not: unshare() keeps them).
  for (auto [key, map] : {std::pair{"userns", &p.userns_uids}, {"userns_gids", &p.userns_gids}}) {
    const Doc* v = d.Get(key);
    auto text = Str(v, key);
    if (!text) continue;
    auto m = ParseIdMap(*text, fmt::format("\"{}\"", key));
    if (!m) {
      Error(v->loc, m.error());
      continue;
    }
    *map = std::move(*m);
  }
  if (!p.userns_gids.empty() && p.userns_uids.empty())
    Error(d.Get("userns_gids")->loc, "\"userns_gids\" needs \"userns\"");
  if (auto ns = p.UserNs()) {
    const Doc* where = d.Get("userns");
    if (!ns->NamedUidMaps(p.uid))
      Error(d.Get("uid") ? d.Get("uid")->loc : where->loc,
            fmt::format("uid {} has no mapping in \"userns\" ({})", p.uid, ns->Describe()));
    if (!ns->NamedGidMaps(p.gid))
      Error(d.Get("gid") ? d.Get("gid")->loc : where->loc,
            fmt::format("gid {} has no mapping in \"userns\" ({})", p.gid, ns->Describe()));
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

}  // namespace scenario_internal

using scenario_internal::FlagFamily;
using scenario_internal::Parser;

Result<Scenario, std::string> ParseScenario(std::string_view text, const std::string& name,
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
