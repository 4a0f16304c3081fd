// The generator's processes: ids, groups, capabilities, umasks, cwds and
// Landlock layers (valid ones at the start; odd ones, now and then, for
// restrict steps), some forked from others to nest their domains.

#include <algorithm>

#include "pathwarden/cred.h"
#include "pathwarden/executor.h"
#include "src/scenario/run_engine.h"
#include "pathwarden/landlock.h"
#include "src/fuzz/gen_internal.h"

namespace pathwarden::fuzz::gen_internal {
namespace {

constexpr int kCaps[] = {kCapDacOverride, kCapDacReadSearch, kCapFowner,        kCapChown,
                         kCapFsetid,      kCapMknod,         kCapKill,          kCapNetBindService,
                         kCapSysAdmin,    kCapSysChroot,     kCapLinuxImmutable};
constexpr uint32_t kUmasks[] = {0, 022, 077, 027, 002, 0777, 007};

landlock::AccessMask RandomSubset(Rng& rng, landlock::AccessMask of, int percent) {
  landlock::AccessMask m = 0;
  for (int i = 0; i < 32; ++i)
    if ((of & (1u << i)) && rng.Percent(percent)) m |= 1u << i;
  return m;
}

// A non-empty subset of `of` (which must not be empty).
landlock::AccessMask NonEmptySubset(Rng& rng, landlock::AccessMask of) {
  if (rng.Percent(20)) return of;
  for (int tries = 0; tries < 8; ++tries)
    if (landlock::AccessMask m = RandomSubset(rng, of, 45)) return m;
  for (int i = 0; i < 32; ++i)
    if (of & (1u << i)) return 1u << i;
  return of;
}

std::string RulePath(GenState& g, const ProcInfo& actor, const Known& k) {
  if (g.rng.Percent(15) && IsUnder(k.path, actor.cwd)) return Relative(actor.cwd, k.path);
  return k.path;
}

}  // namespace

LayerSpec RandomLayer(GenState& g, const ProcInfo& actor, bool odd) {
  Rng& rng = g.rng;
  LayerSpec l;
  const int fs = rng.Range(0, 99);
  if (fs < 15) l.handled_fs = landlock::kFsAll;
  else if (fs < 85) l.handled_fs = RandomSubset(rng, landlock::kFsAll, 40);
  if (rng.Percent(25)) l.handled_net = NonEmptySubset(rng, landlock::kNetAll);
  if (rng.Percent(25)) l.scoped = NonEmptySubset(rng, landlock::kScopeAll);
  if (!l.handled_fs && !l.handled_net && !l.scoped) l.handled_fs = 1u << rng.Below(landlock::kNumFsRights);
  const int rules = static_cast<int>(rng.Weighted(std::initializer_list<int>{15, 30, 25, 15, 10, 5}));
  for (int i = 0; i < rules; ++i) {
    RuleSpec r;
    if (l.handled_net && (!l.handled_fs || rng.Percent(30))) {
      r.is_port = true;
      r.port = rng.Pick(kPorts);
      r.access = NonEmptySubset(rng, l.handled_net);
      l.rules.push_back(r);
      continue;
    }
    if (!l.handled_fs) continue;
    const int kind = rng.Range(0, 99);
    const Known* k = PickKnown(g, kind < 70 ? Want::kDir : kind < 95 ? Want::kFile : Want::kSymlink);
    if (k == nullptr || k->type.empty()) continue;
    landlock::AccessMask allowed = l.handled_fs;
    if (k->type == "symlink") {
      // The link itself (nofollow), which takes file rights only.
      r.nofollow = true;
      allowed &= landlock::kFsFileRights;
    } else if (k->type != "dir") {
      allowed &= landlock::kFsFileRights;
    }
    if (!allowed) continue;
    r.path = RulePath(g, actor, *k);
    r.access = NonEmptySubset(rng, allowed);
    l.rules.push_back(r);
  }
  if (!odd || !rng.Percent(35)) return l;
  // One thing the kernel refuses (or a rule path that does not resolve).
  switch (rng.Below(6)) {
    case 0:  // handles nothing: ENOMSG
      l = LayerSpec{};
      break;
    case 1: {  // a rule granting what the layer does not handle: EINVAL
      RuleSpec r;
      r.path = actor.cwd;
      r.access = landlock::kFsAll & ~l.handled_fs;
      if (!r.access) r.access = landlock::kFsReadDir;
      l.rules.push_back(r);
      break;
    }
    case 2: {  // directory rights on a file: EINVAL
      const Known* k = PickKnown(g, Want::kFile);
      if (k == nullptr) break;
      l.handled_fs |= landlock::kFsReadDir | landlock::kFsMakeReg;
      RuleSpec r;
      r.path = k->path;
      r.access = landlock::kFsReadDir | (l.handled_fs & landlock::kFsReadFile);
      l.rules.push_back(r);
      break;
    }
    case 3: {  // a rule granting nothing: ENOMSG
      RuleSpec r;
      r.path = "/";
      l.rules.push_back(r);
      break;
    }
    case 4: {  // a path that does not resolve
      RuleSpec r;
      r.path = NewPath(g);
      r.access = l.handled_fs ? l.handled_fs : landlock::kFsReadFile;
      l.handled_fs |= r.access;
      l.rules.push_back(r);
      break;
    }
    default: {  // a port rule in a layer without network rights: EINVAL
      RuleSpec r;
      r.is_port = true;
      r.port = rng.Pick(kPorts);
      r.access = landlock::kNetBindTcp;
      l.handled_net = 0;
      if (!l.handled_fs && !l.scoped) l.handled_fs = landlock::kFsReadFile;
      l.rules.push_back(r);
      break;
    }
  }
  return l;
}

namespace {

// A user namespace for `p`, as the runtimes make them, its uid and gid
// mapping: unshare -r (root inside), bubblewrap's --unshare-user (the same
// ids inside), a namespace mapping root and the user, or a wide range
// mapping every id the generator uses.
void UserNsFor(Rng& rng, ProcessSpec* p) {
  const uint32_t u = p->uid, gid = p->gid;
  switch (rng.Below(4)) {
    case 0:
      p->userns_uids = {{0, u, 1}};
      p->userns_gids = {{0, gid, 1}};
      break;
    case 1:
      p->userns_uids = {{u, u, 1}};
      p->userns_gids = {{gid, gid, 1}};
      break;
    case 2:
      p->userns_uids = {{0, 0, 1}};
      if (u != 0) p->userns_uids.push_back({u, u, 1});
      p->userns_gids = {{0, 0, 1}};
      if (gid != 0) p->userns_gids.push_back({gid, gid, 1});
      break;
    default:
      p->userns_uids = p->userns_gids = {{0, 0, 4000}};
      break;
  }
}

}  // namespace

void GenerateProcesses(GenState& g) {
  Rng& rng = g.rng;
  Scenario& s = *g.s;
  g.procs.push_back(ProcInfo{"root", 0, "/", {}, false});
  std::vector<int> caps;
  for (int c : kCaps)
    if (g.options.caps_available & CapBit(c)) caps.push_back(c);
  const int count = 1 + static_cast<int>(rng.Weighted(std::initializer_list<int>{30, 35, 25, 10}));
  for (int i = 0; i < count; ++i) {
    ProcessSpec p;
    ProcInfo info;
    p.name = "p" + std::to_string(i + 1);
    info.name = p.name;
    if (!s.processes.empty() && rng.Percent(20)) {
      const size_t pi = 1 + rng.Below(g.procs.size() - 1);
      p.parent = g.procs[pi].name;
      info.uid = g.procs[pi].uid;
      info.cwd = g.procs[pi].cwd;
      info.userns = g.procs[pi].userns;
    } else {
      p.uid = rng.Percent(20) ? 0 : rng.Pick(kUids);
      p.gid = rng.Percent(70) ? p.uid == 0 ? 0 : rng.Pick(kGids) : rng.Pick(kGids);
      info.uid = p.uid;
      const int ngroups = static_cast<int>(rng.Weighted(std::initializer_list<int>{55, 30, 15}));
      for (int k = 0; k < ngroups; ++k) {
        uint32_t gid = rng.Pick(kGids);
        if (std::find(p.groups.begin(), p.groups.end(), gid) == p.groups.end()) p.groups.push_back(gid);
      }
      const bool give_caps = p.uid == 0 ? rng.Percent(60) : rng.Percent(35);
      if (give_caps) {
        uint64_t set = 0;
        const int n = rng.Range(p.uid == 0 ? 0 : 1, 3);
        for (int k = 0; k < n && !caps.empty(); ++k) set |= CapBit(caps[rng.Below(caps.size())]);
        p.caps = set;
      }
      if (rng.Percent(20)) {
        UserNsFor(rng, &p);
        info.userns = true;
      }
    }
    if (rng.Percent(40)) p.umask = rng.Percent(20) ? static_cast<uint32_t>(rng.Below(01000)) : rng.Pick(kUmasks);
    if (rng.Percent(35)) {
      const Known* k = PickKnown(g, Want::kDir);
      if (k != nullptr && k->type == "dir") {
        p.cwd = k->path;
        info.cwd = k->path;
      }
    }
    const int layers = static_cast<int>(rng.Weighted(std::initializer_list<int>{40, 30, 15, 10, 5}));
    for (int k = 0; k < layers; ++k) p.layers.push_back(RandomLayer(g, info, false));
    s.processes.push_back(p);
    g.procs.push_back(info);
  }
  // One build checks them all (a forked process may lack the search
  // rights its cwd or a relative rule path needs). When it fails, each
  // process that does not build loses its cwd and layers, in file order.
  if (EngineBuildError(s).empty()) return;
  std::vector<ProcessSpec> all = std::move(s.processes);
  s.processes.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    s.processes.push_back(all[i]);
    if (EngineBuildError(s).empty()) continue;
    s.processes.back().cwd.reset();
    s.processes.back().layers.clear();
    // Its children inherit the cwd it no longer has.
    std::string cwd = "/";
    if (!all[i].parent.empty())
      for (const ProcInfo& pi : g.procs)
        if (pi.name == all[i].parent) cwd = pi.cwd;
    g.procs[i + 1].cwd = cwd;
  }
}

}  // namespace pathwarden::fuzz::gen_internal
