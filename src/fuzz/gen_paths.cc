// The generator's paths: which object a step aims at, and how the path to
// it is spelled (absolute, relative to the cwd or to a directory fd,
// through a symlink, with ".", "..", "//", a trailing slash, an overlong
// name). Most paths reach an existing object, so steps get past the walk
// to the checks behind it.

#include <algorithm>

#include "src/base/lexical_path.h"
#include "src/fuzz/gen_internal.h"

namespace pathwarden::fuzz::gen_internal {
namespace {

constexpr std::string_view kNewNames[] = {"n", "new", "x", "y", "tmp", "dst", "z"};

bool Matches(const Known& k, Want want) {
  switch (want) {
    case Want::kAny: return true;
    case Want::kExisting: return !k.type.empty();
    case Want::kFile: return k.type == "file";
    case Want::kDir: return k.type == "dir";
    case Want::kSymlink: return k.type == "symlink";
    case Want::kNew: return k.type.empty();
    case Want::kMount: return false;
  }
  return false;
}

// Where a symlink's target leads, lexically; "" when nowhere known.
std::string LinkDestination(const Known& link) {
  if (link.target.empty()) return "";
  std::string joined = link.target[0] == '/' ? link.target : Dirname(link.path) + "/" + link.target;
  return internal::LexicallyNormal(joined);
}

// Inserts a detour at a random component boundary of an absolute path:
// "/./", "//", or "name/.." (a sibling, or a name that does not exist).
std::string Detour(GenState& g, const std::string& path) {
  std::vector<size_t> slashes;
  for (size_t i = 0; i < path.size(); ++i)
    if (path[i] == '/') slashes.push_back(i);
  if (slashes.empty()) return path;
  const size_t at = slashes[g.rng.Below(slashes.size())];
  std::string insert;
  switch (g.rng.Below(4)) {
    case 0: insert = "./"; break;
    case 1: insert = "/"; break;
    case 2: {
      // A directory that exists at that point, then back up.
      std::string prefix = internal::LexicallyNormal(path.substr(0, at + 1));
      std::vector<const Known*> dirs;
      for (const Known& k : g.tree)
        if (k.type == "dir" && Dirname(k.path) == prefix && k.path != prefix) dirs.push_back(&k);
      if (dirs.empty()) {
        insert = "../";
      } else {
        const Known* d = dirs[g.rng.Below(dirs.size())];
        insert = d->path.substr(d->path.rfind('/') + 1) + "/../";
      }
      break;
    }
    default: insert = "missing/../"; break;
  }
  return path.substr(0, at + 1) + insert + path.substr(at + 1);
}

}  // namespace

std::string Dirname(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

bool IsUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return true;
  return path == dir || (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

std::string Relative(std::string_view from, std::string_view to) {
  if (IsUnder(to, from)) {
    if (to == from) return ".";
    return std::string(to.substr(from == "/" ? 1 : from.size() + 1));
  }
  std::string up;
  std::string cur(from);
  while (!IsUnder(to, cur)) {
    up += "../";
    cur = Dirname(cur);
  }
  if (to == cur) return up.substr(0, up.size() - 1);
  return up + std::string(to.substr(cur == "/" ? 1 : cur.size() + 1));
}

void AddKnown(GenState& g, const std::string& path, std::string type) {
  for (Known& k : g.tree)
    if (k.path == path) {
      if (k.type.empty()) k.type = std::move(type);
      return;
    }
  g.tree.push_back({path, std::move(type), ""});
}

const Known* PickKnown(GenState& g, Want want) {
  if (g.tree.empty()) return nullptr;
  // Mostly what was asked for; now and then anything, for the errors.
  if (!g.rng.Percent(12)) {
    std::vector<const Known*> fit;
    for (const Known& k : g.tree)
      if (Matches(k, want)) fit.push_back(&k);
    if (!fit.empty()) return fit[g.rng.Below(fit.size())];
  }
  return &g.tree[g.rng.Below(g.tree.size())];
}

std::string NewPath(GenState& g) {
  std::vector<const Known*> dirs;
  for (const Known& k : g.tree)
    if (k.type == "dir") dirs.push_back(&k);
  std::string parent = dirs.empty() ? "/" : dirs[g.rng.Below(dirs.size())]->path;
  std::string name;
  const int r = g.rng.Range(0, 99);
  if (r < 3) {
    name = std::string(256, 'L');  // ENAMETOOLONG
  } else if (r < 6) {
    name = std::string(255, 'M');  // the longest a name may be
  } else {
    name = std::string(g.rng.Pick(kNewNames)) + std::to_string(g.next_name++ % 7);
  }
  return (parent == "/" ? "" : parent) + "/" + name;
}

std::string PickPath(GenState& g, const ProcInfo& actor, Want want, StepSpec* step,
                     std::string* resolved) {
  std::string abs;
  if (want == Want::kNew || (want != Want::kExisting && g.rng.Percent(6))) {
    abs = NewPath(g);
  } else if (want == Want::kMount && !g.mounts.empty() && g.rng.Percent(80)) {
    abs = g.mounts[g.rng.Below(g.mounts.size())];
  } else {
    const Known* k = PickKnown(g, want == Want::kMount ? Want::kDir : want);
    abs = k == nullptr ? "/" : k->path;
  }
  if (resolved) *resolved = abs;
  std::string path = abs;
  const int form = g.rng.Range(0, 99);
  if (form < 14 && step != nullptr) {
    // Relative to one of the actor's directory fds (or an absolute path
    // that ignores it).
    std::vector<const FdInfo*> dirs;
    for (const FdInfo& f : actor.fds)
      if (f.dir) dirs.push_back(&f);
    if (!dirs.empty()) {
      const FdInfo* f = dirs[g.rng.Below(dirs.size())];
      step->dirfd = f->name;
      if (g.rng.Percent(85)) path = Relative(f->path, abs);
    }
  } else if (form < 40) {
    path = Relative(actor.cwd, abs);
  } else if (form < 52) {
    // Through a symlink whose target is a directory above the object.
    std::vector<std::pair<const Known*, std::string>> links;
    for (const Known& k : g.tree) {
      if (k.type != "symlink") continue;
      std::string dest = LinkDestination(k);
      if (!dest.empty() && dest != "/" && IsUnder(abs, dest)) links.emplace_back(&k, dest);
    }
    if (!links.empty()) {
      const auto& [link, dest] = links[g.rng.Below(links.size())];
      path = link->path + abs.substr(dest.size());
    }
  }
  // Small distortions, each now and then.
  if (!path.empty() && path[0] == '/' && g.rng.Percent(12)) path = Detour(g, path);
  if (g.rng.Percent(3)) path = "/" + path;  // "//a" or "/rel" (another object)
  if (g.rng.Percent(7)) path += "/";
  else if (g.rng.Percent(2)) path += "/.";
  if (g.rng.Percent(2)) {
    // An overlong component somewhere in the middle.
    size_t slash = path.find('/', 1);
    if (slash != std::string::npos) path = path.substr(0, slash + 1) + std::string(256, 'q') + path.substr(slash);
  }
  if (g.rng.Percent(1)) path = "";  // ENOENT (or AT_EMPTY_PATH)
  return path;
}

}  // namespace pathwarden::fuzz::gen_internal
