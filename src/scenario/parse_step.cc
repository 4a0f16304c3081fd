// The scenario parser's steps (parser.h): the operation, its keys and
// flags, the process that makes it and what it expects.

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pathwarden/acl.h"
#include "pathwarden/errno.h"
#include "src/input/doc.h"
#include "src/scenario/names.h"
#include "src/scenario/parser.h"

namespace pathwarden::scenario_internal {
namespace {

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

}  // namespace

using input::Doc;

void Parser::ParseStep(const Doc& d, Scenario& s) {
  if (d.kind != Doc::Kind::kTable) {
    CheckTable(d, "[[step]]", {});
    return;
  }
  StepSpec st;
  st.loc = ToSourceLoc(d.loc);
  auto op_name = RequiredStr(d, "op", "[[step]]");
  if (!op_name) return;
  auto op = OpFromName(*op_name);
  if (!op) {
    Error(d.Get("op")->loc, fmt::format("unknown operation \"{}\"", *op_name));
    return;
  }
  st.op = *op;
  const scenario_internal::StepKeys& keys = scenario_internal::StepKeysFor(st.op);
  for (size_t i = 0; i < d.fields.size(); ++i) {
    const std::string& k = d.fields[i].first;
    if (k == "as" || k == "op" || k == "expect" || scenario_internal::StepTakes(st.op, k)) continue;
    Error(d.key_locs[i], scenario_internal::IsStepKey(k)
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
    case Op::kMknod:
      st.mode = 0644;
      break;
    case Op::kMkdir:
      st.mode = 0755;
      break;
    default:
      break;
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
      Error(d.Get("type")->loc,
            fmt::format("mknod type \"{}\" is not {}", *t, scenario_internal::Alternatives(names)));
  }
  if (d.Get("rdev")) {
    if (auto r = Rdev(d.Get("rdev"))) std::tie(st.rdev_major, st.rdev_minor) = *r;
  }
  if (auto u = Int(d.Get("uid"), "uid", -1, 0xfffffffe)) st.uid = *u;
  if (auto g = Int(d.Get("gid"), "gid", -1, 0xfffffffe)) st.gid = *g;
  if (auto port = Int(d.Get("port"), "port", 0, 65535)) st.port = static_cast<uint32_t>(*port);
  if (auto c = Str(d.Get("cmd"), "cmd")) {
    auto cmd = scenario_internal::IoctlFromName(*c);
    if (!cmd)
      Error(d.Get("cmd")->loc, fmt::format("unknown ioctl command \"{}\"", *c));
    else
      st.cmd = *cmd;
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
  st.attr_set = ParseMountAttrs(d, "attr_set");
  st.attr_clr = ParseMountAttrs(d, "attr_clr");
  if (auto o = Int(d.Get("offset"), "offset", INT64_MIN, INT64_MAX)) st.offset = *o;
  if (auto l = Int(d.Get("len"), "len", INT64_MIN, INT64_MAX)) st.len = *l;
  // Both executors keep a fallocated file small: a range the calls
  // refuse before allocating anything, or one ending within 1 MiB.
  if (st.op == Op::kFallocate && st.offset > 0 && st.len > 0 && st.len <= INT64_MAX - st.offset &&
      st.offset + st.len > kMaxFallocateEnd)
    Error(d.loc, fmt::format("fallocate: offset + len ends past {} (1 MiB); a range past "
                             "the largest file size (2^63 - 1) is allowed",
                             kMaxFallocateEnd));
  if (auto e = Str(d.Get("expect"), "expect")) {
    auto err = ErrnoFromName(*e);
    if (!err)
      Error(d.Get("expect")->loc, fmt::format("\"{}\" is neither ok nor an errno name", *e));
    else
      st.expect = *err;
    st.expect_text = *e;
  } else if (!d.Get("expect")) {
    Error(d.loc, "[[step]] needs \"expect\" (ok or an errno name)");
  }
  s.steps.push_back(std::move(st));
}

// `name`, `value`, `acl` and `xattr_flags` of the xattr calls.
void Parser::ParseXattrKeys(const Doc& d, StepSpec& st) {
  if (auto n = Str(d.Get("name"), "name")) st.xattr_name = *n;
  if (auto v = Str(d.Get("value"), "value")) st.xattr_value = *v;
  if (auto h = Str(d.Get("value_hex"), "value_hex")) {
    if (d.Get("value"))
      Error(d.Get("value_hex")->loc, "\"value_hex\" and \"value\" exclude each other");
    auto bytes = FromHex(*h);
    if (!bytes)
      Error(d.Get("value_hex")->loc, "\"value_hex\" holds pairs of hex digits");
    else
      st.xattr_value = *bytes;
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
      if (!e)
        Error(d.Get("acl")->loc, fmt::format("\"acl\": {}", e.error()));
      else
        entries = *e;
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

uint64_t Parser::ParseMountAttrs(const Doc& d, std::string_view key) {
  auto text = Str(d.Get(key), key);
  if (!text) return 0;
  uint64_t attrs = 0;
  ForEachFlagName(*text, [&](std::string_view name) {
    bool found = false;
    for (const auto& f : scenario_internal::MountAttrNames())
      if (f.name == name) {
        attrs |= f.value;
        found = true;
      }
    if (!found)
      Error(d.Get(key)->loc, fmt::format("\"{}\": {} is not a MOUNT_ATTR_ name (MOUNT_ATTR_RDONLY, "
                                         "MOUNT_ATTR_NOSUID, ...; not MOUNT_ATTR_IDMAP)",
                                         key, name.empty() ? "an empty name" : name));
  });
  return attrs;
}

void Parser::ParseFlags(const Doc& d, StepSpec& st) {
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

}  // namespace pathwarden::scenario_internal
