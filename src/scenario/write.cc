// Scenario files out: a TOML rendering that parses back to the same
// scenario (used for files the fuzzer writes and for reports).

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/input/toml_text.h"
#include "src/scenario/names.h"

namespace pathwarden {
namespace {

using input::TomlArray;
using input::TomlString;

std::string Names(landlock::AccessMask m, int n, std::string_view (*name)(int)) {
  return TomlArray(scenario_internal::RightNames(m, n, name));
}

std::string BitArray(std::span<const scenario_internal::FlagBit> table, uint32_t bits) {
  return TomlArray(scenario_internal::BitNames(table, bits));
}

std::string LayerInline(const LayerSpec& l) {
  std::string s = "{ ";
  s += "handled_fs = " + Names(l.handled_fs, landlock::kNumFsRights, landlock::FsRightName);
  s += ", handled_net = " + Names(l.handled_net, landlock::kNumNetRights, landlock::NetRightName);
  s += ", scoped = " + Names(l.scoped, landlock::kNumScopes, landlock::ScopeName);
  s += ", rule = [";
  bool first = true;
  for (const RuleSpec& r : l.rules) {
    if (!first) s += ", ";
    first = false;
    if (r.is_port) {
      s += fmt::format("{{ port = {}, access = {} }}", r.port,
                       Names(r.access, landlock::kNumNetRights, landlock::NetRightName));
    } else {
      s += fmt::format("{{ path = {}, access = {}{} }}", TomlString(r.path),
                       Names(r.access, landlock::kNumFsRights, landlock::FsRightName),
                       r.nofollow ? ", nofollow = true" : "");
    }
  }
  return s + "] }";
}

}  // namespace

std::string ScenarioToToml(const Scenario& s) {
  std::string out = "format = 1\n";
  if (!s.description.empty()) out += "description = " + TomlString(s.description) + "\n";
  if (s.abi != landlock::kAbiLatest) out += fmt::format("abi = {}\n", s.abi);
  if (s.sysctl != Sysctls{}) {
    out += "\n[sysctl]\n";
    for (const SysctlField& f : kSysctlFields)
      if (s.sysctl.*f.value) out += fmt::format("{} = {}\n", f.name, s.sysctl.*f.value);
  }
  if (!s.kernel.Empty()) {
    out += "\n[kernel]\n";
    for (size_t i = 0; i < std::size(kKernelRuleFields); ++i)
      if (s.kernel.named[i])
        out += fmt::format("{} = \"{}\"\n", kKernelRuleFields[i].key,
                           kKernelRuleFields[i].ValueName(s.kernel.rules));
  }
  for (const NodeSpec& n : s.nodes) {
    out += "\n[[node]]\npath = " + TomlString(n.path) + "\n";
    if (n.type != NodeType::kFile) out += fmt::format("type = \"{}\"\n", NodeTypeName(n.type));
    if (n.type == NodeType::kBind) {
      out += "source = " + TomlString(n.source) + "\n";
    } else {
      if (n.mode) out += fmt::format("mode = 0o{:o}\n", *n.mode);
      if (n.has_owner) out += fmt::format("uid = {}\ngid = {}\n", n.uid, n.gid);
    }
    if (n.acl) out += "acl = " + TomlString(AclEntriesToText(*n.acl)) + "\n";
    if (n.default_acl) out += "default_acl = " + TomlString(AclEntriesToText(*n.default_acl)) + "\n";
    if (n.type == NodeType::kSymlink) out += "target = " + TomlString(n.target) + "\n";
    if (n.type == NodeType::kChar || n.type == NodeType::kBlock)
      out += fmt::format("rdev = \"{}:{}\"\n", n.rdev_major, n.rdev_minor);
    if (n.mount_flags)
      out += "mount_flags = " + BitArray(scenario_internal::MountFlagBits(), n.mount_flags) + "\n";
    if (!n.content.empty()) out += "content = " + TomlString(n.content) + "\n";
    if (n.attrs) out += "attrs = " + BitArray(scenario_internal::AttrBits(), n.attrs) + "\n";
  }
  for (const ProcessSpec& p : s.processes) {
    out += "\n[[process]]\nname = " + TomlString(p.name) + "\n";
    if (!p.parent.empty()) {
      out += "parent = " + TomlString(p.parent) + "\n";
    } else {
      out += fmt::format("uid = {}\ngid = {}\n", p.uid, p.gid);
      if (!p.groups.empty()) out += fmt::format("groups = [{}]\n", fmt::join(p.groups, ", "));
      if (p.caps) {
        std::vector<std::string> c;
        for (int i = 0; i <= kCapLast; ++i)
          if (*p.caps & CapBit(i)) c.push_back(CapName(i));
        out += "caps = " + TomlArray(c) + "\n";
      }
      auto map = [](const std::vector<IdRange>& m) {
        std::string t;
        for (const IdRange& r : m)
          t += fmt::format("{}{}:{}:{}", t.empty() ? "" : ",", r.inside, r.outside, r.count);
        return TomlString(t);
      };
      if (!p.userns_uids.empty()) out += "userns = " + map(p.userns_uids) + "\n";
      if (!p.userns_gids.empty()) out += "userns_gids = " + map(p.userns_gids) + "\n";
    }
    if (p.cwd) out += "cwd = " + TomlString(*p.cwd) + "\n";
    if (p.umask) out += fmt::format("umask = 0o{:o}\n", *p.umask);
    if (!p.layers.empty()) {
      std::vector<std::string> layers;
      for (const LayerSpec& l : p.layers) layers.push_back(LayerInline(l));
      out += "layer = [" + fmt::format("{}", fmt::join(layers, ", ")) + "]\n";
    }
  }
  for (const StepSpec& st : s.steps) {
    out += "\n[[step]]\n";
    if (st.as != "root") out += "as = " + TomlString(st.as) + "\n";
    out += fmt::format("op = \"{}\"\n", OpName(st.op));
    auto takes = [&](std::string_view key) { return scenario_internal::StepTakes(st.op, key); };
    if (takes("path")) out += "path = " + TomlString(st.path) + "\n";
    if (takes("path2")) out += "path2 = " + TomlString(st.path2) + "\n";
    if (!st.dirfd.empty()) out += "dirfd = " + TomlString(st.dirfd) + "\n";
    if (std::string flags = ShownStepFlags(st); !flags.empty())
      out += "flags = " + TomlString(flags) + "\n";
    if (takes("mode")) out += fmt::format("mode = 0o{:o}\n", st.mode);
    if (takes("type")) {
      out += fmt::format("type = \"{}\"\n", NodeTypeName(st.mknod_type));
      if (st.mknod_type == NodeType::kChar || st.mknod_type == NodeType::kBlock)
        out += fmt::format("rdev = \"{}:{}\"\n", st.rdev_major, st.rdev_minor);
    }
    if (takes("uid")) out += fmt::format("uid = {}\ngid = {}\n", st.uid, st.gid);
    if (takes("port")) out += fmt::format("port = {}\n", st.port);
    if (!st.fd.empty()) out += "fd = " + TomlString(st.fd) + "\n";
    if (takes("cmd"))
      out += "cmd = " + TomlString(st.cmd_text.empty() ? scenario_internal::IoctlName(st.cmd) : st.cmd_text) + "\n";
    if (takes("target")) out += "target = " + TomlString(st.target) + "\n";
    if (st.layer) out += "layer = " + LayerInline(*st.layer) + "\n";
    if (takes("name")) out += "name = " + TomlString(st.xattr_name) + "\n";
    if (st.xattr_acl) {
      out += "acl = " + TomlString(*st.xattr_acl) + "\n";
    } else if (takes("value") && !st.xattr_value.empty()) {
      // Bytes a TOML string cannot hold (NUL) or that are not text go in hex.
      bool text = true;
      for (unsigned char c : st.xattr_value) text = text && c >= 0x20 && c < 0x7f;
      if (text) {
        out += "value = " + TomlString(st.xattr_value) + "\n";
      } else {
        std::string hex;
        for (unsigned char c : st.xattr_value) hex += fmt::format("{:02x}", c);
        out += "value_hex = " + TomlString(hex) + "\n";
      }
    }
    if (st.xattr_flags) {
      std::string f;
      for (const auto& n : scenario_internal::XattrFlagNames())
        if (st.xattr_flags & n.value) f += (f.empty() ? "" : "|") + std::string(n.name);
      out += "xattr_flags = " + TomlString(f) + "\n";
    }
    if (st.attr_set) out += "attr_set = " + TomlString(scenario_internal::MountAttrText(st.attr_set)) + "\n";
    if (st.attr_clr) out += "attr_clr = " + TomlString(scenario_internal::MountAttrText(st.attr_clr)) + "\n";
    if (takes("offset")) out += fmt::format("offset = {}\nlen = {}\n", st.offset, st.len);
    if (st.times)
      out += fmt::format("times = [\"{}\", \"{}\"]\n", scenario_internal::TimeSpecName((*st.times)[0]),
                         scenario_internal::TimeSpecName((*st.times)[1]));
    out += "expect = " + TomlString(ErrnoName(st.expect)) + "\n";
  }
  return out;
}

}  // namespace pathwarden
