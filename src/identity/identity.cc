// Who asks, from the command line, the user database and /proc.

#include "src/identity/identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/capability.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace pathwarden::identity {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t end = s.find(sep, i);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

// /proc/PID/status, the lines we need.
struct Status {
  uint32_t uid[4] = {}, gid[4] = {};
  std::vector<uint32_t> groups;
  uint64_t cap_eff = 0, cap_prm = 0;
  uint32_t umask = 022;
};

Result<Status, std::string> ReadStatus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  Status s;
  int seen = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "Uid:") {
      for (uint32_t& v : s.uid) ls >> v;
      ++seen;
    } else if (key == "Gid:") {
      for (uint32_t& v : s.gid) ls >> v;
      ++seen;
    } else if (key == "Groups:") {
      uint32_t g;
      while (ls >> g) s.groups.push_back(g);
    } else if (key == "CapEff:") {
      std::string hex;
      ls >> hex;
      s.cap_eff = std::stoull(hex, nullptr, 16);
      ++seen;
    } else if (key == "CapPrm:") {
      std::string hex;
      ls >> hex;
      s.cap_prm = std::stoull(hex, nullptr, 16);
    } else if (key == "Umask:") {
      std::string oct;
      ls >> oct;
      s.umask = static_cast<uint32_t>(std::stoul(oct, nullptr, 8));
    }
  }
  if (seen < 3) return Unexpected(fmt::format("{}: no Uid:, Gid: or CapEff: line", path));
  return s;
}

Result<std::string, std::string> ReadLink(const std::string& path) {
  std::string buf(PATH_MAX, '\0');
  const ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
  if (n < 0) return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace

Result<uint32_t, std::string> ParseId(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v > 0xfffffffeu)
    return Unexpected(fmt::format("{} \"{}\" is not an id (0 to 4294967294)", what, text));
  return static_cast<uint32_t>(v);
}

Result<uint32_t, std::string> ParseUmask(std::string_view text) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 8);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v > 0777)
    return Unexpected(fmt::format("umask \"{}\" is not an octal mode (0 to 0777)", text));
  return v;
}

Result<uint64_t, std::string> ParseCaps(std::string_view text) {
  const std::string t = Lower(text);
  if (t == "none" || t.empty()) return uint64_t{0};
  if (t == "all") return kCapAll;
  uint64_t caps = 0;
  for (std::string_view name : Split(text, ',')) {
    std::string n = Lower(name);
    if (!n.starts_with("cap_")) n = "cap_" + n;
    cap_value_t v;
    if (cap_from_name(n.c_str(), &v) != 0 || v < 0 || v > kCapLast)
      return Unexpected(fmt::format("\"{}\" is not a capability (like CAP_DAC_OVERRIDE or chown)",
                                    name));
    caps |= CapBit(v);
  }
  return caps;
}

Result<std::vector<uint32_t>, std::string> ParseGroups(std::string_view text) {
  std::vector<uint32_t> out;
  if (Lower(text) == "none") return out;
  for (std::string_view g : Split(text, ',')) {
    auto id = ParseId(g, "group");
    if (!id) return Unexpected(id.error());
    out.push_back(*id);
  }
  return out;
}

std::string CapNames(uint64_t caps) {
  if (caps == 0) return "none";
  if ((caps & kCapAll) == kCapAll) return "all";
  // Most of them: what is missing is shorter to read.
  const bool but = __builtin_popcountll(caps & kCapAll) > (kCapLast + 1) / 2;
  std::string out;
  for (int c = 0; c <= kCapLast; ++c) {
    if (((caps & CapBit(c)) != 0) == but) continue;
    if (!out.empty()) out += ',';
    out += CapName(c);
  }
  return but ? "all but " + out : out;
}

std::string Identity::Describe() const {
  std::string user;
  if (const passwd* pw = getpwuid(cred.euid)) user = pw->pw_name;
  // Read from the initial namespace, ids are the host's: the namespace's
  // own beside them ("1000 (0 in the namespace)").
  auto inside = [&](const std::vector<IdRange>* map, uint32_t id) -> std::string {
    if (map == nullptr) return "";
    const auto in = IdInside(*map, id);
    return in ? fmt::format("{} in the namespace", *in) : "unmapped in the namespace";
  };
  const bool outside = cred.userns && !cred.userns->reader_inside && !cred.userns->overflow_shown;
  const std::string uid_in = inside(outside ? &cred.userns->uid_map : nullptr, cred.euid);
  const std::string gid_in = inside(outside ? &cred.userns->gid_map : nullptr, cred.egid);
  if (!uid_in.empty()) user += (user.empty() ? "" : "; ") + uid_in;
  std::string groups;
  for (uint32_t g : cred.groups()) groups += (groups.empty() ? "" : ",") + std::to_string(g);
  std::string out = fmt::format("uid {}{}, gid {}{}, groups {}, capabilities {}", cred.euid,
                                user.empty() ? "" : " (" + user + ")", cred.egid,
                                gid_in.empty() ? "" : " (" + gid_in + ")",
                                groups.empty() ? "none" : groups, CapNames(cred.cap_effective));
  if (cred.ruid != cred.euid || cred.fsuid != cred.euid)
    out += fmt::format(" (real uid {}, fs uid {})", cred.ruid, cred.fsuid);
  if (cred.userns)
    out += fmt::format(", in a user namespace ({}{})", cred.userns->Describe(),
                       cred.userns->reader_inside ? "" : "; read from outside it");
  return out;
}


std::optional<bool> ReadControllingTty(const std::string& stat) {
  // The whole file: the name may hold a newline as well as ") ".
  std::ifstream in(stat);
  std::ostringstream whole;
  if (!in || !(whole << in.rdbuf())) return std::nullopt;
  const std::string line = whole.str();
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string state, ppid, pgrp, session;
  long long tty_nr = 0;
  if (!(fields >> state >> ppid >> pgrp >> session >> tty_nr)) return std::nullopt;
  return tty_nr != 0;
}

std::optional<HostOptions::Overflow> HostOverflowFor(const Cred& cred, bool many) {
  auto self = ReadUserNamespace("/proc/self");
  // Unreadable: as if inside one (the flags' cost is unknowns, never a
  // wrong answer).
  if (self && *self == nullptr) return std::nullopt;
  HostOptions::Overflow o;  // the kernel's defaults, when unreadable
  if (self) {
    o.uid = (*self)->overflow_uid;
    o.gid = (*self)->overflow_gid;
  }
  o.identity_uid = many || cred.fsuid == o.uid;
  o.identity_gid = many || cred.InGroup(o.gid);
  return o;
}


Result<Cred, std::string> ReadCred(const std::string& status) {
  auto st = ReadStatus(status);
  if (!st) return Unexpected(st.error());
  Cred c;
  c.ruid = st->uid[0];
  c.euid = st->uid[1];
  c.suid = st->uid[2];
  c.fsuid = st->uid[3];
  c.rgid = st->gid[0];
  c.egid = st->gid[1];
  c.sgid = st->gid[2];
  c.fsgid = st->gid[3];
  c.cap_effective = st->cap_eff & kCapAll;
  c.cap_permitted = st->cap_prm & kCapAll;
  c.umask = st->umask;
  c.SetGroups(st->groups);
  // The user namespace, from the same /proc directory.
  const std::string_view suffix = "/status";
  if (status.size() > suffix.size() && status.ends_with(suffix)) {
    auto ns = ReadUserNamespace(status.substr(0, status.size() - suffix.size()));
    if (!ns) return Unexpected(ns.error());
    c.userns = *ns;
  }
  return c;
}

namespace {

// ResolveIdentity() with --userns: `caller` (this process's own
// credentials) entered a new user namespace with the options' maps, as a
// child of this process's.
Result<Cred, std::string> InNewUserNs(const IdentityOptions& o, const Cred& caller) {
  if (o.pid)
    return Unexpected(std::string(
        "--userns and --pid: a process's user namespace is its own (read with --pid alone)"));
  auto ns = std::make_shared<UserNamespace>();
  ns->uid_map = *o.userns_uids;
  ns->gid_map = o.userns_gids ? *o.userns_gids : *o.userns_uids;
  ns->reader_inside = false;
  ns->owner = caller.euid;  // the caller makes it
  // A reader in a user namespace itself sees the new one's outside ids in
  // its own terms, and unmapped owners as the overflow ids.
  if (caller.userns) {
    ns->overflow_shown = true;
    ns->overflow_uid = caller.userns->overflow_uid;
    ns->overflow_gid = caller.userns->overflow_gid;
  }
  const uint32_t uid = o.uid.value_or(0);
  uint32_t gid;
  if (o.gid) {
    gid = *o.gid;
  } else if (const passwd* pw = getpwuid(uid)) {
    gid = pw->pw_gid;
  } else {
    return Unexpected(fmt::format("uid {} is not in the user database: give --gid", uid));
  }
  const auto out_uid = IdOutside(ns->uid_map, uid);
  if (!out_uid)
    return Unexpected(fmt::format("uid {} has no mapping in --userns ({})", uid, ns->Describe()));
  const auto out_gid = IdOutside(ns->gid_map, gid);
  if (!out_gid)
    return Unexpected(fmt::format("gid {} has no mapping in --userns ({})", gid, ns->Describe()));
  Cred c = Cred::ForUser(*out_uid, *out_gid);
  // Capabilities after exec in the namespace: all of its for its root.
  c.cap_effective = c.cap_permitted = uid == 0 ? kCapAll : 0;
  c.umask = caller.umask;
  if (o.groups) {
    std::vector<uint32_t> groups;
    for (uint32_t g : *o.groups) {
      const auto out = IdOutside(ns->gid_map, g);
      if (!out)
        return Unexpected(
            fmt::format("group {} has no mapping in --userns ({})", g, ns->Describe()));
      groups.push_back(*out);
    }
    c.SetGroups(std::move(groups));
  } else {
    c.SetGroups(std::vector<uint32_t>(caller.groups().begin(), caller.groups().end()));
  }
  c.userns = std::move(ns);
  return c;
}

}  // namespace

Result<Identity, std::string> ResolveIdentity(const IdentityOptions& o) {
  Identity id;
  if (o.cwd && (o.cwd->empty() || (*o.cwd)[0] != '/'))
    return Unexpected(fmt::format("--cwd \"{}\" is not an absolute path", *o.cwd));
  // Where the credentials come from: a process, or the caller. With
  // --uid alone the credentials are that user's, but the working
  // directory and umask stay the caller's, as sudo -u keeps them: a
  // relative path means what it means to the one who typed it.
  const std::string proc = o.pid ? fmt::format("/proc/{}", *o.pid) : "/proc/self";
  auto own = ReadCred(proc + "/status");
  if (!own) return Unexpected(own.error());
  id.cred = *own;  // with its user namespace, which --uid's identity shares
  id.ctty = ReadControllingTty(proc + "/stat");
  if (o.pid) {
    id.pid = *o.pid;
    for (const char* ns : {"net", "ipc", "user"}) {
      auto theirs = ReadLink(fmt::format("{}/ns/{}", proc, ns));
      auto ours = ReadLink(fmt::format("/proc/self/ns/{}", ns));
      if (!theirs || !ours || *theirs != *ours) id.shares_sysctl_namespaces = false;
    }
    auto cwd = ReadLink(proc + "/cwd");
    if (!cwd) return Unexpected(cwd.error());
    auto root = ReadLink(proc + "/root");
    if (!root) return Unexpected(root.error());
    id.cwd = *cwd;
    id.root = *root;
    id.mountinfo = proc + "/mountinfo";
    // Another mount namespace (a container) or another root (a chroot,
    // a pivoted root): its mountinfo names its mounts relative to its
    // root, so the host is read through /proc/PID/root, where its paths
    // are its own.
    auto ns = ReadLink(proc + "/ns/mnt");
    auto own_ns = ReadLink("/proc/self/ns/mnt");
    if (!ns || !own_ns || *ns != *own_ns || *root != "/") {
      id.host_root = proc + "/root";
      id.root = "/";
      // /proc names the cwd and the root from the root of the mount
      // namespace (ours, or the process's when not reachable from ours);
      // the model's root is the process's: a chroot's cwd is made
      // relative to it.
      if (*root != "/") {
        if (id.cwd == *root)
          id.cwd = "/";
        else if (id.cwd.starts_with(*root + "/"))
          id.cwd = id.cwd.substr(root->size());
        else
          return Unexpected(fmt::format("the working directory of process {} ({}) is outside "
                                        "its root ({})",
                                        *o.pid, id.cwd, *root));
      }
    }
    id.notes.push_back(fmt::format(
        "the Landlock domain of process {} cannot be read from userspace: only the --policy "
        "layers given apply",
        *o.pid));
  } else {
    std::string buf(PATH_MAX, '\0');
    if (getcwd(buf.data(), buf.size()) != nullptr) {
      id.cwd = buf.c_str();
    } else if (!o.cwd) {
      id.notes.push_back(fmt::format(
          "the current directory cannot be named ({}): relative paths start at /; give --cwd",
          std::strerror(errno)));
    }
  }
  if (o.userns_uids) {
    auto c = InNewUserNs(o, id.cred);
    if (!c) return Unexpected(c.error());
    id.cred = std::move(*c);
  } else if (o.uid) {
    const passwd* pw = getpwuid(*o.uid);
    uint32_t gid;
    if (o.gid) {
      gid = *o.gid;
    } else if (pw != nullptr) {
      gid = pw->pw_gid;
    } else {
      return Unexpected(fmt::format("uid {} is not in the user database: give --gid", *o.uid));
    }
    Cred c = Cred::ForUser(*o.uid, gid);  // capabilities: all for 0, none otherwise
    c.umask = id.cred.umask;
    c.userns = id.cred.userns;
    std::vector<uint32_t> groups;
    if (o.groups) {
      groups = *o.groups;
    } else if (pw != nullptr) {
      int n = 64;
      std::vector<gid_t> buf(static_cast<size_t>(n));
      while (getgrouplist(pw->pw_name, gid, buf.data(), &n) < 0) buf.resize(static_cast<size_t>(n));
      buf.resize(static_cast<size_t>(n));
      groups.assign(buf.begin(), buf.end());
    } else {
      groups = {gid};
    }
    c.SetGroups(groups);
    id.cred = c;
  } else if (o.gid) {
    id.cred.rgid = id.cred.egid = id.cred.sgid = id.cred.fsgid = *o.gid;
  }
  if (o.groups && !o.uid && !o.userns_uids) id.cred.SetGroups(*o.groups);
  if (o.caps) id.cred.cap_effective = id.cred.cap_permitted = *o.caps;
  if (o.umask) id.cred.umask = *o.umask;
  if (o.cwd) id.cwd = *o.cwd;
  return id;
}

}  // namespace pathwarden::identity
