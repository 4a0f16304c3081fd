// The generator's tree: directories up to depth 6 with files, symlinks
// (relative, absolute, dangling, looping, through ".."), fifos, sockets,
// harmless devices, tmpfs mounts (some covering what was there) and bind
// mounts with their flags; modes with setuid/setgid/sticky bits, owners
// and ACLs from small pools, inode attributes and sysctls now and then.

#include <algorithm>
#include <set>
#include <tuple>

#include "pathwarden/acl.h"
#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "src/fuzz/gen_internal.h"

namespace pathwarden::fuzz::gen_internal {
namespace {

constexpr std::string_view kNames[] = {"a", "b", "c", "d", "e", "sub", "dir", "f", "g",
                                       "lnk", "mnt", "tmp", "x", "y", "data", "bin"};

struct WeightedMode {
  uint32_t mode;
  int weight;
};
constexpr WeightedMode kDirModes[] = {
    {0755, 30}, {0700, 10}, {0711, 8}, {0750, 8}, {0777, 12}, {0770, 6}, {0555, 5},
    {0300, 3},  {0000, 2},  {0751, 3}, {01777, 8}, {02775, 4}, {01770, 3}, {03777, 2},
};
constexpr WeightedMode kFileModes[] = {
    {0644, 25}, {0600, 10}, {0640, 8}, {0666, 10}, {0444, 5}, {0755, 10}, {0700, 5},
    {04755, 4}, {02755, 4}, {06755, 2}, {0000, 2}, {0222, 2}, {0111, 3},  {02745, 2},
    {02711, 1}, {04711, 1}, {0646, 2},
};

uint32_t PickMode(Rng& rng, std::span<const WeightedMode> modes) {
  if (rng.Percent(6)) return static_cast<uint32_t>(rng.Below(010000));
  std::vector<int> w;
  for (const auto& m : modes) w.push_back(m.weight);
  return modes[rng.Weighted(w)].mode;
}

void MaybeOwner(Rng& rng, NodeSpec* n) {
  if (!rng.Percent(55)) return;
  n->has_owner = true;
  n->uid = rng.Pick(kUids);
  n->gid = rng.Pick(kGids);
}

std::string PermText(Rng& rng) {
  static constexpr std::string_view kPerms[] = {"rwx", "r-x", "rw-", "r--", "--x", "---", "-wx", "-w-"};
  return std::string(rng.Pick(kPerms));
}

// An ACL in setfacl's short form: some of the owner, group and other
// entries, one or two named entries, sometimes a mask.
std::vector<AclEntry> RandomAcl(Rng& rng) {
  std::string text;
  auto add = [&](const std::string& e) { text += (text.empty() ? "" : ",") + e; };
  if (rng.Percent(60)) add("u::" + PermText(rng));
  const int named = rng.Range(1, 2);
  for (int i = 0; i < named; ++i) {
    if (rng.Percent(50))
      add("u:" + std::to_string(rng.Pick(kUids)) + ":" + PermText(rng));
    else
      add("g:" + std::to_string(rng.Pick(kGids)) + ":" + PermText(rng));
  }
  if (rng.Percent(50)) add("g::" + PermText(rng));
  if (rng.Percent(40)) add("m::" + PermText(rng));
  if (rng.Percent(50)) add("o::" + PermText(rng));
  auto parsed = PosixAcl::ParseEntries(text);
  return parsed ? *parsed : std::vector<AclEntry>{};
}

void MaybeAcl(Rng& rng, NodeSpec* n, bool dir) {
  if (n->type == NodeType::kSymlink) return;
  if (rng.Percent(12)) n->acl = RandomAcl(rng);
  if (dir && rng.Percent(10)) n->default_acl = RandomAcl(rng);
}

uint32_t MountFlags(Rng& rng) {
  uint32_t f = 0;
  if (rng.Percent(15)) f |= kMountRdonly;
  if (rng.Percent(20)) f |= kMountNoexec;
  if (rng.Percent(12)) f |= kMountNosuid;
  if (rng.Percent(15)) f |= kMountNodev;
  if (rng.Percent(15)) f |= kMountNosymfollow;
  return f;
}

std::string Content(Rng& rng) {
  if (rng.Percent(50)) return "";
  static constexpr std::string_view kTexts[] = {"x", "hello\n", "#!/bin/sh\nexit 0\n", "data"};
  if (rng.Percent(70)) return std::string(rng.Pick(kTexts));
  std::string s;
  const int n = rng.Range(1, 40);
  for (int i = 0; i < n; ++i) s += static_cast<char>('a' + rng.Below(26));
  return s;
}

struct TreeBuilder {
  GenState& g;
  Rng& rng;
  int budget;
  std::vector<std::string> paths;  // every node path

  std::string Child(const std::string& dir, std::vector<std::string>* used) {
    std::string name;
    for (int tries = 0; tries < 8; ++tries) {
      name = std::string(rng.Pick(kNames));
      if (std::find(used->begin(), used->end(), name) == used->end()) break;
      name += std::to_string(used->size());
    }
    used->push_back(name);
    return (dir == "/" ? "" : dir) + "/" + name;
  }

  void Dir(const std::string& dir, int depth) {
    std::vector<std::string> used;
    const int children = depth == 0 ? rng.Range(3, 6) : rng.Range(0, std::max(1, 4 - depth / 2));
    for (int i = 0; i < children && budget > 0; ++i) {
      --budget;
      const std::string path = Child(dir, &used);
      paths.push_back(path);
      // dir, tmpfs, file, symlink, fifo, socket, char, block
      const int dir_weight = depth >= 5 ? 0 : 30 - 4 * depth;
      const int weights[] = {dir_weight, depth >= 5 ? 0 : 6, 34, 14, 4, 3, 5, 1};
      NodeSpec n;
      n.path = path;
      switch (rng.Weighted(weights)) {
        case 0: n.type = NodeType::kDir; break;
        case 1: n.type = NodeType::kTmpfs; break;
        case 2: n.type = NodeType::kFile; break;
        case 3: n.type = NodeType::kSymlink; break;
        case 4: n.type = NodeType::kFifo; break;
        case 5: n.type = NodeType::kSocket; break;
        case 6: n.type = NodeType::kChar; break;
        default: n.type = NodeType::kBlock; break;
      }
      const bool is_dir = n.type == NodeType::kDir || n.type == NodeType::kTmpfs;
      if (n.type != NodeType::kSymlink && rng.Percent(75))
        n.mode = PickMode(rng, is_dir ? std::span<const WeightedMode>(kDirModes)
                                      : std::span<const WeightedMode>(kFileModes));
      MaybeOwner(rng, &n);
      MaybeAcl(rng, &n, is_dir);
      if (n.type == NodeType::kTmpfs) {
        n.mount_flags = MountFlags(rng);
        // The mount point first, explicitly, so that it gets modes and
        // owners of its own to cover.
        NodeSpec point;
        point.path = path;
        point.type = NodeType::kDir;
        if (rng.Percent(50)) point.mode = PickMode(rng, kDirModes);
        g.s->nodes.push_back(point);
      }
      if (n.type == NodeType::kFile) n.content = Content(rng);
      if ((n.type == NodeType::kFile || n.type == NodeType::kDir) && rng.Percent(4))
        n.attrs = rng.Percent(50) ? kAttrImmutable : kAttrAppend;
      if (n.type == NodeType::kChar) {
        static constexpr std::pair<uint32_t, uint32_t> kChar[] = {
            {1, 3}, {1, 3}, {1, 5}, {1, 7}, {1, 3}, {42, 0}, {60, 1}, {120, 3}};
        std::tie(n.rdev_major, n.rdev_minor) = rng.Pick(kChar);
      } else if (n.type == NodeType::kBlock) {
        static constexpr std::pair<uint32_t, uint32_t> kBlock[] = {{42, 1}, {60, 0}, {121, 2}};
        std::tie(n.rdev_major, n.rdev_minor) = rng.Pick(kBlock);
      }
      g.s->nodes.push_back(n);
      if (is_dir) {
        Dir(path, depth + 1);
        // Now and then a tmpfs covers a directory and what it holds.
        if (n.type == NodeType::kDir && rng.Percent(5)) {
          NodeSpec cover;
          cover.path = path;
          cover.type = NodeType::kTmpfs;
          if (rng.Percent(50)) cover.mode = PickMode(rng, kDirModes);
          cover.mount_flags = MountFlags(rng);
          g.s->nodes.push_back(cover);
        }
      }
    }
  }

  std::string SymlinkTarget(const std::string& link) {
    const int r = rng.Range(0, 99);
    const std::string some = paths.empty() ? "/" : paths[rng.Below(paths.size())];
    if (r < 30) return some;                                   // absolute
    if (r < 55) return Relative(Dirname(link), some);          // relative, maybe via ..
    if (r < 62) return "/nonexistent/" + std::string(rng.Pick(kNames));  // dangling
    if (r < 68) return link.substr(link.rfind('/') + 1);       // itself: ELOOP
    if (r < 74) return rng.Percent(50) ? "." : "..";
    if (r < 78) return "/";
    if (r < 84) return "../" + std::string(rng.Pick(kNames));  // through ..
    if (r < 90) return some + "/";                             // trailing slash
    if (r < 94) return some + "/../" + std::string(rng.Pick(kNames));
    return "missing";
  }
};

}  // namespace

void GenerateTree(GenState& g) {
  Rng& rng = g.rng;
  Scenario& s = *g.s;
  if (rng.Percent(40)) {
    for (const SysctlField& f : kSysctlFields) s.sysctl.*f.value = rng.Range(0, f.max);
  }
  if (rng.Percent(8)) {
    NodeSpec root;
    root.path = "/";
    root.type = NodeType::kDir;
    root.mode = rng.Percent(50) ? 0711 : 0755;
    if (rng.Percent(30)) root.acl = RandomAcl(rng);
    s.nodes.push_back(root);
  }
  TreeBuilder b{g, rng, rng.Range(8, 30), {}};
  b.Dir("/", 0);
  // Now and then a shared sticky directory holding other users' files,
  // fifos and symlinks: what the sticky and protected_* rules are about.
  if (rng.Percent(35)) {
    static constexpr uint32_t kStickyModes[] = {01777, 01777, 01773, 01770, 0777};
    NodeSpec dir;
    dir.path = "/st";
    dir.type = NodeType::kDir;
    dir.mode = rng.Pick(kStickyModes);
    MaybeOwner(rng, &dir);
    s.nodes.push_back(dir);
    const int n = rng.Range(2, 5);
    for (int i = 0; i < n; ++i) {
      NodeSpec f;
      f.path = "/st/o" + std::to_string(i);
      static constexpr NodeType kTypes[] = {NodeType::kFile, NodeType::kFile, NodeType::kFifo, NodeType::kSymlink};
      f.type = rng.Pick(kTypes);
      static constexpr uint32_t kModes[] = {0666, 0644, 0600, 0622, 0660};
      if (f.type != NodeType::kSymlink) f.mode = rng.Pick(kModes);
      f.has_owner = true;
      f.uid = rng.Pick(kUids);
      f.gid = rng.Pick(kGids);
      s.nodes.push_back(f);
      b.paths.push_back(f.path);
    }
  }
  for (NodeSpec& n : s.nodes)
    if (n.type == NodeType::kSymlink) n.target = b.SymlinkTarget(n.path);
  // Bind mounts last, of directories (or files) made above, on new names.
  const int binds = rng.Percent(30) ? rng.Range(1, 2) : 0;
  for (int i = 0; i < binds; ++i) {
    const std::map<std::string, bool> view = NodeView(s, nullptr);
    std::vector<std::string> dirs, sources;
    for (const auto& [path, dir] : view) {
      if (dir) dirs.push_back(path);
      if (path != "/" && (dir || rng.Percent(20))) sources.push_back(path);
    }
    if (sources.empty()) break;
    const std::string src = sources[rng.Below(sources.size())];
    std::string parent = dirs[rng.Below(dirs.size())];
    if (IsUnder(parent, src)) parent = "/";
    NodeSpec point;
    point.path = (parent == "/" ? "" : parent) + "/bind" + std::to_string(i);
    point.type = view.at(src) ? NodeType::kDir : NodeType::kFile;
    s.nodes.push_back(point);
    NodeSpec n;
    n.type = NodeType::kBind;
    n.source = src;
    n.path = point.path;
    n.mount_flags = MountFlags(rng);
    s.nodes.push_back(n);
  }
  // A tree that does not build (none should) loses nodes from the end
  // until it does.
  while (!LoadTree(g)) s.nodes.pop_back();
  // Attributes and mount flags on what a later mount hides: the executors
  // cannot both apply them, so none are given.
  std::set<std::string> visible;
  for (const Known& k : g.tree) visible.insert(k.path);
  for (NodeSpec& n : s.nodes)
    if (!visible.contains(n.path)) {
      n.attrs = 0;
      n.mount_flags = 0;
    }
}

bool LoadTree(GenState& g) {
  Scenario nodes_only;
  nodes_only.nodes = g.s->nodes;
  nodes_only.sysctl = g.s->sysctl;
  EngineOptions o;
  o.capture_tree = true;
  RunResult r = RunInEngine(nodes_only, o);
  if (r.status != RunResult::Status::kRan && !g.s->nodes.empty()) return false;
  g.tree.clear();
  g.mounts.clear();
  // Whole paths, each from its parent's (the fuzzer's trees are shallow).
  std::vector<std::string> paths(r.tree.size());
  for (size_t i = 0; i < r.tree.size(); ++i) {
    const TreeEntry& e = r.tree[i];
    paths[i] = i == 0 ? "/" : (e.parent == 0 ? "" : paths[e.parent]) + "/" + e.name;
    g.tree.push_back({paths[i], e.type, e.target});
  }
  for (const NodeSpec& n : g.s->nodes)
    if (n.type == NodeType::kTmpfs || n.type == NodeType::kBind) g.mounts.push_back(n.path);
  return true;
}

}  // namespace pathwarden::fuzz::gen_internal
