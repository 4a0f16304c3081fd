// A host model under security modules it does not model: where one could
// refuse, an allowed answer is unknown and names it; a denial by Unix or
// Landlock stays a denial; Apply() still changes the model; a module that
// cannot refuse leaves ok as ok. The modules are read from a stand-in
// root (HostOptions::lsm.root) holding each state, the files under a
// scratch directory of this test's own.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/base/scratch_dir_test_util.h"
#include "src/identity/identity.h"
#include "src/query/explain.h"
#include "src/query/map.h"

namespace pathwarden {
namespace {

class SecurityModulesModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Searchable by all (mkdtemp() makes it 0700): bob's refusal below is
    // the file's.
    ASSERT_EQ(chmod(files_.path().c_str(), 0755), 0);
    ASSERT_EQ(mkdir((files_.path() + "/d").c_str(), 0755), 0);
    std::ofstream(files_.path() + "/d/secret") << "x";
    ASSERT_EQ(chmod((files_.path() + "/d/secret").c_str(), 0600), 0);
    std::ofstream(files_.path() + "/d/open") << "x";
    ASSERT_EQ(chmod((files_.path() + "/d/open").c_str(), 0644), 0);
  }

  // A stand-in root whose security modules are `lsm` (the securityfs
  // list) with SELinux's enforce `enforce`.
  std::string FakeRoot(const std::string& lsm, const std::string& enforce) {
    const std::string root = fake_.path() + "/" + std::to_string(++n_);
    std::filesystem::create_directories(root + "/sys/kernel/security");
    std::filesystem::create_directories(root + "/sys/fs/selinux");
    std::ofstream(root + "/sys/kernel/security/lsm") << lsm;
    std::ofstream(root + "/sys/fs/selinux/enforce") << enforce;
    return root;
  }

  // A host model read with the modules of FakeRoot().
  Model Host(const std::string& lsm, const std::string& enforce) {
    HostOptions o;
    o.lsm.root = FakeRoot(lsm, enforce);
    o.assume_unseen_run_nothing = true;
    auto m = Model::FromHost(o);
    if (!m) ADD_FAILURE() << m.error();
    return std::move(*m);
  }

  std::string F(const std::string& name) const { return files_.path() + "/d/" + name; }

  base_testing::ScratchDir files_{"pw-lsm-files"};
  base_testing::ScratchDir fake_{"pw-lsm-root"};
  int n_ = 0;
};

TEST_F(SecurityModulesModelTest, SelinuxEnforcingMakesAnAllowedAnswerUnknown) {
  Model m = Host("capability,selinux,landlock", "1");
  ASSERT_NE(m.security_modules(), nullptr);
  EXPECT_TRUE(m.security_modules()->MayRefuse());
  Process root = m.Spawn("root", Cred::ForUser(0, 0));
  for (Model::Detail detail : {Model::Detail::kVerdictOnly, Model::Detail::kReason}) {
    const Decision d = m.Evaluate(root, Open{.path = F("open")}, detail);
    EXPECT_TRUE(d.unknown());
    EXPECT_EQ(d.err(), -1);
    EXPECT_EQ(d.reason().unknown_why, "selinux (enforcing) also decides; not modelled");
  }
  // What Unix and Landlock said stays in the reason.
  const Decision d = m.Evaluate(root, Open{.path = F("open")}, Model::Detail::kReason);
  EXPECT_NE(d.ToText().find("Unix and Landlock allow it"), std::string::npos) << d.ToText();
}

TEST_F(SecurityModulesModelTest, ADenialStaysADenial) {
  Model m = Host("capability,selinux,landlock", "1");
  // DAC refuses before any module is asked.
  Process bob = m.Spawn("bob", Cred::ForUser(1001, 1001));
  const Decision dac = m.Evaluate(bob, Open{.path = F("secret")});
  EXPECT_TRUE(dac.denied());
  EXPECT_EQ(dac.err(), EACCES);
  // Landlock's refusal stands whatever the other modules say.
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile;
  Process confined = m.Spawn("confined", Cred::ForUser(0, 0));
  ASSERT_TRUE(m.Apply(confined, Restrict{rs}).allowed());
  const Decision ll = m.Evaluate(confined, Open{.path = F("open")}, Model::Detail::kReason);
  EXPECT_TRUE(ll.denied());
  EXPECT_EQ(ll.err(), EACCES);
  EXPECT_EQ(ll.stage(), Stage::kLandlock);
  // The walk's ENOENT stays a denial, but the module's search hook comes
  // before it (EACCES in its place): the reason says so. DAC's EACCES
  // is the same either way.
  const Decision missing = m.Evaluate(bob, Open{.path = F("nothing")}, Model::Detail::kReason);
  EXPECT_EQ(missing.err(), ENOENT);
  EXPECT_NE(missing.ToText().find("the errno may be a security module's that refused first: "
                                  "selinux (enforcing)"),
            std::string::npos)
      << missing.ToText();
  EXPECT_EQ(m.Evaluate(bob, Open{.path = F("secret")}, Model::Detail::kReason)
                .ToText()
                .find("security module"),
            std::string::npos);
}

TEST_F(SecurityModulesModelTest, ApplyChangesTheModelAsUnixAndLandlockAllow) {
  Model m = Host("capability,selinux,landlock", "1");
  Process root = m.Spawn("root", Cred::ForUser(0, 0));
  EXPECT_TRUE(m.Apply(root, Mkdir{.path = F("made"), .mode = 0755}).allowed());
  EXPECT_TRUE(m.Evaluate(root, Stat{.path = F("made")}).unknown());
  EXPECT_EQ(m.Evaluate(root, Stat{.path = F("never")}).err(), ENOENT);
}

TEST_F(SecurityModulesModelTest, ModulesThatCannotRefuseLeaveOkAsOk) {
  for (const auto& [lsm, enforce] :
       {std::pair<std::string, std::string>{"capability,selinux,landlock", "0"},
        {"lockdown,capability,yama,landlock", "1"},
        {"capability,landlock", "1"}}) {
    Model m = Host(lsm, enforce);
    ASSERT_NE(m.security_modules(), nullptr);
    EXPECT_FALSE(m.security_modules()->MayRefuse()) << lsm;
    Process root = m.Spawn("root", Cred::ForUser(0, 0));
    EXPECT_TRUE(m.Evaluate(root, Open{.path = F("open")}).allowed()) << lsm;
  }
}

TEST_F(SecurityModulesModelTest, IpeRefusesOnlyExecutions) {
  Model m = Host("capability,landlock,ipe", "1");
  Process root = m.Spawn("root", Cred::ForUser(0, 0));
  EXPECT_TRUE(m.Evaluate(root, Open{.path = F("open")}).allowed());
  ASSERT_EQ(chmod(F("open").c_str(), 0755), 0);
  Model m2 = Host("capability,landlock,ipe", "1");
  const Decision d = m2.Evaluate(m2.Spawn("root", Cred::ForUser(0, 0)), ExecCheck{.path = F("open")});
  EXPECT_TRUE(d.unknown());
  EXPECT_EQ(d.reason().unknown_why, "ipe (its policy is not modelled) also decides; not modelled");
}

TEST_F(SecurityModulesModelTest, NotReadingThemLeavesNone) {
  HostOptions o;
  o.lsm.read = false;
  o.assume_unseen_run_nothing = true;
  auto m = Model::FromHost(o);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->security_modules(), nullptr);
  EXPECT_TRUE(m->Evaluate(m->Spawn("root", Cred::ForUser(0, 0)), Open{.path = F("open")}).allowed());
}

// Another process's labels: its AppArmor profile, read for it and what
// it forks (the C API's pathwarden_process_from_pid()), not the reader's.
TEST_F(SecurityModulesModelTest, AnotherProcesssProfileDecidesForIt) {
  const std::string root = FakeRoot("capability,apparmor,landlock", "1");
  std::filesystem::create_directories(root + "/proc/self/attr/apparmor");
  std::filesystem::create_directories(root + "/proc/42/attr/apparmor");
  std::ofstream(root + "/proc/self/attr/apparmor/current") << "unconfined\n";
  std::filesystem::create_directories(root + "/sys/kernel/security/apparmor");
  std::ofstream(root + "/sys/kernel/security/apparmor/.ns_level") << "0\n";
  std::ofstream(root + "/proc/42/attr/apparmor/current") << "/usr/sbin/x (enforce)\n";
  HostOptions o;
  o.lsm.root = root;
  o.assume_unseen_run_nothing = true;
  auto m = Model::FromHost(o);
  ASSERT_TRUE(m) << m.error();
  const Process reader = m->Spawn("reader", Cred::ForUser(0, 0));
  const Process other = m->Spawn("pid 42", Cred::ForUser(0, 0));
  EXPECT_TRUE(m->Evaluate(other, Open{.path = F("open")}).allowed());
  ASSERT_TRUE(m->ReadSecurityModulesOf(other, 42));
  const Decision d = m->Evaluate(other, Open{.path = F("open")});
  EXPECT_TRUE(d.unknown());
  EXPECT_EQ(d.reason().unknown_why,
            "apparmor (profile /usr/sbin/x (enforce)) also decides; not modelled");
  EXPECT_TRUE(m->Evaluate(m->Fork(other, "child"), Open{.path = F("open")}).unknown());
  EXPECT_TRUE(m->Evaluate(reader, Open{.path = F("open")}).allowed());
  EXPECT_EQ(m->security_modules(other)->WhyUnknown(Op::kOpen), d.reason().unknown_why);
}

// map's "remove: allowed once empty" of a directory that is not empty
// (rmdir's ENOTEMPTY comes after every permission check) holds only where
// no module could refuse: their hooks come before the filesystem's
// answer too.
TEST_F(SecurityModulesModelTest, MapsRemovalOnceEmptyOnlyWhereNoModuleCouldRefuse) {
  ASSERT_EQ(mkdir(F("full").c_str(), 0755), 0);
  std::ofstream(F("full/x")) << "x";
  for (const char* enforce : {"0", "1"}) {
    identity::Identity who;
    who.cred = Cred::ForUser(0, 0);
    who.assume_unseen_run_nothing = true;
    who.lsm_root = FakeRoot("capability,selinux,landlock", enforce);
    auto s = query::Session::Open(who, {});
    ASSERT_TRUE(s) << s.error();
    std::optional<query::PathRights> full;
    query::MapOptions o;
    o.dir = F("full");  // emitted first (under an enforcing module nothing below it is)
    auto r = query::MapTree(**s, o, [&](const query::PathRights& p) {
      if (p.path == F("full")) full = p;
    });
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(full.has_value()) << enforce;
    const uint32_t remove = 1u << static_cast<int>(query::Right::kRemove);
    ASSERT_TRUE(full->applies & remove);
    const std::string why = query::Source(**s, *full, query::Right::kRemove);
    if (enforce[0] == '0') {
      EXPECT_TRUE((full->allowed & remove) && (full->once_empty & remove)) << why;
      EXPECT_NE(why.find("allowed once empty"), std::string::npos) << why;
    } else {
      EXPECT_FALSE(full->allowed & remove) << why;
      EXPECT_TRUE(full->unknown & remove) << why;
      EXPECT_EQ(why, "unknown: selinux (enforcing) also decides; not modelled");
    }
  }
}

}  // namespace
}  // namespace pathwarden
