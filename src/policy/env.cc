// The kernel sample sandboxer's environment as one policy: which variables
// it reads, how it splits them, and the rights it gives each at an ABI.
// Linux: samples/landlock/sandboxer.c @v6.18 (read, not copied)

#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/policy/policy.h"

namespace pathwarden::policy {
namespace {

using landlock::AccessMask;

// ACCESS_FS_ROUGHLY_READ and ACCESS_FS_ROUGHLY_WRITE: every right but
// read's three is a write (refer, truncate and ioctl_dev included).
constexpr AccessMask kRoughlyRead =
    landlock::kFsExecute | landlock::kFsReadFile | landlock::kFsReadDir;
constexpr AccessMask kRoughlyWrite = landlock::kFsAll & ~kRoughlyRead;

// The sandboxer splits with strsep() on ':': "a::b" has an empty middle
// element and "" has one empty element.
std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t colon = s.find(':', start);
    out.emplace_back(s.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) return out;
    start = colon + 1;
  }
}

// str2num(): strtoull() in base 10 over the whole element (so leading
// blanks and a sign pass, as there), then the kernel's port limit, which
// landlock_add_rule() enforces with EINVAL.
Result<uint64_t, std::string> ParsePort(const char* var, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || text.empty() || *end != '\0') {
    return Unexpected(std::string(var) + ": \"" + text + "\" is not a port number");
  }
  if (n > 65535) {
    return Unexpected(std::string(var) + ": port " + text +
                      " is above 65535 (the kernel refuses it: EINVAL)");
  }
  return static_cast<uint64_t>(n);
}

}  // namespace

Result<Policy, std::string> PolicyFromEnv(const std::function<const char*(const char*)>& getenv,
                                          int abi, const std::string& cwd) {
  if (abi > landlock::kAbiLatest) abi = landlock::kAbiLatest;
  if (abi < 1) abi = 1;
  const landlock::AbiRights known = landlock::RightsForAbi(abi);

  Policy p;
  p.abi = abi;
  p.source = "environment";
  // The sandboxer handles every filesystem right its ABI knows, whatever
  // the variables say (an empty LL_FS_RO and LL_FS_RW deny every access).
  p.handled_fs = (kRoughlyRead | kRoughlyWrite) & known.fs;

  std::map<std::string, PathRule> paths;
  for (auto [var, access] : {std::pair{"LL_FS_RO", kRoughlyRead},
                             std::pair{"LL_FS_RW", kRoughlyRead | kRoughlyWrite}}) {
    const char* value = getenv(var);
    // "Prevents users to forget a setting": both are mandatory.
    if (value == nullptr) {
      return Unexpected(std::string("missing environment variable ") + var +
                        " (the sandboxer requires both LL_FS_RO and LL_FS_RW; an empty "
                        "value means no paths)");
    }
    if (*value == '\0') continue;
    for (std::string& path : Split(value)) {
      // An empty element is a path the sandboxer fails to open ("Failed
      // to open \"\"") and skips: it grants nothing.
      if (path.empty()) continue;
      if (path[0] != '/' && !cwd.empty()) path = (cwd == "/" ? "" : cwd) + "/" + path;
      PathRule& rule = paths[path];
      rule.path = path;
      rule.access |= access & p.handled_fs;
      rule.origins.push_back(Origin{var, 0, 0});
    }
  }
  for (auto& [path, rule] : paths) p.paths.push_back(std::move(rule));

  // Network (ABI 4): a variable unset leaves its right unhandled; set,
  // even empty, handles it with the listed ports allowed.
  // Below ABI 4 the ports are still checked, but dropped: the kernel has
  // no port rules (where the sandboxer itself would fail to add them).
  std::map<uint64_t, PortRule> ports;
  for (auto [var, right] : {std::pair{"LL_TCP_BIND", landlock::kNetBindTcp},
                            std::pair{"LL_TCP_CONNECT", landlock::kNetConnectTcp}}) {
    const char* value = getenv(var);
    if (value == nullptr) continue;
    for (const std::string& text : Split(value)) {
      if (text.empty()) continue;
      auto port = ParsePort(var, text);
      if (!port) return Unexpected(std::move(port).error());
      if ((known.net & right) == 0) continue;
      PortRule& rule = ports[*port];
      rule.port = *port;
      rule.access |= right;
      rule.origins.push_back(Origin{var, 0, 0});
    }
    p.handled_net |= right & known.net;
  }
  for (auto& [port, rule] : ports) p.ports.push_back(std::move(rule));

  // Scopes (ABI 6): below it the sandboxer never reads LL_SCOPED.
  if (known.scoped != 0) {
    const char* value = getenv("LL_SCOPED");
    if (value != nullptr && *value != '\0') {
      for (const std::string& name : Split(value)) {
        AccessMask bit = name == "a"   ? landlock::kScopeAbstractUnixSocket
                         : name == "s" ? landlock::kScopeSignal
                                       : 0;
        if (bit == 0 || (p.scoped & bit) != 0) {
          return Unexpected("LL_SCOPED: unknown or duplicate scope \"" + name +
                            "\" (\"a\": abstract unix sockets, \"s\": signals, "
                            "separated by ':')");
        }
        p.scoped |= bit;
      }
    }
  }
  return p;
}

}  // namespace pathwarden::policy
