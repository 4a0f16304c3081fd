// Scenario files out: a TOML rendering that parses back to the same
// scenario (used for files the fuzzer writes and for reports).

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/scenario/names.h"

namespace pathwarden {
namespace {

// A TOML basic string with the escapes TOML requires.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Names(landlock::AccessMask m, int n,
                  std::string_view (*name)(int)) {
  std::string s = "[";
  bool first = true;
  for (int i = 0; i < n; ++i) {
    if (!(m & (1u << i))) continue;
    if (!first) s += ", ";
    first = false;
    s += Quote(name(i));
  }
  return s + "]";
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
      s += fmt::format("{{ path = {}, access = {}{} }}", Quote(r.path),
                       Names(r.access, landlock::kNumFsRights, landlock::FsRightName),
                       r.nofollow ? ", nofollow = true" : "");
    }
  }
  return s + "] }";
}

std::string MountFlags(uint32_t f) {
  std::vector<std::string> v;
  if (f & kMountRdonly) v.push_back("\"ro\"");
  if (f & kMountNoexec) v.push_back("\"noexec\"");
  if (f & kMountNosuid) v.push_back("\"nosuid\"");
  if (f & kMountNodev) v.push_back("\"nodev\"");
  if (f & kMountNosymfollow) v.push_back("\"nosymfollow\"");
  return "[" + fmt::format("{}", fmt::join(v, ", ")) + "]";
}

}  // namespace

std::string ScenarioToToml(const Scenario& s) {
  std::string out = "format = 1\n";
  if (!s.description.empty()) out += "description = " + Quote(s.description) + "\n";
  if (s.abi != landlock::kAbiLatest) out += fmt::format("abi = {}\n", s.abi);
  if (s.sysctl != Sysctls{}) {
    out += "\n[sysctl]\n";
    for (const SysctlField& f : kSysctlFields)
      if (s.sysctl.*f.value) out += fmt::format("{} = {}\n", f.name, s.sysctl.*f.value);
  }
  for (const NodeSpec& n : s.nodes) {
    out += "\n[[node]]\npath = " + Quote(n.path) + "\n";
    if (n.type != NodeType::kFile) out += fmt::format("type = \"{}\"\n", NodeTypeName(n.type));
    if (n.type == NodeType::kBind) {
      out += "source = " + Quote(n.source) + "\n";
    } else {
      if (n.mode) out += fmt::format("mode = 0o{:o}\n", *n.mode);
      if (n.has_owner) out += fmt::format("uid = {}\ngid = {}\n", n.uid, n.gid);
    }
    if (n.acl) out += "acl = " + Quote(AclEntriesToText(*n.acl)) + "\n";
    if (n.default_acl) out += "default_acl = " + Quote(AclEntriesToText(*n.default_acl)) + "\n";
    if (n.type == NodeType::kSymlink) out += "target = " + Quote(n.target) + "\n";
    if (n.type == NodeType::kChar || n.type == NodeType::kBlock)
      out += fmt::format("rdev = \"{}:{}\"\n", n.rdev_major, n.rdev_minor);
    if (n.mount_flags) out += "mount_flags = " + MountFlags(n.mount_flags) + "\n";
    if (!n.content.empty()) out += "content = " + Quote(n.content) + "\n";
    if (n.attrs) {
      std::vector<std::string> a;
      if (n.attrs & kAttrImmutable) a.push_back("\"immutable\"");
      if (n.attrs & kAttrAppend) a.push_back("\"append\"");
      out += "attrs = [" + fmt::format("{}", fmt::join(a, ", ")) + "]\n";
    }
  }
  for (const ProcessSpec& p : s.processes) {
    out += "\n[[process]]\nname = " + Quote(p.name) + "\n";
    if (!p.parent.empty()) {
      out += "parent = " + Quote(p.parent) + "\n";
    } else {
      out += fmt::format("uid = {}\ngid = {}\n", p.uid, p.gid);
      if (!p.groups.empty()) out += fmt::format("groups = [{}]\n", fmt::join(p.groups, ", "));
      if (p.caps) {
        std::vector<std::string> c;
        for (int i = 0; i <= kCapLast; ++i)
          if (*p.caps & CapBit(i)) c.push_back(Quote(CapName(i)));
        out += "caps = [" + fmt::format("{}", fmt::join(c, ", ")) + "]\n";
      }
    }
    if (p.cwd) out += "cwd = " + Quote(*p.cwd) + "\n";
    if (p.umask) out += fmt::format("umask = 0o{:o}\n", *p.umask);
    if (!p.layers.empty()) {
      std::vector<std::string> layers;
      for (const LayerSpec& l : p.layers) layers.push_back(LayerInline(l));
      out += "layer = [" + fmt::format("{}", fmt::join(layers, ", ")) + "]\n";
    }
  }
  for (const StepSpec& st : s.steps) {
    out += "\n[[step]]\n";
    if (st.as != "root") out += "as = " + Quote(st.as) + "\n";
    out += fmt::format("op = \"{}\"\n", OpName(st.op));
    switch (st.op) {
      case Op::kClose:
      case Op::kFtruncate:
      case Op::kIoctl:
      case Op::kSendFd:
      case Op::kFchdir:
      case Op::kBindTcp:
      case Op::kConnectTcp:
      case Op::kSignal:
      case Op::kConnectAbstract:
      case Op::kRestrict: break;
      default: out += "path = " + Quote(st.path) + "\n";
    }
    if (st.op == Op::kLink || st.op == Op::kRename || st.op == Op::kBindMount)
      out += "path2 = " + Quote(st.path2) + "\n";
    if (!st.dirfd.empty()) out += "dirfd = " + Quote(st.dirfd) + "\n";
    if (std::string flags = ShownStepFlags(st); !flags.empty())
      out += "flags = " + Quote(flags) + "\n";
    if (st.op == Op::kOpen || st.op == Op::kMknod || st.op == Op::kMkdir || st.op == Op::kChmod)
      out += fmt::format("mode = 0o{:o}\n", st.mode);
    if (st.op == Op::kMknod) {
      std::string_view t = st.mknod_type == NodeType::kDir ? "dir" : NodeTypeName(st.mknod_type);
      out += fmt::format("type = \"{}\"\n", t);
      if (st.mknod_type == NodeType::kChar || st.mknod_type == NodeType::kBlock)
        out += fmt::format("rdev = \"{}:{}\"\n", st.rdev_major, st.rdev_minor);
    }
    if (st.op == Op::kChown || st.op == Op::kLchown)
      out += fmt::format("uid = {}\ngid = {}\n", st.uid, st.gid);
    if (st.op == Op::kBindTcp || st.op == Op::kConnectTcp) out += fmt::format("port = {}\n", st.port);
    if (!st.fd.empty()) out += "fd = " + Quote(st.fd) + "\n";
    if (st.op == Op::kIoctl)
      out += "cmd = " + Quote(st.cmd_text.empty() ? scenario_internal::IoctlName(st.cmd) : st.cmd_text) + "\n";
    if (st.op == Op::kSymlink || st.op == Op::kSignal || st.op == Op::kConnectAbstract ||
        st.op == Op::kSendFd)
      out += "target = " + Quote(st.target) + "\n";
    if (st.layer) out += "layer = " + LayerInline(*st.layer) + "\n";
    if (st.times) {
      auto name = [](TimeSpec t) {
        return t == TimeSpec::kNow ? "now" : t == TimeSpec::kOmit ? "omit" : "set";
      };
      out += fmt::format("times = [\"{}\", \"{}\"]\n", name((*st.times)[0]), name((*st.times)[1]));
    }
    out += "expect = " + Quote(ErrnoName(st.expect)) + "\n";
  }
  return out;
}

}  // namespace pathwarden
