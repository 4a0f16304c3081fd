// `pathwarden map`.

#include "cli/map_command.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/map.h"

namespace pathwarden::cli {

void AddMap(CLI::App& app, MapCommandOptions* o, CLI::App** out) {
  auto* cmd = app.add_subcommand(
      "map", "what an identity may do on every path under a directory, under policies");
  AddLayerFlags(cmd, &o->policies, &o->from_env);
  o->who.Add(cmd);
  cmd->add_option("DIR", o->dir, "the directory to map")->required();
  cmd->add_option("--depth", o->depth, "at most this deep (0: DIR alone)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--only", o->only, "only paths that are writable, executable or readable")
      ->check(CLI::IsMember({"writable", "executable", "readable"}));
  auto* dp = cmd->add_option("--diff-policy", o->diff_policy,
                             "show only what differs under this policy instead");
  auto* du = cmd->add_option("--diff-uid", o->diff_uid,
                             "show only what differs for this uid instead (gid and groups from "
                             "the user database, as --uid)")
                  ->excludes(dp);
  // The second identity, as --gid, --groups and --caps give the first.
  cmd->add_option("--diff-gid", o->diff_gid, "--diff-uid's gid (default: the user's)")->needs(du);
  cmd->add_option("--diff-groups", o->diff_groups,
                  "--diff-uid's supplementary groups, a,b,... or none")
      ->needs(du);
  cmd->add_option("--diff-caps", o->diff_caps,
                  "--diff-uid's capabilities (default: all for uid 0, none otherwise)")
      ->needs(du);
  cmd->add_flag("--json", o->json, "one JSON object per path");
  cmd->add_option("--colour,--color", o->colour, "auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->footer(
      "Rights: read, list, write, execute, search, truncate, remove, rename, link, create_file, "
      "create_dir, create_symlink, create_fifo, create_socket, each the answer explain gives to "
      "one query (docs/commands.md). The tree prints a directory's rights where they differ "
      "from its parent directory's, and another entry's where they differ from the files: "
      "its directory's line names (what most entries there that are not directories may do); "
      "a line without rights has those. Names with blanks, quotes, backslashes, control "
      "characters or bytes that are not UTF-8 are quoted with C escapes. remove of a "
      "directory is allowed when every permission check passes (it is then ENOTEMPTY until "
      "empty). Rights on paths of PATH_MAX bytes or more are unknown. Exit status: 0, 3 when "
      "any path was unknown, 2 on bad input.");
  *out = cmd;
}

int RunMapCommand(const MapCommandOptions& o) {
  auto bad = [](const std::string& msg) {
    std::cerr << "map: " << msg << "\n";
    return 2;
  };
  auto who = o.who.Resolve();
  if (!who) return bad(who.error());
  const std::string cwd = CurrentDir();
  auto loaded = LoadLayers(o.policies, o.from_env, cwd, o.from_env_at);
  if (!loaded) return bad(loaded.error());
  const std::vector<policy::Policy>& layers = *loaded;
  std::string dir = o.dir;
  if (dir.empty()) return bad("DIR is empty");
  if (dir[0] != '/') dir = (cwd == "/" ? "" : cwd) + "/" + dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const bool confined = !layers.empty();
  auto session = query::Session::Open(*who, layers);
  if (!session) return bad(session.error());
  for (const std::string& w : (*session)->warnings()) std::cerr << "map: warning: " << w << "\n";
  std::unique_ptr<query::Session> diff, unix_alone;
  if (o.diff_policy) {
    auto other = LoadLayers({*o.diff_policy}, false, cwd);
    if (!other) return bad(other.error());
    auto s = query::Session::Open(*who, std::move(*other));
    if (!s) return bad(s.error());
    diff = std::move(*s);
  } else if (o.diff_uid) {
    IdentityFlags f;
    f.uid = *o.diff_uid;
    f.gid = o.diff_gid;
    f.groups = o.diff_groups;
    f.caps = o.diff_caps;
    auto w2 = f.Resolve();
    if (!w2) {
      // Its messages name the first identity's flags.
      std::string msg = w2.error();
      for (const char* flag : {"--uid", "--gid", "--groups", "--caps"}) {
        const std::string renamed = "--diff-" + std::string(flag + 2);
        for (size_t at = msg.find(flag); at != std::string::npos;
             at = msg.find(flag, at + renamed.size()))
          msg.replace(at, std::strlen(flag), renamed);
      }
      return bad(msg);
    }
    auto s = query::Session::Open(*w2, layers);
    if (!s) return bad(s.error());
    diff = std::move(*s);
  } else if (confined) {
    auto s = query::Session::Open(*who, {});
    if (!s) return bad(s.error());
    unix_alone = std::move(*s);
  }
  query::MapOptions mo;
  mo.dir = dir;
  mo.depth = o.depth;
  mo.only = o.only;
  mo.json = o.json;
  mo.colour = WantColour(o.colour);
  std::string err;
  const int status = query::RunMap(**session, diff.get(), unix_alone.get(), mo, &err);
  if (status == 2) return bad(err);
  return status;
}

}  // namespace pathwarden::cli
