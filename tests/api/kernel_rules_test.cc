// The rules where kernel builds differ (pathwarden/kernel_rules.h), as a
// user of the library meets them: the probe of the running kernel, a
// Model following it by default, and each value's road through the
// engine, whatever the machine's kernel is.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "pathwarden/decision.h"
#include "pathwarden/kernel_rules.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"

namespace pathwarden {
namespace {

TEST(KernelRules, TheProbeReadsTheKernelsAnswer) {
  EXPECT_EQ(EmptyFileCapsFromProbe(0), EmptyFileCaps::kStored);
  EXPECT_EQ(EmptyFileCapsFromProbe(EINVAL), EmptyFileCaps::kRefused);
  // A seccomp filter, a security module, no memfd: not known.
  for (int err : {EPERM, EACCES, ENOSYS, EOPNOTSUPP, ENOMEM})
    EXPECT_EQ(EmptyFileCapsFromProbe(err), EmptyFileCaps::kUnknown) << err;
}

TEST(KernelRules, TheProbeAgreesWithTheKernelAndChangesNothing) {
  std::array<KernelRuleProbe, std::size(kKernelRuleFields)> probes;
  const KernelRules k = ProbeKernelRules(&probes);
  EXPECT_EQ(probes[0].key, "empty_file_caps");
  EXPECT_EQ(probes[0].value, static_cast<uint8_t>(k.empty_file_caps));
  EXPECT_NE(probes[0].observed.find("security.capability"), std::string::npos)
      << probes[0].observed;
  // Asked again here the same way, the kernel answers what the probe read.
  const int fd = memfd_create("kernel-rules-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const int err = fsetxattr(fd, "security.capability", "", 0, 0) == 0 ? 0 : errno;
  close(fd);
  EXPECT_EQ(k.empty_file_caps, EmptyFileCapsFromProbe(err));
  EXPECT_EQ(RunningKernelRules(), k);
}

TEST(KernelRules, AModelFollowsTheRunningKernelUnlessTold) {
  EXPECT_EQ(Model().kernel_rules(), RunningKernelRules());
  for (EmptyFileCaps v : {EmptyFileCaps::kStored, EmptyFileCaps::kRefused}) {
    ScopedKernelRulesForTesting pretend({.empty_file_caps = v});
    EXPECT_EQ(RunningKernelRules().empty_file_caps, v);
    EXPECT_EQ(Model().kernel_rules().empty_file_caps, v);
  }
  Model m;
  m.SetKernelRules({.empty_file_caps = EmptyFileCaps::kUnknown});
  EXPECT_EQ(m.kernel_rules().empty_file_caps, EmptyFileCaps::kUnknown);
}

TEST(KernelRules, ScenarioRulesNameOnlyWhatTheyNamed) {
  ScenarioKernelRules none;
  EXPECT_TRUE(none.Empty());
  const KernelRules running{.empty_file_caps = EmptyFileCaps::kRefused};
  EXPECT_EQ(none.Over(running), running);
  ScenarioKernelRules stored;
  stored.rules.empty_file_caps = EmptyFileCaps::kStored;
  stored.named[0] = true;
  EXPECT_FALSE(stored.Empty());
  EXPECT_EQ(stored.Over(running).empty_file_caps, EmptyFileCaps::kStored);
  EXPECT_EQ(kKernelRuleFields[0].ValueName(running), "refused");
  EXPECT_EQ(kKernelRuleFields[0].ValueName({}), "stored");
}

// Each value of empty_file_caps through the engine: a file of uid 1000 in
// a world-writable directory, one immutable, and a caller without
// CAP_SETFCAP.
class EmptyFileCapsTest : public ::testing::TestWithParam<EmptyFileCaps> {
 protected:
  void SetUp() override {
    m.SetKernelRules({.empty_file_caps = GetParam()});
    Node w = *m.Mkdir(m.Root(), "w", {.mode = 0777});
    (void)*m.Create(w, "f", {}, {.mode = 0644, .uid = 1000, .gid = 1000});
    Node imm = *m.Create(w, "imm", {}, {.mode = 0666});
    ASSERT_TRUE(m.SetInodeFlags(imm, kAttrImmutable));
    carol = m.Spawn("carol", Cred::ForUser(3000, 3000));
  }
  Decision Set(std::string path, Process p) {
    return m.Evaluate(p, Setxattr{.path = std::move(path), .name = "security.capability"});
  }
  Model m;
  Process carol;
};

TEST_P(EmptyFileCapsTest, EachValueItsOwnAnswer) {
  const Decision d = Set("/w/f", carol);
  const Decision on_imm = Set("/w/imm", m.Init());
  const Decision missing = Set("/w/nope", carol);
  EXPECT_EQ(missing.err(), ENOENT) << missing.ToText();  // the walk first, always
  switch (GetParam()) {
    case EmptyFileCaps::kStored: {
      EXPECT_TRUE(d.allowed()) << d.ToText();
      EXPECT_EQ(on_imm.err(), EPERM) << on_imm.ToText();  // nothing converts it
      const Decision set = m.Apply(carol, Setxattr{.path = "/w/f", .name = "security.capability"});
      ASSERT_TRUE(set.allowed()) << set.ToText();
      const Decision get = m.Evaluate(carol, Getxattr{.path = "/w/f", .name = "security.capability"});
      EXPECT_EQ(get.err(), EINVAL) << get.ToText();
      break;
    }
    case EmptyFileCaps::kRefused:
      EXPECT_EQ(d.err(), EINVAL) << d.ToText();
      EXPECT_EQ(d.stage(), Stage::kCapability);
      EXPECT_NE(d.ToText().find("empty_file_caps = refused"), std::string::npos) << d.ToText();
      EXPECT_EQ(on_imm.err(), EINVAL) << on_imm.ToText();  // before immutability
      break;
    case EmptyFileCaps::kUnknown:
      EXPECT_EQ(d.verdict(), Verdict::kUnknown) << d.ToText();
      EXPECT_NE(d.ToText().find("could not be probed"), std::string::npos) << d.ToText();
      EXPECT_EQ(on_imm.verdict(), Verdict::kUnknown) << on_imm.ToText();
      break;
  }
  // A value of some size is checked alike by every build.
  const Decision junk = m.Evaluate(
      carol, Setxattr{.path = "/w/f", .name = "security.capability", .value = "junk"});
  EXPECT_EQ(junk.err(), EINVAL) << junk.ToText();
}

INSTANTIATE_TEST_SUITE_P(Values, EmptyFileCapsTest,
                         ::testing::Values(EmptyFileCaps::kStored, EmptyFileCaps::kRefused,
                                           EmptyFileCaps::kUnknown));

TEST(AclIds, TheBuilderRefusesTheIdThatIsNoId) {
  Model m;
  const std::vector<AclEntry> bad = {{AclTag::kUser, 4, kAclNoId}, {AclTag::kMask, 4, 0}};
  EXPECT_EQ(m.Mkdir(m.Root(), "d", {.acl = bad}).error(), EINVAL);
  EXPECT_EQ(m.Lookup("/d").error(), ENOENT);  // nothing half-made
  Node d = *m.Mkdir(m.Root(), "d");
  EXPECT_EQ(m.SetAttrs(d, {.default_acl = std::vector<AclEntry>{{AclTag::kGroup, 7, kAclNoId}}})
                .error(),
            EINVAL);
  EXPECT_EQ(m.MountTmpfs(d, {.acl = bad}).error(), EINVAL);
  EXPECT_TRUE(m.Mkdir(m.Root(), "e", {.acl = std::vector<AclEntry>{{AclTag::kUser, 4, kAclNoId - 1},
                                                                     {AclTag::kMask, 4, 0}}}));
}

}  // namespace
}  // namespace pathwarden
