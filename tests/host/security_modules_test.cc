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
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/base/scratch_dir_test_util.h"

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

  // A host model whose security modules are `lsm` (the securityfs list)
  // with SELinux's enforce `enforce`.
  Model Host(const std::string& lsm, const std::string& enforce) {
    const std::string root = fake_.path() + "/" + std::to_string(++n_);
    std::filesystem::create_directories(root + "/sys/kernel/security");
    std::filesystem::create_directories(root + "/sys/fs/selinux");
    std::ofstream(root + "/sys/kernel/security/lsm") << lsm;
    std::ofstream(root + "/sys/fs/selinux/enforce") << enforce;
    HostOptions o;
    o.lsm.root = root;
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
  // The walk's ENOENT comes before any hook.
  EXPECT_EQ(m.Evaluate(bob, Open{.path = F("nothing")}).err(), ENOENT);
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

}  // namespace
}  // namespace pathwarden
