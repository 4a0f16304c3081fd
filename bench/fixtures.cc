// Worlds the benchmarks measure: the Landlock chain of the seed patch and a
// snapshot of the host's /usr.

#include "bench/fixtures.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <unordered_map>

#include <fmt/format.h>

#include "src/landlock/landlock.h"
#include "src/vfs/import.h"

namespace pathwarden::bench {

std::unique_ptr<Engine> ChainEngine(int depth, int layers, const EngineOptions& options) {
  auto s = ParseScenario("format = 1\n[[process]]\nname = \"sb\"\n", "chain", false);
  auto e = std::make_unique<Engine>(options);
  if (!s || !e->Build(*s)) return nullptr;
  vfs::World& w = e->world();
  landlock::Landlock& ll = e->landlock();
  vfs::World::WriteGuard g(w);
  // A chain of `depth` directories "d", one rule per directory granting
  // ioctl_dev, in a ruleset handling ioctl_dev|write_file|make_reg.
  landlock::Ruleset rs;
  rs.handled_fs = landlock::kFsIoctlDev | landlock::kFsWriteFile | landlock::kFsMakeReg;
  RuleSpec rule;
  rule.access = landlock::kFsIoctlDev;
  std::string why;
  vfs::PathPos cur = w.root();
  const vfs::SbId sb = w.inode(w.inode_of(cur.dentry)).sb;
  for (int i = 0; i < depth; ++i) {
    if (ll.AddPathRule(rs, rule, cur, &why) != 0) return nullptr;
    const vfs::InodeId ino = w.NewInode(sb, S_IFDIR | 0755, 0, 0);
    w.SetNlink(ino, 2);
    cur.dentry = w.Link(cur.dentry, "d", ino);
  }
  Process& p = e->process(e->FindProcess("sb"));
  for (int l = 0; l < layers; ++l)
    if (ll.Restrict(p, rs, &why) != 0) return nullptr;
  e->InstallFd(p, "inner", e->NewFile(p, cur, kFmodePath, O_PATH));
  return e;
}

StepSpec ChainStep() {
  StepSpec st;
  st.as = "sb";
  st.op = Op::kOpen;
  st.path = "file.txt";
  st.dirfd = "inner";
  st.flags = O_CREAT | O_TRUNC | O_WRONLY;
  st.mode = 0600;
  return st;
}

std::unique_ptr<Engine> UsrEngine(const std::string& usr, const EngineOptions& options,
                                  vfs::ImportStats* stats, double* seconds,
                                  std::string* why) {
  // A user (for DAC) and a sandbox reading only /usr/include (for
  // Landlock checks).
  auto s = ParseScenario(R"(format = 1
[[node]]
path = "/usr"
type = "dir"
[[process]]
name = "user"
uid = 1000
gid = 1000
[[process]]
name = "sb"
uid = 1000
gid = 1000
)", "usr", false);
  auto e = std::make_unique<Engine>(options);
  if (!s || !e->Build(*s)) {
    *why = "cannot build the base world";
    return nullptr;
  }
  vfs::World& w = e->world();
  const vfs::PathPos root = w.root();
  const vfs::PathPos usr_dir{root.mnt, w.Lookup(root.dentry, "usr")};
  const auto t0 = std::chrono::steady_clock::now();
  auto imported = vfs::ImportHostTree(w, usr, usr_dir);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!imported) {
    *why = imported.error();
    return nullptr;
  }
  *stats = *imported;
  // The sandbox: one layer handling read_file, granting it under
  // /usr/include (when the snapshot has it).
  landlock::Landlock& ll = e->landlock();
  landlock::Ruleset rs;
  rs.handled_fs = landlock::kFsReadFile | landlock::kFsReadDir;
  vfs::World::WriteGuard g(w);
  const vfs::DentryId inc = w.Lookup(usr_dir.dentry, "include");
  std::string err;
  if (inc != vfs::kNone) {
    RuleSpec rule;
    rule.path = "/usr/include";
    rule.access = landlock::kFsReadFile;
    if (ll.AddPathRule(rs, rule, {usr_dir.mnt, inc}, &err) != 0) {
      *why = "the sandbox's rule: " + err;
      return nullptr;
    }
  }
  if (ll.Restrict(e->process(e->FindProcess("sb")), rs, &err) != 0) {
    *why = "the sandbox's layer: " + err;
    return nullptr;
  }
  return e;
}

std::vector<std::pair<std::string, vfs::DentryId>> PathsBelow(const vfs::World& w,
                                                              vfs::DentryId top,
                                                              const std::string& prefix) {
  std::unordered_map<vfs::DentryId, std::vector<vfs::DentryId>> children;
  for (vfs::DentryId d = 1; d < w.dentry_end(); ++d) {
    const vfs::Dentry& de = w.dentry(d);
    if ((de.flags & vfs::kDentryHashed) && de.parent != d) children[de.parent].push_back(d);
  }
  std::vector<std::pair<std::string, vfs::DentryId>> out;
  std::vector<std::pair<vfs::DentryId, std::string>> stack{{top, prefix}};
  while (!stack.empty()) {
    auto [d, p] = std::move(stack.back());
    stack.pop_back();
    auto it = children.find(d);
    if (it != children.end())
      for (vfs::DentryId c : it->second)
        stack.push_back({c, p + "/" + std::string(w.str(w.dentry(c).name))});
    out.push_back({std::move(p), d});
  }
  return out;
}

}  // namespace pathwarden::bench
