// The examples of the public headers' comments, compiled and run as
// written there (with only `-I include`), so that they cannot rot.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "pathwarden/decision.h"
#include "pathwarden/handles.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "pathwarden/result.h"
#include "pathwarden/ruleset.h"

namespace pathwarden {
namespace {

// pathwarden/result.h
Result<int> ParsePort(std::string_view s) {
  if (s.empty()) return Unexpected(std::string("empty port"));
  return 80;
}

TEST(Examples, Result) {
  auto port = ParsePort("");
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error(), "empty port");
  EXPECT_EQ(*ParsePort("http"), 80);
}

// pathwarden/model.h
TEST(Examples, Model) {
  Model m;
  Node home = *m.Mkdir(m.Root(), "home");
  Node alice_home = *m.Mkdir(home, "alice", {.mode = 0700, .uid = 1000, .gid = 1000});
  Node key = *m.Create(alice_home, "id_ed25519", {.type = FileType::kRegular},
                       {.mode = 0600, .uid = 1000, .gid = 1000});
  Process backup = m.Spawn("backup", Cred::ForUser(34, 34));
  Decision d = m.Evaluate(backup, Access{.path = "/home/alice/id_ed25519", .mode = R_OK});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kWalk);
  EXPECT_EQ(d.ToText(),
            "walk: no search permission on /home/alice (drwx------ "
            "1000:1000; uid 34 falls in \"other\": --- lacks x)");
  EXPECT_EQ(m.PathOf(key), "/home/alice/id_ed25519");
}

// pathwarden/handles.h, pathwarden/request.h
TEST(Examples, HandlesAndRequests) {
  Model model;
  Node etc = *model.Mkdir(model.Root(), "etc", {.mode = 0755});
  Process alice = model.Spawn("alice", Cred::ForUser(1000, 1000));
  Process root = model.Init();
  Decision d = model.Evaluate(alice, Stat{.path = "/etc"});
  EXPECT_TRUE(d.allowed());
  (void)*model.Mkdir(model.Root(), "srv");
  (void)*model.Mkdir(*model.Lookup("/srv"), "www");
  (void)*model.Create(*model.Lookup("/srv/www"), "index.html", {});
  Decision o = model.Evaluate(alice, Open{.path = "/srv/www/index.html", .flags = O_WRONLY});
  EXPECT_EQ(o.err(), EACCES);
  (void)*model.Mkdir(model.Root(), "tmp", {.mode = 01777});
  Decision mk = model.Apply(root, Mkdir{.path = "/tmp/x", .mode = 0700});
  EXPECT_TRUE(mk.allowed());
  EXPECT_TRUE(etc.valid());
}

// pathwarden/ruleset.h, pathwarden/decision.h
TEST(Examples, RulesetAndDecision) {
  Model model;
  (void)*model.Mkdir(model.Root(), "srv");
  (void)*model.Create(*model.Lookup("/srv"), "a", {}, {.mode = 0666});
  LandlockRuleset rs{.handled_access_fs = landlock::kFsReadFile | landlock::kFsWriteFile,
                     .handled_access_net = landlock::kNetConnectTcp};
  rs.AllowPath("/srv", landlock::kFsReadFile);
  rs.AllowPort(443, landlock::kNetConnectTcp);
  Process alice = model.Spawn("alice", Cred::ForUser(1000, 1000));
  ASSERT_TRUE(model.Apply(alice, Restrict{.ruleset = rs}).allowed());

  Decision d = model.Evaluate(alice, Open{.path = "/srv/a", .flags = O_WRONLY});
  std::ostringstream out;
  if (d.denied() && d.stage() == Stage::kLandlock)
    for (const LayerVerdict& l : d.reason().layers)
      out << "layer " << l.layer << " misses " << landlock::FsAuditNames(l.missing) << "\n";
  EXPECT_EQ(out.str(), "layer 1 misses fs.write_file\n");
}

}  // namespace
}  // namespace pathwarden
