// `explain` and `map` on the live machine, with the kernel as the judge:
// queries on a scratch tree (src/kernel/scratch_host.h, in a private
// mount namespace of this test's process) and on real paths under /usr,
// /etc and /var (and the namespace's own /tmp), for several identities
// under several policies;
// every right `map` shows against the query `explain` answers. Root
// only; skipped elsewhere.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/scratch_host.h"
#include "src/kernel/sysctl_guard.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/map.h"
#include "src/query/query.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden {
namespace {

using kernel_internal::ProbeHost;
using kernel_internal::ProbeIdentity;
using kernel_internal::ScratchHost;
using query::Query;
using query::Session;

identity::Identity Who(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups, bool caps) {
  identity::Identity id;
  id.cred = Cred::ForUser(uid, gid);
  id.cred.SetGroups(std::move(groups));
  const uint64_t avail = kernel_internal::AvailableCaps();
  id.cred.cap_effective = id.cred.cap_permitted = caps ? avail : 0;
  // The scratch tree is this test's own, in its private mount namespace:
  // no process pathwarden cannot see runs a program from it.
  id.assume_unseen_run_nothing = true;
  return id;
}

std::vector<std::pair<std::string, identity::Identity>> Identities() {
  return {{"root", Who(0, 0, {0}, true)},
          {"root without capabilities", Who(0, 0, {0}, false)},
          {"uid 1000", Who(1000, 1000, {1000}, false)},
          {"uid 1001 in 1000", Who(1001, 1001, {1001, 1000}, false)},
          {"nobody", Who(65534, 65534, {65534}, false)}};
}

policy::PathRule Rule(std::string path, landlock::AccessMask access) {
  return {std::move(path), access, {{"test", 1, 1}}};
}

// The policies the queries run under: none, a read-only system with a
// writable scratch directory, and two stacked layers.
std::vector<std::pair<std::string, std::vector<policy::Policy>>> Policies(const std::string& root) {
  using namespace landlock;
  policy::Policy ro;
  ro.source = "read-only";
  ro.handled_fs = kFsExecute | kFsReadFile | kFsReadDir | kFsWriteFile | kFsMakeReg |
                  kFsMakeDir | kFsRemoveFile | kFsRemoveDir | kFsTruncate;
  ro.paths = {Rule("/", kFsExecute | kFsReadFile | kFsReadDir),
              Rule(root + "/tmp", kFsWriteFile | kFsMakeReg | kFsMakeDir | kFsRemoveFile |
                                      kFsRemoveDir | kFsTruncate | kFsReadFile | kFsReadDir)};
  std::sort(ro.paths.begin(), ro.paths.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  policy::Policy home;
  home.source = "home only";
  home.handled_fs = kFsReadFile | kFsReadDir | kFsExecute;
  home.paths = {Rule(root + "/home", kFsReadFile | kFsReadDir), Rule("/usr", kFsExecute | kFsReadFile | kFsReadDir)};
  std::sort(home.paths.begin(), home.paths.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return {{"no policy", {}}, {"read-only", {ro}}, {"read-only + home only", {ro, home}}};
}

std::vector<std::string> Sample(const std::string& scratch) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(scratch, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  out.insert(out.begin(), scratch);
  out.push_back(scratch + "/home/alice/missing");
  // /tmp itself (the private namespace's own tmpfs, 1777) and the host's
  // /var/tmp (1777 on its root filesystem; its entries come and go with
  // other processes).
  out.push_back("/tmp");
  out.push_back("/var/tmp");
  for (const char* dir : {"/usr/bin", "/usr/include", "/etc", "/etc/ssl/private", "/var/log",
                          "/var/lib"}) {
    std::vector<std::string> names;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      names.push_back(it->path().string());
    std::sort(names.begin(), names.end());
    out.push_back(dir);
    for (size_t i = 0; i < names.size() && i < 60; i += 9) out.push_back(names[i]);
  }
  return out;
}

// Read-only query lines for a path, as a user types them.
std::vector<std::string> Lines(const std::string& path, bool scratch) {
  struct stat st {};
  const bool exists = lstat(path.c_str(), &st) == 0;
  std::vector<std::string> out{
      "stat \"" + path + "\"", "lstat \"" + path + "\"", "access \"" + path + "\" R_OK",
      "access \"" + path + "\" W_OK", "access \"" + path + "\" X_OK",
      "readlink \"" + path + "\"", "chdir \"" + path + "\"", "exec_check \"" + path + "\"",
      "open \"" + path + "\" O_PATH"};
  if (exists && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
    out.push_back("open \"" + path + "\" O_RDONLY");
    out.push_back("open \"" + path + "\" O_RDONLY|O_DIRECTORY");
    if (scratch && S_ISREG(st.st_mode)) out.push_back("open \"" + path + "\" O_WRONLY");
  }
  return out;
}

using ExplainTest = ScratchHostTest;

TEST_F(ExplainTest, TheKernelAgrees) {
  const std::string root = scratch_->root();
  const std::vector<std::string> paths = Sample(root);
  int compared = 0;
  for (const auto& [pname, layers] : Policies(root)) {
    for (const auto& [wname, who] : Identities()) {
      auto session = Session::Open(who, layers);
      ASSERT_TRUE(session) << session.error();
      std::vector<Query> queries;
      for (const std::string& p : paths)
        for (const std::string& line : Lines(p, p.starts_with(root))) {
          auto q = query::ParseQueryLine(line);
          ASSERT_TRUE(q) << line << ": " << q.error();
          queries.push_back(std::move(*q));
        }
      ProbeIdentity id{who.cred, {}};
      for (const policy::HostLayer& l : (*session)->layers()) id.layers.push_back(l.ruleset);
      std::vector<Request> requests;
      for (const Query& q : queries) requests.push_back(q.request);
      auto kernel = ProbeHost(id, requests);
      ASSERT_TRUE(kernel) << kernel.error();
      for (size_t k = 0; k < queries.size(); ++k) {
        const query::Answer a = (*session)->Ask(queries[k], false);
        ASSERT_FALSE(a.decision.unknown()) << queries[k].op << " " << queries[k].path;
        // A transient ELOOP of a long symlink walk whose RCU attempt
        // restarted (see host_backend_test.cc SettledAnswer()): ask again.
        for (int again = 0; again < 5 && (*kernel)[k] == ELOOP && a.decision.err() != ELOOP;
             ++again) {
          const Request one[] = {requests[k]};
          auto k2 = ProbeHost(id, one);
          if (!k2) break;
          (*kernel)[k] = (*k2)[0];
        }
        EXPECT_EQ(a.decision.err(), (*kernel)[k])
            << wname << " under " << pname << ": " << queries[k].op << " " << queries[k].path
            << "\n  explain: " << query::RenderText(**session, a, false);
        ++compared;
      }
    }
  }
  RecordProperty("compared", compared);
  EXPECT_GT(compared, 10000);
}

// A chain below `root` whose deepest paths pass PATH_MAX, made relative
// to each directory (paths that long are ENAMETOOLONG to every call that
// takes one): deep/ holds directories of 200-byte names, each holding a
// file f and the next, until the path is 300 bytes past PATH_MAX; in the
// directory where they fit, files whose paths are 4095 and 4096 bytes
// (PATH_MAX with the NUL, and one more). Returns every path made, and
// the two files.
struct Deep {
  std::vector<std::string> paths;
  std::string fits, too_long;  // 4095 and 4096 bytes
};
Deep MakeDeep(const std::string& root) {
  Deep out;
  int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  std::string path = root;
  const auto add = [&](const std::string& name, bool dir) {
    EXPECT_EQ(dir ? mkdirat(fd, name.c_str(), 0755)
                  : close(openat(fd, name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)),
              0)
        << name << ": " << std::strerror(errno);
    out.paths.push_back(path + "/" + name);
  };
  const auto enter = [&](const std::string& name) {
    const int next = openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(next, 0) << std::strerror(errno);
    close(fd);
    fd = next;
    path += "/" + name;
  };
  add("deep", true);
  enter("deep");
  const std::string name(200, 'n');
  while (path.size() < PATH_MAX + 300) {
    add("f", false);
    if (out.fits.empty() && path.size() + 2 <= PATH_MAX - 1 && PATH_MAX - 1 - path.size() - 1 <= 254) {
      add(std::string(PATH_MAX - 1 - path.size() - 1, 'x'), false);
      out.fits = out.paths.back();
      add(std::string(PATH_MAX - path.size() - 1, 'y'), false);
      out.too_long = out.paths.back();
    }
    add(name, true);
    enter(name);
  }
  close(fd);
  EXPECT_EQ(out.fits.size(), PATH_MAX - 1u);
  EXPECT_EQ(out.too_long.size(), static_cast<size_t>(PATH_MAX));
  return out;
}

// Every path below `root` but those under root/deep (whose listing needs
// paths past PATH_MAX), root itself included.
std::vector<std::string> ListedBelow(const std::string& root) {
  std::vector<std::string> out{root};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    out.push_back(it->path().string());
    if (it->path() == root + "/deep") it.disable_recursion_pending();
  }
  EXPECT_FALSE(ec) << ec.message();
  return out;
}

// --verify asks the kernel read-only queries with relative paths too: its
// child stands where the asker stands (the working directory, inside the
// root), so a relative path resolves on the kernel as in the model.
TEST_F(ExplainTest, RelativePathsAreVerifiedWhereTheAskerStands) {
  const std::string root = scratch_->root();
  struct Where {
    std::string root, cwd;
  };
  const Where wheres[] = {{"/", root + "/home"}, {"/", root + "/links"}, {root, "/home"},
                          {root, "/links"}};
  const char* lines[] = {"stat alice",        "stat alice/secret", "access alice X_OK",
                         "open alice/secret", "stat ../private/file", "lstat rel",
                         "stat rel",          "stat rel_up",       "readlink abs",
                         "stat abs",          "chdir bob",         "stat .",
                         "exec_check target", "stat /home/alice",  "open dangling"};
  int compared = 0, refused = 0;
  for (const auto& [wname, who0] : Identities()) {
    for (const Where& w : wheres) {
      identity::Identity who = who0;
      who.root = w.root;
      who.cwd = w.cwd;
      auto session = Session::Open(who, {});
      ASSERT_TRUE(session) << session.error();
      for (const char* line : lines) {
        auto q = query::ParseQueryLine(line);
        ASSERT_TRUE(q) << line << ": " << q.error();
        const query::Answer a = (*session)->Ask(*q, true);
        ASSERT_TRUE(a.kernel_err) << wname << " in " << w.cwd << " under root " << w.root
                                  << ": " << line << ": unverified: " << a.unverified;
        ASSERT_FALSE(a.decision.unknown()) << line;
        EXPECT_EQ(a.decision.err(), *a.kernel_err)
            << wname << " in " << w.cwd << " under root " << w.root << ": " << line
            << "\n  explain: " << query::RenderText(**session, a, false);
        ++compared;
        refused += a.decision.err() != 0;
      }
    }
  }
  // Both answers are among them: allowed ones and refusals.
  EXPECT_GT(refused, 0);
  EXPECT_GT(compared - refused, 0);
}

// Every right map shows is what explain answers to its query (Right, in
// src/query/map.h): allowed, denied, or unknown; remove of a non-empty
// directory allowed exactly when rmdir is ENOTEMPTY (every permission
// check passed); a right whose query names a path of PATH_MAX bytes or
// more unknown, where explain answers ENAMETOOLONG. Every entry is
// listed, past PATH_MAX too, and an allowed right names the Landlock
// rules that granted it, with their policy file:line, as explain does.
TEST_F(ExplainTest, MapAgreesWithExplain) {
  const std::string root = scratch_->root();
  const Deep deep = MakeDeep(root);
  std::vector<std::string> all = ListedBelow(root);
  all.insert(all.end(), deep.paths.begin() + 1, deep.paths.end());
  std::sort(all.begin(), all.end());
  int checked = 0, once_empty = 0, unasked = 0, links = 0, rules_named = 0;
  for (const auto& [pname, layers] : Policies(root)) {
    for (const auto& [wname, who] : Identities()) {
      auto s = Session::Open(who, layers);
      ASSERT_TRUE(s) << s.error();
      auto e = Session::Open(who, layers);
      ASSERT_TRUE(e) << e.error();
      query::MapOptions o;
      o.dir = root;
      // (clang 14 cannot capture structured bindings.)
      const std::string& policy_name = pname;
      const std::string& who_name = wname;
      std::vector<std::string> emitted;
      auto r = query::MapTree(**s, o, [&](const query::PathRights& p) {
        emitted.push_back(p.path);
        EXPECT_EQ(p.note, "") << p.path;
        if (p.path.size() >= PATH_MAX) {
          EXPECT_EQ(p.unknown, p.applies) << p.path;
          EXPECT_NE(p.applies, 0u) << p.path;
        }
        for (int k = 0; k < query::kNumRights; ++k) {
          const uint32_t bit = 1u << k;
          if (!(p.applies & bit)) continue;
          const auto right = static_cast<query::Right>(k);
          auto q = query::QueryFor(right, p.path, p.mode);
          ASSERT_TRUE(q);
          const Decision d = (*e)->Ask(*q, false).decision;
          const std::string what = fmt::format("{} under {}: {} {}: explain says {} {}", who_name,
                                               policy_name, query::RightName(right), p.path,
                                               query::ResultName(d), d.ToText());
          ++checked;
          if (p.unasked & bit) {
            EXPECT_TRUE(p.unknown & bit) << what;
            EXPECT_EQ(d.err(), ENAMETOOLONG) << what;
            EXPECT_NE(query::Source(**s, p, right).find("PATH_MAX"), std::string::npos) << what;
            ++unasked;
            continue;
          }
          EXPECT_EQ((p.unknown & bit) != 0, d.unknown()) << what;
          const bool once = right == query::Right::kRemove && S_ISDIR(p.mode) &&
                            d.err() == ENOTEMPTY;
          EXPECT_EQ((p.allowed & bit) != 0, d.allowed() || once) << what;
          EXPECT_EQ((p.once_empty & bit) != 0, once) << what;
          if (right == query::Right::kLink) ++links;
          if (once) {
            // The source is the permission check that decided, on the
            // parent, and says what ENOTEMPTY means.
            const std::string src = query::Source(**s, p, right);
            EXPECT_NE(src.find("allowed once empty"), std::string::npos) << what << ": " << src;
            EXPECT_NE(src.find("on the parent"), std::string::npos) << what << ": " << src;
            ++once_empty;
          }
          if (!d.allowed()) continue;
          // The rules that granted it, named as explain names them.
          const query::LayerOrigins origins{(*e)->policies(), (*e)->layers()};
          std::string src;
          for (const LayerVerdict& v : d.reason().layers) {
            for (const RuleGrant& g : v.grants) {
              if (src.empty()) src = query::Source(**s, p, right);
              const std::string want =
                  fmt::format("Landlock layer {} ({}) rule {} ({})", g.layer,
                              query::LayerSource(origins, g.layer), g.path,
                              query::OriginOf(origins, g.layer, g.path));
              // One layer's rules are listed together: "rule A (..), rule B (..)".
              const std::string layer =
                  fmt::format("Landlock layer {} ({})", g.layer, query::LayerSource(origins, g.layer));
              const std::string rule =
                  fmt::format("rule {} ({})", g.path, query::OriginOf(origins, g.layer, g.path));
              EXPECT_NE(src.find(layer), std::string::npos) << what << ": " << src << "; " << want;
              EXPECT_NE(src.find(rule), std::string::npos) << what << ": " << src << "; " << want;
              EXPECT_NE(src.find("(test:1)"), std::string::npos) << what << ": " << src;
              ++rules_named;
            }
          }
        }
      });
      ASSERT_TRUE(r) << r.error();
      // Every entry, once, in the order of their paths' components.
      std::vector<std::string> sorted = emitted;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, all) << who_name << " under " << policy_name;
      EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(once_empty, 0);
  EXPECT_GT(unasked, 0);
  EXPECT_GT(links, 0);
  EXPECT_GT(rules_named, 0);
}

// What map's remove of a non-empty directory means, on the kernel: rmdir
// makes every permission check (Landlock's security_path_rmdir(), then
// may_delete(): write and search on the parent, the sticky bit) before
// the filesystem finds the directory not empty, so ENOTEMPTY is "allowed
// once empty" and anything else a refusal. rmdir of a non-empty directory
// changes nothing, so the kernel is asked for every one of them.
TEST_F(ExplainTest, RemoveOfANonEmptyDirectoryIsWhatTheKernelSays) {
  const std::string root = scratch_->root();
  MakeDeep(root);
  int compared = 0, allowed = 0, refused = 0;
  for (const auto& [pname, layers] : Policies(root)) {
    for (const auto& [wname, who] : Identities()) {
      auto s = Session::Open(who, layers);
      ASSERT_TRUE(s) << s.error();
      std::vector<query::PathRights> dirs;
      query::MapOptions o;
      o.dir = root;
      auto r = query::MapTree(**s, o, [&](const query::PathRights& p) {
        if (!S_ISDIR(p.mode) || p.path == root || p.path.size() >= PATH_MAX) return;
        std::error_code ec;
        if (!std::filesystem::is_empty(p.path, ec) && !ec) dirs.push_back(p);
      });
      ASSERT_TRUE(r) << r.error();
      ASSERT_FALSE(dirs.empty());
      ProbeIdentity id{who.cred, {}};
      for (const policy::HostLayer& l : (*s)->layers()) id.layers.push_back(l.ruleset);
      std::vector<Request> requests;
      for (const query::PathRights& p : dirs) requests.push_back(Rmdir{.path = p.path});
      auto kernel = kernel_internal::ProbeHostChanging(id, requests, true);
      ASSERT_TRUE(kernel) << kernel.error();
      const uint32_t remove = 1u << static_cast<int>(query::Right::kRemove);
      for (size_t k = 0; k < dirs.size(); ++k) {
        const query::PathRights& p = dirs[k];
        const int err = (*kernel)[k];
        ASSERT_NE(err, 0) << "rmdir of non-empty " << p.path << " succeeded";
        ASSERT_FALSE(p.unknown & remove) << p.path;
        EXPECT_EQ((p.allowed & remove) != 0, err == ENOTEMPTY)
            << wname << " under " << pname << ": rmdir " << p.path << ": the kernel says "
            << ErrnoName(err) << "; map's source: "
            << query::Source(**s, p, query::Right::kRemove);
        ++((p.allowed & remove) ? allowed : refused);
        ++compared;
      }
    }
  }
  RecordProperty("compared", compared);
  EXPECT_GT(allowed, 0);
  EXPECT_GT(refused, 0);
}

// PATH_MAX as the kernel counts it (the NUL included): a path of 4095
// bytes is looked up, one of 4096 is ENAMETOOLONG before anything else;
// explain says the same, and map asks the first and leaves the second
// unknown.
TEST_F(ExplainTest, PathMaxIsWhereTheKernelPutsIt) {
  const Deep deep = MakeDeep(scratch_->root());
  ProbeIdentity id{Cred::ForUser(0, 0), {}};
  id.cred.cap_effective = id.cred.cap_permitted = kernel_internal::AvailableCaps();
  const std::vector<Request> requests{Stat{.path = deep.fits}, Stat{.path = deep.too_long},
                                      Open{.path = deep.fits}, Open{.path = deep.too_long}};
  auto kernel = ProbeHost(id, requests);
  ASSERT_TRUE(kernel) << kernel.error();
  EXPECT_EQ(*kernel, (std::vector<int>{0, ENAMETOOLONG, 0, ENAMETOOLONG}));
  identity::Identity who;
  who.cred = id.cred;
  auto s = Session::Open(who, {});
  ASSERT_TRUE(s) << s.error();
  for (size_t k = 0; k < requests.size(); ++k)
    EXPECT_EQ((*s)->model().Evaluate((*s)->asker(), requests[k]).err(), (*kernel)[k]) << k;
  query::MapOptions o;
  o.dir = deep.fits.substr(0, deep.fits.rfind('/'));
  int seen = 0;
  auto r = query::MapTree(**s, o, [&](const query::PathRights& p) {
    if (p.path == deep.fits) {
      EXPECT_EQ(p.unasked & (1u << static_cast<int>(query::Right::kRead)), 0u);
      EXPECT_TRUE(p.allowed & (1u << static_cast<int>(query::Right::kRead)));
      ++seen;
    } else if (p.path == deep.too_long) {
      EXPECT_EQ(p.unknown, p.applies);
      EXPECT_EQ(p.unasked, p.applies);
      ++seen;
    }
  });
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace pathwarden
