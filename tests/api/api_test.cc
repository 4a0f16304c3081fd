// The public C++ API as a user of the library sees it: compiled with only
// `-I include` (no src/), C++20. One tree, processes with and without a
// Landlock domain, and questions whose verdicts, errnos and structured
// reasons are checked field by field. Every expectation is what Linux 6.18
// answers (the same cases run on the kernel in tests/scenarios/).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "pathwarden/decision.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "pathwarden/ruleset.h"

namespace pathwarden {
namespace {

namespace ll = landlock;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Node root = m.Root();
    home = *m.Mkdir(root, "home");
    alice_home = *m.Mkdir(home, "alice", {.mode = 0700, .uid = 1000, .gid = 1000});
    key = *m.Create(alice_home, "id_ed25519", {}, {.mode = 0600, .uid = 1000, .gid = 1000});
    srv = *m.Mkdir(root, "srv");
    www = *m.Mkdir(srv, "www", {.mode = 0755, .uid = 33, .gid = 33});
    index = *m.Create(www, "index.html", {.content = "<h1>hi</h1>"},
                      {.mode = 0644, .uid = 33, .gid = 33});
    // A file whose ACL grants uid 34 read, through the mask.
    shared =
        *m.Create(srv, "shared.txt", {},
                  {.mode = 0640,
                   .acl = std::vector<AclEntry>{{AclTag::kUser, 4, 34}, {AclTag::kMask, 4, 0}}});
    tmp = *m.Mkdir(root, "tmp", {.mode = 01777});
    (void)*m.Create(tmp, "alices", {}, {.mode = 0644, .uid = 1000, .gid = 1000});
    link = *m.Create(srv, "to-www", {.type = FileType::kSymlink, .target = "www"});
    alice = m.Spawn("alice", Cred::ForUser(1000, 1000));
    backup = m.Spawn("backup", Cred::ForUser(34, 34));
    www_data = m.Spawn("web", Cred::ForUser(33, 33));
    LandlockRuleset rs{
        .handled_access_fs = ll::kFsReadFile | ll::kFsWriteFile | ll::kFsMakeReg | ll::kFsRefer,
        .handled_access_net = ll::kNetBindTcp,
        .scoped = ll::kScopeSignal};
    rs.AllowPath(www, ll::kFsReadFile);
    rs.AllowPath("/tmp", ll::kFsWriteFile | ll::kFsMakeReg);
    rs.AllowPort(8080, ll::kNetBindTcp);
    const Decision d = m.Apply(www_data, Restrict{.ruleset = rs});
    ASSERT_TRUE(d.allowed()) << d.ToText();
  }

  Model m;
  Node home, alice_home, key, srv, www, index, shared, tmp, link;
  Process alice, backup, www_data;
};

TEST_F(ApiTest, TheBuilderMadeWhatItWasAsked) {
  EXPECT_EQ(m.PathOf(key), "/home/alice/id_ed25519");
  auto found = m.Lookup("/srv/to-www/index.html");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, index);
  auto nofollow = m.Lookup("/srv/to-www", false);
  ASSERT_TRUE(nofollow.has_value());
  EXPECT_EQ(*nofollow, link);
  EXPECT_EQ(m.Mkdir(srv, "www").error(), EEXIST);
  EXPECT_EQ(m.Mkdir(index, "x").error(), ENOTDIR);
  EXPECT_EQ(m.Mkdir(srv, "a/b").error(), EINVAL);
  EXPECT_EQ(m.Mkdir(srv, std::string(256, 'n')).error(), ENAMETOOLONG);
  EXPECT_EQ(m.TypeOf(link).value_or(FileType::kRegular), FileType::kSymlink);
  EXPECT_EQ(m.TypeOf(www).value_or(FileType::kRegular), FileType::kDirectory);
  EXPECT_EQ(m.name(alice), "alice");
  EXPECT_EQ(m.layers(www_data), 1);
  EXPECT_EQ(m.layers(alice), 0);
}

TEST_F(ApiTest, SearchIsRefusedOnTheWayWithTheComponentThatRefusedIt) {
  // 1. backup (uid 34) cannot search /home/alice (0700).
  const Decision d = m.Evaluate(backup, Access{.path = "/home/alice/id_ed25519", .mode = R_OK});
  EXPECT_TRUE(d.denied());
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kWalk);
  EXPECT_EQ(d.ToText(),
            "walk: no search permission on /home/alice (drwx------ 1000:1000; uid 34 falls in "
            "\"other\": --- lacks x)");
  ASSERT_EQ(d.reason().components.size(), 1u);
  const ComponentVerdict& c = d.reason().components[0];
  EXPECT_EQ(c.check.path, "/home/alice");
  EXPECT_EQ(c.check.want, 1u);  // MAY_EXEC
  EXPECT_FALSE(c.check.granted);
  EXPECT_EQ(c.check.decided_by, PermClass::kOther);
  EXPECT_EQ(c.check.mode, S_IFDIR | 0700u);
  EXPECT_EQ(c.check.uid, 1000u);
  EXPECT_FALSE(c.fast);
}

TEST_F(ApiTest, TheOwnerReadsHerKeyAndTheDacVerdictSaysWhy) {
  // 2. alice owns it: rw- has r.
  const Decision d = m.Evaluate(alice, Open{.path = "/home/alice/id_ed25519"});
  EXPECT_TRUE(d.allowed()) << d.ToText();
  EXPECT_EQ(d.err(), 0);
  EXPECT_EQ(d.stage(), Stage::kDac);
  ASSERT_TRUE(d.reason().dac.has_value());
  EXPECT_EQ(d.reason().dac->path, "/home/alice/id_ed25519");
  EXPECT_TRUE(d.reason().dac->granted);
  EXPECT_EQ(d.reason().dac->decided_by, PermClass::kOwner);
  EXPECT_EQ(d.reason().dac->want, 4u);
  // 3. Writing it as backup is refused at the walk, not at DAC.
  EXPECT_EQ(m.Evaluate(backup, Open{.path = "/home/alice/id_ed25519", .flags = O_WRONLY}).stage(),
            Stage::kWalk);
}

TEST_F(ApiTest, AnAclEntryGrantsThroughTheMask) {
  // 4. uid 34 has r through its ACL_USER entry.
  const Decision d = m.Evaluate(backup, Open{.path = "/srv/shared.txt"});
  EXPECT_TRUE(d.allowed()) << d.ToText();
  ASSERT_TRUE(d.reason().dac.has_value());
  EXPECT_EQ(d.reason().dac->decided_by, PermClass::kAclUser);
  EXPECT_EQ(d.reason().dac->acl_id, 34u);
  EXPECT_TRUE(d.reason().dac->has_acl);
  // 5. ... but not w: the entry and the mask give r only.
  const Decision w = m.Evaluate(backup, Open{.path = "/srv/shared.txt", .flags = O_WRONLY});
  EXPECT_EQ(w.err(), EACCES);
  EXPECT_EQ(w.stage(), Stage::kDac);
  EXPECT_FALSE(w.reason().dac->granted);
  EXPECT_EQ(w.reason().dac->decided_by, PermClass::kAclUser);
  // 6. alice (other: ---) may not read it at all.
  EXPECT_EQ(m.Evaluate(alice, Open{.path = "/srv/shared.txt"}).err(), EACCES);
}

TEST_F(ApiTest, RootPassesOnCapabilities) {
  // 7. root reads alice's key by CAP_DAC_OVERRIDE.
  const Decision d = m.Evaluate(m.Init(), Open{.path = "/home/alice/id_ed25519", .flags = O_RDWR});
  EXPECT_TRUE(d.allowed());
  ASSERT_TRUE(d.reason().dac.has_value());
  EXPECT_EQ(d.reason().dac->decided_by, PermClass::kCapability);
  EXPECT_EQ(d.reason().dac->capability, kCapDacOverride);
  // 8. A root without capabilities is "other".
  Cred powerless = Cred::ForUser(0, 0);
  powerless.cap_effective = 0;
  const Process weak = m.Spawn("weak", powerless);
  EXPECT_EQ(m.Evaluate(weak, Stat{.path = "/home/alice/id_ed25519"}).err(), EACCES);
}

TEST_F(ApiTest, TheStickyRuleKeepsOthersFromRemoving) {
  // 9. backup may write /tmp (1777) but not remove alice's file.
  const Decision d = m.Evaluate(backup, Unlink{.path = "/tmp/alices"});
  EXPECT_EQ(d.err(), EPERM);
  EXPECT_EQ(d.stage(), Stage::kSticky);
  // 10. alice may.
  EXPECT_TRUE(m.Evaluate(alice, Unlink{.path = "/tmp/alices"}).allowed());
}

TEST_F(ApiTest, EvaluateChangesNothingAndApplyDoes) {
  // 11. A dry mkdir is allowed and leaves no directory.
  EXPECT_TRUE(m.Evaluate(alice, Mkdir{.path = "/tmp/a"}).allowed());
  EXPECT_EQ(m.Lookup("/tmp/a").error(), ENOENT);
  // 12. Applied, it exists, owned by alice, 0755 & ~022.
  EXPECT_TRUE(m.Apply(alice, Mkdir{.path = "/tmp/a", .mode = 0777}).allowed());
  const auto made = m.Lookup("/tmp/a");
  ASSERT_TRUE(made.has_value());
  // 13. A second one is EEXIST, from the VFS.
  const Decision again = m.Apply(alice, Mkdir{.path = "/tmp/a"});
  EXPECT_EQ(again.err(), EEXIST);
  // 14. The node handle of a removed directory is stale.
  EXPECT_TRUE(m.Apply(alice, Rmdir{.path = "/tmp/a"}).allowed());
  EXPECT_EQ(m.Mkdir(*made, "x").error(), ESTALE);
  EXPECT_EQ(m.TypeOf(*made).error(), ESTALE);
}

TEST_F(ApiTest, FdsAreHandlesAndDirfdsResolveRelativePaths) {
  // 15. Open a directory O_PATH, then stat relative to it.
  const Decision dir = m.Apply(alice, Open{.path = "/srv", .flags = O_PATH | O_DIRECTORY});
  ASSERT_TRUE(dir.allowed()) << dir.ToText();
  ASSERT_GE(dir.fd().num, 3);
  EXPECT_TRUE(m.Evaluate(alice, Stat{.dirfd = dir.fd(), .path = "www/index.html"}).allowed());
  // 16. ftruncate through an O_PATH fd is EBADF, named "fd N" in reasons.
  const Decision t = m.Evaluate(alice, Ftruncate{.fd = dir.fd()});
  EXPECT_EQ(t.err(), EBADF);
  EXPECT_EQ(t.stage(), Stage::kFd);
  EXPECT_EQ(t.ToText(), "fd: fd " + std::to_string(dir.fd().num) + " is an O_PATH file");
  // ... and by the name given to it.
  ASSERT_TRUE(m.NameFd(alice, dir.fd(), "srv").has_value());
  EXPECT_EQ(m.Evaluate(alice, Ftruncate{.fd = dir.fd()}).ToText(), "fd: \"srv\" is an O_PATH file");
  // 17. Closed, the fd is gone.
  EXPECT_TRUE(m.Apply(alice, Close{.fd = dir.fd()}).allowed());
  EXPECT_EQ(m.Evaluate(alice, Stat{.dirfd = dir.fd(), .path = "www"}).err(), EBADF);
}

TEST_F(ApiTest, LandlockDeniesWithTheLayerAndTheMissingRight) {
  // 18. The web server may read under /srv/www...
  const Decision ok = m.Evaluate(www_data, Open{.path = "/srv/www/index.html"});
  EXPECT_TRUE(ok.allowed()) << ok.ToText();
  ASSERT_EQ(ok.reason().layers.size(), 1u);
  EXPECT_EQ(ok.reason().layers[0].missing, 0u);
  ASSERT_EQ(ok.reason().layers[0].grants.size(), 1u);
  EXPECT_EQ(ok.reason().layers[0].grants[0].path, "/srv/www");
  EXPECT_EQ(ok.reason().layers[0].grants[0].granted, ll::kFsReadFile);
  // 19. ...but not write there: layer 1 denies fs.write_file.
  const Decision d = m.Evaluate(www_data, Open{.path = "/srv/www/index.html", .flags = O_WRONLY});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kLandlock);
  EXPECT_EQ(d.ToText(),
            "landlock: layer 1 of 1 denies fs.write_file for opening /srv/www/index.html: no rule "
            "of layer 1 on the walk from /srv/www/index.html to / grants it");
  ASSERT_EQ(d.reason().layers.size(), 1u);
  const LayerVerdict& l = d.reason().layers[0];
  EXPECT_EQ(l.kind, LayerVerdict::Kind::kFs);
  EXPECT_EQ(l.layer, 1);
  EXPECT_EQ(l.missing, ll::kFsWriteFile);
  EXPECT_EQ(l.requested & ll::kFsWriteFile, ll::kFsWriteFile);
  // 20. Creating in /tmp is granted by the rule on /tmp.
  EXPECT_TRUE(
      m.Evaluate(www_data, Open{.path = "/tmp/new", .flags = O_CREAT | O_WRONLY}).allowed());
  // 21. Moving a file from /tmp to /srv/www is a reparenting Landlock refuses.
  EXPECT_TRUE(
      m.Apply(www_data, Open{.path = "/tmp/upload", .flags = O_CREAT | O_WRONLY}).allowed());
  const Decision mv =
      m.Evaluate(www_data, Rename{.oldpath = "/tmp/upload", .newpath = "/srv/www/up"});
  EXPECT_TRUE(mv.denied());
  EXPECT_EQ(mv.stage(), Stage::kLandlock);
  ASSERT_EQ(mv.reason().refer.size(), 2u);
  EXPECT_EQ(mv.reason().refer[0].path, "/tmp");
  EXPECT_TRUE(mv.reason().refer[0].source);
  EXPECT_EQ(mv.reason().refer[1].path, "/srv/www");
  EXPECT_FALSE(mv.reason().refer[1].source);
}

TEST_F(ApiTest, LandlockNetAndScopes) {
  // 22. Port 8080 is granted, by layer 1's rule on the port (as a
  // filesystem grant names its rule); 9090 is not.
  const Decision ok = m.Evaluate(www_data, BindTcp{.port = 8080});
  EXPECT_TRUE(ok.allowed()) << ok.ToText();
  ASSERT_EQ(ok.reason().layers.size(), 1u);
  const LayerVerdict& granted = ok.reason().layers[0];
  EXPECT_EQ(granted.kind, LayerVerdict::Kind::kNet);
  EXPECT_EQ(granted.layer, 1);
  EXPECT_EQ(granted.requested, ll::kNetBindTcp);
  EXPECT_EQ(granted.missing, 0u);
  ASSERT_EQ(granted.grants.size(), 1u);
  EXPECT_EQ(granted.grants[0].port, 8080);
  EXPECT_EQ(granted.grants[0].path, "");
  EXPECT_EQ(granted.grants[0].layer, 1);
  EXPECT_EQ(granted.grants[0].granted, ll::kNetBindTcp);
  const Decision d = m.Evaluate(www_data, BindTcp{.port = 9090});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.stage(), Stage::kLandlock);
  // 23. Connecting is not handled: allowed.
  EXPECT_TRUE(m.Evaluate(www_data, ConnectTcp{.port = 9090}).allowed());
  // 24. The scoped sandbox may not signal alice, outside its domain.
  EXPECT_EQ(m.Evaluate(www_data, Signal{.target = alice}).err(), EPERM);
  // 25. alice may not signal the web server (another uid, no CAP_KILL).
  const Decision k = m.Evaluate(alice, Signal{.target = www_data});
  EXPECT_EQ(k.err(), EPERM);
  EXPECT_EQ(k.stage(), Stage::kUnix);
}

TEST_F(ApiTest, RestrictAnswersWithTheKernelsErrors) {
  // 26. A ruleset that handles nothing: ENOMSG from landlock_create_ruleset.
  const Decision empty = m.Evaluate(alice, Restrict{});
  EXPECT_EQ(empty.err(), ENOMSG);
  ASSERT_TRUE(empty.reason().restrict_failure.has_value());
  EXPECT_EQ(empty.reason().restrict_failure->call, RestrictFailure::Call::kCreateRuleset);
  // 27. A rule with a right the ruleset does not handle: EINVAL for rule 1.
  LandlockRuleset rs{.handled_access_fs = ll::kFsReadFile};
  rs.AllowPath("/srv", ll::kFsReadFile);
  rs.AllowPath("/tmp", ll::kFsWriteFile);
  const Decision bad = m.Evaluate(alice, Restrict{.ruleset = rs});
  EXPECT_EQ(bad.err(), EINVAL);
  ASSERT_TRUE(bad.reason().restrict_failure.has_value());
  EXPECT_EQ(bad.reason().restrict_failure->call, RestrictFailure::Call::kAddRule);
  EXPECT_EQ(bad.reason().restrict_failure->rule, 1);
  // 28. Directory rights on a file: EINVAL.
  LandlockRuleset on_file{.handled_access_fs = ll::kFsReadDir};
  on_file.AllowPath(index, ll::kFsReadDir);
  EXPECT_EQ(m.Evaluate(alice, Restrict{.ruleset = on_file}).err(), EINVAL);
  // 29. A 17th layer: E2BIG.
  LandlockRuleset one{.handled_access_fs = ll::kFsExecute};
  const Process stacked = m.Fork(alice, "stacked");
  for (int i = 0; i < ll::kMaxLayers; ++i)
    ASSERT_TRUE(m.Apply(stacked, Restrict{.ruleset = one}).allowed());
  const Decision big = m.Evaluate(stacked, Restrict{.ruleset = one});
  EXPECT_EQ(big.err(), E2BIG);
  EXPECT_EQ(big.reason().restrict_failure->call, RestrictFailure::Call::kRestrictSelf);
  EXPECT_EQ(m.layers(stacked), ll::kMaxLayers);
}

TEST_F(ApiTest, AForkInheritsTheDomainAndTheFds) {
  const Decision f = m.Apply(www_data, Open{.path = "/srv/www/index.html"});
  ASSERT_TRUE(f.allowed());
  const Process child = m.Fork(www_data, "child");
  // 30. The child holds the same fd, and the same layer.
  EXPECT_EQ(m.layers(child), 1);
  EXPECT_EQ(m.Evaluate(child, Ftruncate{.fd = f.fd()}).err(), EINVAL);  // opened O_RDONLY
  EXPECT_EQ(m.Evaluate(child, Open{.path = "/srv/www/index.html", .flags = O_WRONLY}).err(),
            EACCES);
}

TEST_F(ApiTest, ATraceListsEveryDirectoryTheWalkSearched) {
  // 31. alice opens her key: / and /home let anyone search (the fast
  // search check takes them), /home/alice (0700) is hers: the owner class.
  const Decision d =
      m.Evaluate(alice, Open{.path = "/home/alice/id_ed25519"}, Model::Detail::kTrace);
  EXPECT_TRUE(d.allowed()) << d.ToText();
  const auto& c = d.reason().components;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].check.path, "/");
  EXPECT_TRUE(c[0].fast);
  EXPECT_EQ(c[0].check.decided_by, PermClass::kFastSearch);
  EXPECT_EQ(c[1].check.path, "/home");
  EXPECT_TRUE(c[1].fast);
  EXPECT_EQ(c[2].check.path, "/home/alice");
  EXPECT_FALSE(c[2].fast);
  EXPECT_TRUE(c[2].check.granted);
  EXPECT_EQ(c[2].check.decided_by, PermClass::kOwner);
  for (const ComponentVerdict& v : c) EXPECT_EQ(v.check.want, 1u) << v.check.path;
  // The same question without a trace gives the same answer and sentence.
  const Decision plain = m.Evaluate(alice, Open{.path = "/home/alice/id_ed25519"});
  EXPECT_EQ(plain.err(), d.err());
  EXPECT_EQ(plain.ToText(), d.ToText());
  EXPECT_TRUE(plain.reason().components.empty());
  // 32. backup's refused walk: /, /home, then the refusal, in order.
  const Decision refused =
      m.Evaluate(backup, Stat{.path = "/home/alice/id_ed25519"}, Model::Detail::kTrace);
  EXPECT_EQ(refused.err(), EACCES);
  ASSERT_EQ(refused.reason().components.size(), 3u);
  EXPECT_FALSE(refused.reason().components[2].check.granted);
  EXPECT_EQ(refused.reason().components[2].check.decided_by, PermClass::kOther);
}

TEST_F(ApiTest, VerdictOnlyDecisionsCarryNoReason) {
  const Decision d =
      m.Evaluate(backup, Stat{.path = "/home/alice/id_ed25519"}, Model::Detail::kVerdictOnly);
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_TRUE(d.denied());
  EXPECT_EQ(d.stage(), Stage::kNone);
  EXPECT_EQ(d.ToText(), "");
  EXPECT_TRUE(d.reason().components.empty());
}

TEST_F(ApiTest, AnUnknownProcessOrRequestFailsClosed) {
  // A default Decision denies.
  const Decision none;
  EXPECT_TRUE(none.denied());
  EXPECT_EQ(none.err(), EACCES);
  // A process handle the model never made.
  EXPECT_FALSE(m.Has(Process{99}));
  EXPECT_EQ(m.Evaluate(Process{99}, Stat{.path = "/"}).err(), ESRCH);
  EXPECT_EQ(m.Apply(Process{-1}, Mkdir{.path = "/x"}).err(), ESRCH);
  EXPECT_EQ(m.SetCred(Process{99}, Cred::ForUser(0, 0)).error(), ESRCH);
  EXPECT_EQ(m.Resolve(Process{99}, "/").error().err(), ESRCH);
  EXPECT_EQ(m.Lookup("/x").error(), ENOENT);
}

}  // namespace
}  // namespace pathwarden
