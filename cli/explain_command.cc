// `pathwarden explain`.

#include "cli/explain_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "src/input/doc.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"
#include "src/query/scratch.h"
#include "src/input/json_text.h"
#include "src/input/text_quote.h"

namespace pathwarden::cli {

void AddLayerFlags(CLI::App* cmd, std::vector<std::string>* policies, bool* from_env,
                   std::string_view none) {
  cmd->add_option("--policy", *policies,
                  fmt::format("a landlockconfig policy (file or directory): one Landlock layer, "
                              "stacked in the order given{}",
                              none.empty() ? "" : fmt::format(" ({})", none)))
      ->allow_extra_args(false);
  cmd->add_flag("--from-env", *from_env,
                "one more layer from the kernel sample sandboxer's LL_FS_RO, LL_FS_RW, "
                "LL_TCP_BIND, LL_TCP_CONNECT, LL_SCOPED, stacked where it stands among the "
                "--policy layers");
}

void IdentityFlags::Add(CLI::App* cmd) {
  cmd->add_option("--uid", uid, "ask as this uid (gid and groups from the user database)");
  cmd->add_option("--gid", gid, "the gid (default: the user's)");
  cmd->add_option("--groups", groups, "supplementary groups, a,b,... or none");
  cmd->add_option("--caps", caps,
                  "effective capabilities: CAP_X,Y (any case, CAP_ optional), all or none "
                  "(default: all for uid 0, none otherwise)");
  cmd->add_option("--umask", umask, "the umask, octal");
  cmd->add_option("--cwd", cwd, "the working directory (absolute)");
  cmd->add_option("--pid", pid, "take a running process's credentials, cwd, root and mounts");
  cmd->add_option("--userns", userns,
                  "ask as a process in a new user namespace with this uid map, "
                  "INSIDE:OUTSIDE:COUNT[,...] (unshare -r is 0:UID:1); --uid (default 0), --gid "
                  "and --groups are then the namespace's ids");
  cmd->add_option("--userns-gids", userns_gids, "its gid map (default: the --userns map)");
  cmd->add_flag("--assume-unseen-run-nothing", assume_unseen_run_nothing, kAssumeUnseenHelp);
  AddTrustLsm(cmd, &trusted_lsms);
}

void AddTrustLsm(CLI::App* cmd, std::vector<std::string>* names) {
  cmd->add_option("--trust-lsm", *names, kTrustLsmHelp)->delimiter(',')->allow_extra_args(false);
}

Result<void, std::string> CheckTrustLsm(const std::vector<std::string>& names) {
  const std::vector<std::string>& known = SecurityModuleNames();
  for (const std::string& n : names)
    if (std::find(known.begin(), known.end(), n) == known.end())
      return Unexpected(fmt::format("--trust-lsm: \"{}\" is not a security module ({})", n,
                                    fmt::join(known, ", ")));
  return {};
}

Result<identity::Identity, std::string> IdentityFlags::Resolve() const {
  identity::IdentityOptions o;
  if (uid) {
    auto v = identity::ParseId(*uid, "--uid");
    if (!v) return Unexpected(v.error());
    o.uid = *v;
  }
  if (gid) {
    auto v = identity::ParseId(*gid, "--gid");
    if (!v) return Unexpected(v.error());
    o.gid = *v;
  }
  if (groups) {
    auto v = identity::ParseGroups(*groups);
    if (!v) return Unexpected("--groups: " + v.error());
    o.groups = *v;
  }
  if (caps) {
    auto v = identity::ParseCaps(*caps);
    if (!v) return Unexpected("--caps: " + v.error());
    o.caps = *v;
  }
  if (umask) {
    auto v = identity::ParseUmask(*umask);
    if (!v) return Unexpected("--umask: " + v.error());
    o.umask = *v;
  }
  if (cwd) o.cwd = *cwd;
  if (userns_gids && !userns) return Unexpected(std::string("--userns-gids needs --userns"));
  if (userns) {
    auto v = ParseIdMap(*userns, "--userns");
    if (!v) return Unexpected(v.error());
    o.userns_uids = *v;
  }
  if (userns_gids) {
    auto v = ParseIdMap(*userns_gids, "--userns-gids");
    if (!v) return Unexpected(v.error());
    o.userns_gids = *v;
  }
  if (pid) {
    if (*pid <= 0) return Unexpected(fmt::format("--pid {} is not a process id", *pid));
    o.pid = *pid;
  }
  if (auto ok = CheckTrustLsm(trusted_lsms); !ok) return Unexpected(ok.error());
  auto who = identity::ResolveIdentity(o);
  if (who) {
    who->assume_unseen_run_nothing = assume_unseen_run_nothing;
    who->trusted_lsms = trusted_lsms;
  }
  return who;
}

void AddExplain(CLI::App& app, ExplainOptions* o, CLI::App** out) {
  auto* cmd = app.add_subcommand(
      "explain",
      "why the live machine allows or denies a call: the walk, the Unix check and each "
      "Landlock layer, for an identity under policies");
  AddLayerFlags(cmd, &o->policies, &o->from_env);
  o->who.Add(cmd);
  cmd->add_option("--batch", o->batch, "one query per line from FILE (- for stdin)");
  cmd->add_flag("--json", o->json, "one JSON object per query");
  cmd->add_flag("-v,--verbose", o->verbose,
                "say on stderr which security modules are active and whether each could refuse "
                "what Unix and Landlock allow");
  cmd->add_flag("--verify", o->verify,
                "also ask the real kernel (read-only queries) and show whether it agrees");
  cmd->add_option("--scratch", o->scratch,
                  "with --verify: a directory the kernel may change for queries that change "
                  "the host (put back exactly after each)");
  cmd->add_option("--format", o->format, "full, or result only (with --batch)")
      ->check(CLI::IsMember({"full", "result"}));
  cmd->add_option("--colour,--color", o->colour, "auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("QUERY", o->query, "OP PATH [ARGS]: one query of the grammar below");
  // The grammar from the parser's own tables: every flag it takes.
  std::string footer =
      "Queries (one per line with --batch; FLAGS joined by |, anywhere after PATH; in a batch, "
      "a token in double quotes may hold blanks and the C escapes \\\" \\\\ \\a \\b \\t \\n \\v \\f \\r "
      "\\ooo; blank lines and # lines are skipped):\n";
  for (const std::string& form : query::Grammar()) footer += "  " + form + "\n";
  footer +=
      "Names in text output are quoted and escaped the same way when they hold blanks, quotes, "
      "backslashes, control characters or bytes that are not UTF-8.\n"
      "Exit status: 0 allowed, 1 denied, 3 unknown, 2 bad input; with --batch 0 when every query "
      "was answered, 3 when any was unknown, 2 bad input. See docs/commands.md.";
  cmd->footer(footer);
  *out = cmd;
}

std::string CurrentDir() {
  std::string cwd(4096, '\0');
  if (getcwd(cwd.data(), cwd.size()) == nullptr) return "/";
  cwd.resize(std::strlen(cwd.c_str()));
  return cwd;
}

Result<std::vector<policy::Policy>, std::string> LoadLayers(const std::vector<std::string>& files,
                                                            bool from_env, const std::string& cwd,
                                                            size_t env_at) {
  std::vector<policy::Policy> layers;
  auto env = [&]() -> Result<void, std::string> {
    auto l = policy::PolicyFromEnv([](const char* n) { return std::getenv(n); },
                                   landlock::kAbiLatest, cwd);
    if (!l) return Unexpected(l.error());
    layers.push_back(std::move(*l));
    return {};
  };
  for (size_t i = 0; i < files.size(); ++i) {
    if (from_env && i == env_at)
      if (auto r = env(); !r) return Unexpected(r.error());
    auto l = policy::LoadPolicy(files[i], cwd);
    if (!l) return Unexpected(l.error());
    layers.push_back(std::move(*l));
  }
  if (from_env && env_at >= files.size())
    if (auto r = env(); !r) return Unexpected(r.error());
  return layers;
}

size_t FromEnvPosition(const CLI::App& cmd) {
  const CLI::Option* policy = cmd.get_option_no_throw("--policy");
  const CLI::Option* env = cmd.get_option_no_throw("--from-env");
  size_t before = 0;
  for (const CLI::Option* o : cmd.parse_order()) {
    if (o == env) return before;
    if (o == policy) ++before;
  }
  return before;
}

bool WantColour(const std::string& setting) {
  return setting == "always" ||
         (setting == "auto" && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr);
}

namespace {

// The batch's lines, each parsed; the first bad one ends it all. The
// whole batch is read first by the one input reader (at most
// input::kMaxFile bytes: /dev/zero is refused, not read until memory runs
// out; a directory is refused by name).
Result<std::vector<query::Query>, std::string> ReadBatch(const std::string& name) {
  const std::string shown = name == "-" ? "<stdin>" : name;
  auto text = name == "-" ? input::ReadStdin(shown) : input::ReadFile(name);
  if (!text) return Unexpected(text.error());
  std::vector<query::Query> out;
  constexpr size_t kMaxLine = 1 << 20;
  std::string_view rest = *text;
  for (size_t n = 1; !rest.empty(); ++n) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.size() > kMaxLine) return Unexpected(fmt::format("{}:{}:1: a line over 1 MiB", shown, n));
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    auto q = query::ParseQueryLine(line);
    if (!q) return Unexpected(fmt::format("{}:{}:{}", shown, n, q.error()));
    out.push_back(std::move(*q));
  }
  return out;
}

int ExitFor(const Decision& d) { return d.allowed() ? 0 : d.unknown() ? 3 : 1; }

}  // namespace

int RunExplain(const ExplainOptions& o) {
  auto bad = [](const std::string& msg) {
    std::cerr << "explain: " << msg << "\n";
    return 2;
  };
  // Everything is read and checked before anything is answered.
  std::vector<query::Query> queries;
  if (o.batch) {
    if (!o.query.empty()) return bad("a query on the command line and --batch: give one");
    auto b = ReadBatch(*o.batch);
    if (!b) return bad(b.error());
    queries = std::move(*b);
  } else {
    if (o.query.empty()) return bad("no query (OP PATH [ARGS], or --batch FILE)");
    std::vector<query::Token> tokens;
    size_t col = 1;
    for (const std::string& a : o.query) {
      tokens.push_back({a, col});
      col += a.size() + 1;
    }
    auto q = query::ParseQuery(tokens);
    if (!q) return bad(fmt::format("<query>:1:{}", q.error()));
    queries.push_back(std::move(*q));
  }
  auto who = o.who.Resolve();
  if (!who) return bad(who.error());
  if (!o.scratch.empty() && !o.verify) return bad("--scratch is for --verify");
  // A run killed a moment ago may have a guardian still putting a scratch
  // directory back: the host is read after it is done (and after what a
  // run that died with its guardian left is put back). What fails here
  // is said again by the first changing query, as its reason.
  if (!o.scratch.empty()) (void)query::RepairScratch();
  auto layers = LoadLayers(o.policies, o.from_env, CurrentDir(), o.from_env_at);
  if (!layers) return bad(layers.error());
  auto session = query::Session::Open(*who, std::move(*layers));
  if (!session) return bad(session.error());
  for (const std::string& n : who->notes)
    std::cerr << "explain: note: " << input::EscapeText(n) << "\n";
  for (const std::string& w : (*session)->warnings())
    std::cerr << "explain: warning: " << input::EscapeText(w) << "\n";
  if (o.verbose)
    if (const SecurityModules* lsms = (*session)->model().security_modules())
      for (const std::string& line : lsms->Describe())
        std::cerr << "explain: security module " << input::EscapeText(line) << "\n";
  const bool colour = WantColour(o.colour);
  int status = 0;
  bool any_unknown = false;
  if (o.batch && o.format == "result" && !o.verify && !o.json) {
    // Results only: the lines gathered and written in blocks.
    query::ResultLines out(colour);
    for (const query::Query& q : queries) {
      const Decision d = (*session)->AskQuiet(q);
      any_unknown |= d.unknown();
      out.Add(d);
      if (out.text().size() >= 64 * 1024) {
        std::cout.write(out.text().data(), static_cast<std::streamsize>(out.text().size()));
        out.clear();
      }
    }
    std::cout.write(out.text().data(), static_cast<std::streamsize>(out.text().size()));
    return any_unknown ? 3 : 0;
  }
  for (const query::Query& q : queries) {
    if (o.batch && o.format == "result" && !o.verify) {
      const Decision d = (*session)->AskQuiet(q);
      any_unknown |= d.unknown();
      nlohmann::json j{{"op", q.op}, {"path", q.path}, {"result", query::ResultName(d)}};
      if (!q.path2.empty()) j["path2"] = q.path2;
      std::cout << input::JsonText(j) << "\n";
      continue;
    }
    const query::Answer a = (*session)->Ask(q, o.verify, o.scratch);
    any_unknown |= a.decision.unknown();
    if (o.json) {
      std::cout << input::JsonText(query::RenderJson(**session, a)) << "\n";
    } else if (o.batch) {
      std::cout << query::RenderLine(a, colour) << "\n";
    } else {
      std::cout << query::RenderText(**session, a, colour);
    }
    status = ExitFor(a.decision);
  }
  if (o.batch) return any_unknown ? 3 : 0;
  return status;
}

}  // namespace pathwarden::cli
