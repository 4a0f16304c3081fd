// ToText() / ToJson() / ToToml(): a resolved policy for people, or as a
// landlockconfig file that reads back to the same policy.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "src/input/json_text.h"
#include "src/input/toml_text.h"
#include "src/policy/policy.h"

namespace pathwarden::policy {
namespace {

using input::TomlArray;
using input::TomlString;

using landlock::AccessMask;

// The names of a mask's bits, in the kernel's bit order.
std::vector<std::string> Names(AccessMask m, int n, std::string_view (*name)(int)) {
  std::vector<std::string> out;
  for (int b = 0; b < n; ++b)
    if (m & (AccessMask{1} << b)) out.emplace_back(name(b));
  return out;
}
std::vector<std::string> FsNames(AccessMask m) {
  return Names(m, landlock::kNumFsRights, landlock::FsRightName);
}
std::vector<std::string> NetNames(AccessMask m) {
  return Names(m, landlock::kNumNetRights, landlock::NetRightName);
}
std::vector<std::string> ScopeNames(AccessMask m) {
  return Names(m, landlock::kNumScopes, landlock::ScopeName);
}

bool Empty(const Policy& p) {
  return p.handled_fs == 0 && p.handled_net == 0 && p.scoped == 0 && p.paths.empty() &&
         p.ports.empty();
}

std::string Origins(const std::vector<Origin>& origins) {
  std::string s;
  for (const Origin& o : origins) {
    s += s.empty() ? "" : ", ";
    s += o.line ? fmt::format("{}:{}:{}", o.file, o.line, o.col) : o.file;
  }
  return s;
}

}  // namespace

std::string ToText(const Policy& p) {
  std::string s = fmt::format("policy {}\n", p.source);
  s += p.abi ? fmt::format("abi {}\n", *p.abi) : "abi none\n";
  auto list = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("-") : fmt::format("{}", fmt::join(v, " "));
  };
  s += fmt::format("handled fs: {}\n", list(FsNames(p.handled_fs)));
  s += fmt::format("handled net: {}\n", list(NetNames(p.handled_net)));
  s += fmt::format("scoped: {}\n", list(ScopeNames(p.scoped)));
  for (const PathRule& r : p.paths)
    s += fmt::format("path {}: {}  ({})\n", r.path, list(FsNames(r.access)), Origins(r.origins));
  for (const PortRule& r : p.ports)
    s += fmt::format("port {}: {}  ({})\n", r.port, list(NetNames(r.access)), Origins(r.origins));
  return s;
}

std::string ToJson(const Policy& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (p.abi) j["abi"] = *p.abi;
  nlohmann::ordered_json rs = nlohmann::ordered_json::object();
  if (p.handled_fs) rs["handledAccessFs"] = FsNames(p.handled_fs);
  if (p.handled_net) rs["handledAccessNet"] = NetNames(p.handled_net);
  if (p.scoped) rs["scoped"] = ScopeNames(p.scoped);
  if (!rs.empty()) j["ruleset"] = nlohmann::ordered_json::array({rs});
  for (const PathRule& r : p.paths)
    j["pathBeneath"].push_back({{"allowedAccess", FsNames(r.access)},
                                {"parent", nlohmann::ordered_json::array({LiteralTemplate(r.path)})}});
  for (const PortRule& r : p.ports)
    j["netPort"].push_back({{"allowedAccess", NetNames(r.access)},
                            {"port", nlohmann::ordered_json::array({r.port})}});
  // Nothing handled and no rule: landlockconfig wants at least one of
  // variable, ruleset, pathBeneath, netPort; a variable without values
  // adds nothing.
  if (Empty(p)) j["variable"] = nlohmann::ordered_json::array({{{"name", "none"}}});
  return input::JsonText(j, 2) + "\n";
}

std::string ToToml(const Policy& p) {
  std::string s;
  if (p.abi) s += fmt::format("abi = {}\n", *p.abi);
  if (p.handled_fs || p.handled_net || p.scoped) {
    s += "\n[[ruleset]]\n";
    if (p.handled_fs) s += "handled_access_fs = " + TomlArray(FsNames(p.handled_fs)) + "\n";
    if (p.handled_net) s += "handled_access_net = " + TomlArray(NetNames(p.handled_net)) + "\n";
    if (p.scoped) s += "scoped = " + TomlArray(ScopeNames(p.scoped)) + "\n";
  }
  for (const PathRule& r : p.paths)
    s += "\n[[path_beneath]]\nallowed_access = " + TomlArray(FsNames(r.access)) +
         "\nparent = " + TomlArray({LiteralTemplate(r.path)}) + "\n";
  for (const PortRule& r : p.ports)
    s += "\n[[net_port]]\nallowed_access = " + TomlArray(NetNames(r.access)) +
         fmt::format("\nport = [{}]\n", r.port);
  if (Empty(p)) s += "\n[[variable]]\nname = \"none\"\n";
  return s;
}

std::string LiteralTemplate(std::string_view path) {
  std::string s;
  for (char c : path) {
    if (c == '$') s += '$';
    s += c;
  }
  return s;
}

}  // namespace pathwarden::policy
