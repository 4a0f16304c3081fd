// Learner: the needs of a traced run, turned into a landlockconfig policy.

#include "src/trace/learn.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "src/base/lexical_path.h"
#include "src/input/toml_text.h"
#include "src/policy/policy.h"

namespace pathwarden::trace {
namespace {

using input::TomlArray;
using input::TomlString;

using landlock::AccessMask;

constexpr uint64_t kMaxPort = 65535;

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF): a TOML string holds nothing else.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// The parent of a normalised absolute path other than "/".
std::string Parent(const std::string& p) {
  const size_t slash = p.rfind('/');
  return slash == 0 ? std::string("/") : p.substr(0, slash);
}

// Whether `a` is `b` or one of its ancestors.
bool AtOrAbove(const std::string& a, const std::string& b) {
  if (a == b || a == "/") return true;
  return b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '/';
}

size_t Depth(const std::string& p) {
  return p == "/" ? 0 : static_cast<size_t>(std::count(p.begin(), p.end(), '/'));
}

// /proc/<digits>[/...], /proc/self[/...], /proc/thread-self[/...]: one
// process's (or thread's) entries, which a rule would pin to that
// process's inodes.
bool PerProcess(const std::string& p) {
  constexpr std::string_view kProc = "/proc/";
  if (p.compare(0, kProc.size(), kProc) != 0) return false;
  std::string_view rest = std::string_view(p).substr(kProc.size());
  const std::string_view first = rest.substr(0, rest.find('/'));
  if (first == "self" || first == "thread-self") return true;
  return !first.empty() &&
         std::all_of(first.begin(), first.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> Names(AccessMask m, int n, std::string_view (*name)(int)) {
  std::vector<std::string> out;
  for (int b = 0; b < n; ++b)
    if (m & (AccessMask{1} << b)) out.emplace_back(name(b));
  return out;
}
std::string Joined(AccessMask m, int n, std::string_view (*name)(int)) {
  return fmt::format("{}", fmt::join(Names(m, n, name), ", "));
}
std::string FsJoined(AccessMask m) {
  return Joined(m, landlock::kNumFsRights, landlock::FsRightName);
}

// A mask at `abi` as "abi.all" when it is all the ABI knows, else names.
std::vector<std::string> AllOrNames(AccessMask m, AccessMask all, int n,
                                    std::string_view (*name)(int)) {
  if (m == all) return {"abi.all"};
  return Names(m, n, name);
}

std::string Calls(uint64_t n) { return fmt::format("{} call{}", n, n == 1 ? "" : "s"); }

// One node of the learnt tree: a path with the rights granted on it.
struct Node {
  AccessMask access = 0;
  bool directory = false;
  AccessMask widened = 0;
  size_t widened_entries = 0;
};

// One group of identical needs on a (mapped) path.
struct NeedGroup {
  AccessMask fs = 0;
  uint64_t calls = 0;
  bool per_process = false;
};

}  // namespace

Result<void, std::string> Learner::AddFs(const FsNeed& need) {
  if (need.path.find('\0') != std::string::npos)
    return Unexpected(std::string("a path with a NUL byte"));
  if (!ValidUtf8(need.path))
    return Unexpected(
        fmt::format("{}: not UTF-8, which a TOML policy cannot hold", TomlString(need.path)));
  if (need.path.empty() || need.path[0] != '/')
    return Unexpected(fmt::format("{}: not an absolute path", TomlString(need.path)));
  if (!internal::IsNormalisedAbsolute(need.path))
    return Unexpected(fmt::format("{}: not a normalised path", TomlString(need.path)));
  if (need.access == 0) return Unexpected(fmt::format("{}: no right needed", TomlString(need.path)));
  if (need.access & ~landlock::kFsAll)
    return Unexpected(fmt::format("{}: rights beyond the filesystem's: {:#x}",
                                  TomlString(need.path), need.access & ~landlock::kFsAll));
  if (!need.directory && (need.access & ~landlock::kFsFileRights))
    return Unexpected(fmt::format("{}: directory rights ({}) on a non-directory",
                                  TomlString(need.path),
                                  FsJoined(need.access & ~landlock::kFsFileRights)));
  ++fs_[need.path][need.access];
  directory_[need.path] = directory_[need.path] || need.directory;
  ++fs_calls_;
  return {};
}

Result<void, std::string> Learner::AddNet(uint64_t port, AccessMask net) {
  if (port > kMaxPort) return Unexpected(fmt::format("port {}: above {}", port, kMaxPort));
  if (net == 0 || (net & ~landlock::kNetAll))
    return Unexpected(fmt::format("port {}: rights {:#x} are not network rights", port, net));
  ++net_[port][net];
  ++net_calls_;
  return {};
}

void Learner::NeedUnscoped(AccessMask scopes) { unscoped_ |= scopes & landlock::kScopeAll; }

Result<void, std::string> Learner::Add(const Need& need) {
  switch (need.kind) {
    case Need::Kind::kFs: return AddFs({need.path, need.access, need.directory});
    case Need::Kind::kNet: return AddNet(need.port, need.access);
    case Need::Kind::kUnscope: NeedUnscoped(need.access); return {};
  }
  return Unexpected(std::string("a need of no known kind"));
}

Result<LearntPolicy, std::string> Learner::Learn(const LearnOptions& o) const {
  if (o.abi < 1 || o.abi > landlock::kAbiLatest)
    return Unexpected(fmt::format("ABI {}: not one of 1..{}", o.abi, landlock::kAbiLatest));
  if (o.sibling_threshold == 1)
    return Unexpected(std::string(
        "a sibling threshold of 1 would widen every rule up to the protected directories"));
  if (!o.home.empty() && !internal::IsNormalisedAbsolute(o.home))
    return Unexpected(fmt::format("home {}: not an absolute normalised path", TomlString(o.home)));
  for (const std::string& d : o.never_widen)
    if (!internal::IsNormalisedAbsolute(d))
      return Unexpected(
          fmt::format("never-widen {}: not an absolute normalised path", TomlString(d)));

  // Directories holding credentials: never widened to, nor anything
  // beneath or above them.
  std::vector<std::string> credentials = {"/etc/ssl/private"};
  if (!o.home.empty()) {
    const std::string base = o.home == "/" ? "" : o.home;
    credentials.push_back(base + "/.ssh");
    credentials.push_back(base + "/.gnupg");
  }
  credentials.insert(credentials.end(), o.never_widen.begin(), o.never_widen.end());
  auto widenable = [&](const std::string& d) {
    if (d == "/") return false;
    if (!o.home.empty() && AtOrAbove(d, o.home)) return false;
    for (const std::string& c : credentials)
      if (AtOrAbove(d, c) || AtOrAbove(c, d)) return false;
    return true;
  };

  const landlock::AbiRights rights = landlock::RightsForAbi(o.abi);
  LearntPolicy out;
  out.abi = o.abi;
  out.handled_fs = rights.fs;
  out.handled_net = rights.net;
  out.scoped = rights.scoped & ~unscoped_;

  // Rights per path, /proc's per-process entries mapped to /proc.
  std::map<std::string, std::vector<NeedGroup>> needs;
  std::map<std::string, Node> nodes;
  AccessMask dropped_fs = 0;
  uint64_t dropped_fs_calls = 0;
  for (const auto& [path, by_mask] : fs_) {
    const bool per_process = PerProcess(path);
    const std::string at = per_process ? std::string("/proc") : path;
    for (const auto& [mask, calls] : by_mask) {
      const AccessMask m = mask & rights.fs;
      dropped_fs |= mask & ~rights.fs;
      if (m != mask) dropped_fs_calls += calls;
      if (m == 0) continue;
      needs[at].push_back({m, calls, per_process});
      Node& n = nodes[at];
      n.access |= m;
      n.directory = n.directory || per_process || directory_.at(path);
    }
  }

  // Compression: each directory above a need, deepest first, takes the
  // rights needed beneath at least the threshold of its entries.
  if (o.sibling_threshold >= 2) {
    std::set<std::string> above;
    for (const auto& [path, node] : nodes)
      for (std::string p = path; p != "/";) {
        p = Parent(p);
        if (!above.insert(p).second) break;
      }
    std::vector<std::string> order(above.begin(), above.end());
    std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
      return Depth(a) > Depth(b);
    });
    for (const std::string& d : order) {
      if (!widenable(d)) continue;
      const std::string prefix = d + "/";
      std::map<std::string, AccessMask> entries;  // by the entry of `d` they are beneath
      for (auto it = nodes.lower_bound(prefix);
           it != nodes.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        const size_t end = it->first.find('/', prefix.size());
        entries[it->first.substr(prefix.size(), end - prefix.size())] |= it->second.access;
      }
      AccessMask widen = 0;
      for (int b = 0; b < landlock::kNumFsRights; ++b) {
        const AccessMask bit = AccessMask{1} << b;
        const size_t n = static_cast<size_t>(std::count_if(
            entries.begin(), entries.end(), [&](const auto& e) { return e.second & bit; }));
        if (n >= o.sibling_threshold) widen |= bit;
      }
      if (widen == 0) continue;
      Node& n = nodes[d];
      n.access |= widen;
      n.directory = true;
      n.widened |= widen;
      n.widened_entries = static_cast<size_t>(std::count_if(
          entries.begin(), entries.end(), [&](const auto& e) { return e.second & widen; }));
    }
  }

  // Rights an ancestor's rule grants dropped, and rules left empty.
  std::map<std::string, size_t> index;
  for (const auto& [path, node] : nodes) {
    AccessMask inherited = 0;
    for (std::string p = path; p != "/";) {
      p = Parent(p);
      if (auto it = nodes.find(p); it != nodes.end()) inherited |= it->second.access;
    }
    const AccessMask keep = node.access & ~inherited;
    if (keep == 0) continue;
    index[path] = out.paths.size();
    out.paths.push_back({path, keep, node.directory, 0, 0, node.widened & keep,
                         node.widened & keep ? node.widened_entries : 0});
  }

  // Each need's rights are granted by the rules on its path and above.
  for (const auto& [path, list] : needs)
    for (const NeedGroup& need : list)
      for (std::string p = path;; p = Parent(p)) {
        if (auto it = index.find(p); it != index.end()) {
          LearntRule& r = out.paths[it->second];
          if (r.access & need.fs) {
            r.calls += need.calls;
            if (need.per_process) r.proc_calls += need.calls;
          }
        }
        if (p == "/") break;
      }

  uint64_t dropped_net_calls = 0;
  for (const auto& [port, by_mask] : net_) {
    LearntPort lp{port, 0, 0};
    for (const auto& [mask, calls] : by_mask) {
      lp.access |= mask & rights.net;
      if (mask & rights.net)
        lp.calls += calls;
      else
        dropped_net_calls += calls;
    }
    if (lp.access) out.ports.push_back(lp);
  }

  if (dropped_fs)
    out.notes.push_back(
        fmt::format("{} needed {} ({}), which ABI {} cannot restrict: allowed everywhere",
                    Calls(dropped_fs_calls), dropped_fs & (dropped_fs - 1) ? "rights" : "a right",
                    FsJoined(dropped_fs), o.abi));
  if (dropped_net_calls)
    out.notes.push_back(
        fmt::format("{} needed TCP ports, which ABI {} cannot restrict: allowed everywhere",
                    Calls(dropped_net_calls), o.abi));
  if (rights.scoped & unscoped_)
    out.notes.push_back(
        fmt::format("not scoped ({}): the run reached a process outside itself that way",
                    Joined(rights.scoped & unscoped_, landlock::kNumScopes, landlock::ScopeName)));
  return out;
}

std::vector<std::string> FsRightNames(AccessMask access, bool directory, int abi) {
  const AccessMask all = landlock::RightsForAbi(abi).fs;
  const AccessMask rx = landlock::kFsExecute | landlock::kFsReadFile | landlock::kFsReadDir |
                        (all & landlock::kFsRefer);
  const AccessMask rw = all & ~landlock::kFsExecute;
  auto names = [](AccessMask m) { return Names(m, landlock::kNumFsRights, landlock::FsRightName); };
  if (!directory) return names(access);
  std::vector<std::string> out;
  AccessMask rest = access;
  if ((access & all) == all) {
    out.emplace_back("abi.all");
    rest &= ~all;
  } else if ((access & rw) == rw) {
    out.emplace_back("abi.read_write");
    rest &= ~rw;
  } else if ((access & rx) == rx) {
    out.emplace_back("abi.read_execute");
    rest &= ~rx;
  }
  for (std::string& n : names(rest)) out.push_back(std::move(n));
  return out;
}

std::string ToToml(const LearntPolicy& p) {
  const landlock::AbiRights rights = landlock::RightsForAbi(p.abi);
  std::string s =
      "# Learnt by pathwarden trace: what the traced run needed, and no more than it must.\n";
  s += fmt::format(
      "# Every right Landlock ABI {} knows is handled: a right left unhandled is allowed "
      "everywhere.\n",
      p.abi);
  for (const std::string& n : p.notes) s += "# " + n + ".\n";
  s += fmt::format("abi = {}\n", p.abi);
  s += "\n[[ruleset]]\n";
  s += "handled_access_fs = " +
       TomlArray(
           AllOrNames(p.handled_fs, rights.fs, landlock::kNumFsRights, landlock::FsRightName)) +
       "\n";
  if (p.handled_net)
    s += "handled_access_net = " +
         TomlArray(AllOrNames(p.handled_net, rights.net, landlock::kNumNetRights,
                              landlock::NetRightName)) +
         "\n";
  if (p.scoped)
    s += "scoped = " +
         TomlArray(AllOrNames(p.scoped, rights.scoped, landlock::kNumScopes, landlock::ScopeName)) +
         "\n";
  for (const LearntRule& r : p.paths) {
    s += "\n# " + Calls(r.calls);
    if (r.proc_calls)
      s += fmt::format(
          "; {} on /proc/<pid>/..., /proc/self/... or /proc/thread-self/..., mapped to /proc "
          "(a rule on one process's entry holds for no other process)",
          r.proc_calls);
    if (r.widened)
      s += fmt::format("; widened to this directory: {} needed beneath {} of its entries",
                       FsJoined(r.widened), r.widened_entries);
    s += "\n[[path_beneath]]\nallowed_access = " +
         TomlArray(FsRightNames(r.access, r.directory, p.abi)) +
         "\nparent = " + TomlArray({policy::LiteralTemplate(r.path)}) + "\n";
  }
  for (const LearntPort& r : p.ports)
    s += "\n# " + Calls(r.calls) + "\n[[net_port]]\nallowed_access = " +
         TomlArray(
             AllOrNames(r.access, rights.net, landlock::kNumNetRights, landlock::NetRightName)) +
         fmt::format("\nport = [{}]\n", r.port);
  return s;
}

}  // namespace pathwarden::trace
