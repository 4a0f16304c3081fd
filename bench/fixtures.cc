// Worlds the benchmarks measure: the Landlock chain of the seed patch and
// the host with its /usr preloaded.

#include "bench/fixtures.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "src/base/progress.h"

namespace pathwarden::bench {

std::unique_ptr<ChainWorld> ChainModel(int depth, int layers, const EngineOptions& options) {
  auto c = std::unique_ptr<ChainWorld>(new ChainWorld{NewModel(options), Process{}, Fd{}});
  Model& m = c->model;
  c->sb = m.Spawn("sb", Cred::ForUser(0, 0));
  // A chain of `depth` directories "d", one rule per directory granting
  // ioctl_dev, in a ruleset handling ioctl_dev|write_file|make_reg.
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsIoctlDev | landlock::kFsWriteFile | landlock::kFsMakeReg;
  Node cur = m.Root();
  for (int i = 0; i < depth; ++i) {
    rs.AllowPath(cur, landlock::kFsIoctlDev);
    rs.rules.back().path = "d";  // how reasons name it: the chain is too long to spell
    auto next = m.Mkdir(cur, "d");
    if (!next) return nullptr;
    cur = *next;
  }
  // The innermost directory, reached in steps shorter than PATH_MAX.
  constexpr int kStep = 1000;
  for (int done = 0; done < depth; done += kStep) {
    std::string rel;
    for (int i = done; i < std::min(depth, done + kStep); ++i) rel += i == done ? "d" : "/d";
    if (m.Apply(c->sb, Chdir{.path = rel}, Model::Detail::kVerdictOnly).err()) return nullptr;
  }
  const Decision inner = m.Apply(c->sb, Open{.path = ".", .flags = O_PATH});
  if (inner.err()) return nullptr;
  c->inner = inner.fd();
  (void)m.NameFd(c->sb, c->inner, "inner");
  if (m.Apply(c->sb, Chdir{.path = "/"}, Model::Detail::kVerdictOnly).err()) return nullptr;
  for (int l = 0; l < layers; ++l)
    if (m.Apply(c->sb, Restrict{.ruleset = rs}, Model::Detail::kVerdictOnly).err()) return nullptr;
  return c;
}

Request ChainRequest(const ChainWorld& c) {
  return Open{.dirfd = c.inner, .path = "file.txt", .flags = O_CREAT | O_TRUNC | O_WRONLY,
              .mode = 0600};
}

std::unique_ptr<UsrWorld> UsrModel(const std::string& usr, const EngineOptions& options,
                                   bool progress, std::string* why) {
  auto host = Model::FromHost(BenchHostOptions());
  if (!host) {
    *why = "the host model: " + host.error();
    return nullptr;
  }
  auto u = std::unique_ptr<UsrWorld>(new UsrWorld{std::move(*host), Process{}, Process{}, Node{}});
  Model& m = u->model;
  // The engine's variant, before any process or layer exists.
  EngineOf(m).mutable_options() = options;
  std::optional<internal::ProgressLine> line;
  if (progress) line.emplace("preload " + usr, "entries");
  const auto t0 = std::chrono::steady_clock::now();
  auto filled = m.Preload(usr, [&](uint64_t n) {
    if (line) line->Update(n);
  });
  u->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (line) line->Clear();
  if (!filled) {
    *why = filled.error();
    return nullptr;
  }
  u->entries = *filled;
  auto usr_node = m.Lookup(usr);
  if (!usr_node) {
    *why = usr + ": not found after the preload";
    return nullptr;
  }
  u->usr = *usr_node;
  // A user (for DAC) and a sandbox reading only /usr/include (for
  // Landlock checks).
  Cred user = Cred::ForUser(1000, 1000);
  u->user = m.Spawn("user", user);
  u->sb = m.Spawn("sb", user);
  // The sandbox: one layer handling read_file, granting it under
  // /usr/include (when the host has it).
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile | landlock::kFsReadDir;
  if (auto inc = m.Lookup("/usr/include")) rs.AllowPath(*inc, landlock::kFsReadFile);
  const Decision d = m.Apply(u->sb, Restrict{.ruleset = rs});
  if (d.err()) {
    *why = "the sandbox's layer: " + d.ToText();
    return nullptr;
  }
  return u;
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

std::unique_ptr<UsrWorld> UsrModelOrNote(const Options& o, Reporter& r, std::string_view name,
                                         bool progress) {
  std::string why;
  auto u = UsrModel(o.usr, EngineOptions{}, progress, &why);
  if (!u) r.Note(fmt::format("{}: {}", name, why));
  return u;
}

}  // namespace pathwarden::bench
