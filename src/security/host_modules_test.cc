// The host's security modules: what each state makes of an allowed
// answer (AssessModules(), SecurityModules::WhyUnknown()), their reading
// under a stand-in root, and this machine's list against securityfs's
// (mounted in a private mount namespace of a child: the host's mounts are
// not touched).

#include "src/security/host_modules.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"

namespace pathwarden::security {
namespace {

using Refuses = SecurityModule::Refuses;

ModuleFacts Facts(std::vector<std::string> names) {
  ModuleFacts f;
  f.names = std::move(names);
  f.bpf_lsm_programs = std::vector<std::string>{};
  return f;
}

TEST(SecurityModulesTest, ThisMachinesKindOfListRefusesNothing) {
  // lockdown,capability,landlock,bpf with no BPF LSM program attached.
  const SecurityModules s = AssessModules(Facts({"lockdown", "capability", "landlock", "bpf"}));
  EXPECT_FALSE(s.MayRefuse());
  EXPECT_EQ(s.WhyUnknown(Op::kOpen), "");
  ASSERT_EQ(s.Describe().size(), 4u);
  EXPECT_EQ(s.Describe()[3], "bpf: no LSM program attached: refuses nothing the model answers");
  EXPECT_EQ(s.Describe()[1], "capability: modelled: refuses nothing the model answers");
}

TEST(SecurityModulesTest, AnUnknownListMayRefuseEveryHookedCall) {
  ModuleFacts f;
  f.names_why = "securityfs is not mounted";
  const SecurityModules s = AssessModules(f);
  EXPECT_TRUE(s.MayRefuse());
  EXPECT_EQ(s.WhyUnknown(Op::kStat),
            "which security modules are active is not known (securityfs is not mounted): one "
            "may refuse");
  // close() asks no module; landlock_restrict_self() may (a capability).
  EXPECT_EQ(s.WhyUnknown(Op::kClose), "");
  EXPECT_NE(s.WhyUnknown(Op::kRestrict), "");
}

TEST(SecurityModulesTest, SelinuxEnforcingRefusesPermissiveDoesNot) {
  ModuleFacts f = Facts({"capability", "selinux"});
  f.selinux_enforce = "1";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kOpen), "selinux (enforcing) also decides; not modelled");
  f.selinux_enforce = "0";
  EXPECT_FALSE(AssessModules(f).MayRefuse());
  EXPECT_EQ(AssessModules(f).Describe()[1], "selinux: permissive: refuses nothing the model answers");
  f.selinux_enforce.reset();
  f.selinux_why = "/sys/fs/selinux/enforce: No such file or directory";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kSignal),
            "selinux (its mode is not known (/sys/fs/selinux/enforce: No such file or directory)) "
            "also decides; not modelled");
}

TEST(SecurityModulesTest, AppArmorRefusesOnlyForAConfinedProcess) {
  ModuleFacts f = Facts({"capability", "apparmor"});
  f.apparmor_label = "unconfined";
  f.apparmor_ns_level = "0";
  EXPECT_FALSE(AssessModules(f).MayRefuse());
  // Unconfined as a container's policy namespace shows it: an outer
  // profile may still confine it; and where the level is not known.
  f.apparmor_ns_level = "1";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kOpen),
            "apparmor (unconfined in a policy namespace at level 1, which an outer profile may "
            "confine) also decides; not modelled");
  f.apparmor_ns_level.reset();
  f.apparmor_ns_why = "no securityfs";
  EXPECT_TRUE(AssessModules(f).MayRefuse());
  f.apparmor_ns_level = "0";
  // A traced program may exec into a profile.
  f.labels_change = true;
  EXPECT_TRUE(AssessModules(f).MayRefuse());
  f.labels_change = false;
  f.apparmor_label = "/usr/sbin/cupsd (enforce)";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kMkdir),
            "apparmor (profile /usr/sbin/cupsd (enforce)) also decides; not modelled");
  f.apparmor_label.reset();
  f.apparmor_why = "/proc/self/attr/current: Invalid argument";
  EXPECT_TRUE(AssessModules(f).MayRefuse());
}

TEST(SecurityModulesTest, BpfRefusesWithAnAttachedProgramOrWhenNotReadable) {
  ModuleFacts f = Facts({"bpf"});
  f.bpf_lsm_programs = std::vector<std::string>{"restrict_filesy (program 7, link 3)"};
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kUnlink),
            "bpf (LSM programs attached: restrict_filesy (program 7, link 3)) also decides; not "
            "modelled");
  f.bpf_lsm_programs.reset();
  f.bpf_why = "reading which are attached takes CAP_SYS_ADMIN";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kOpen),
            "bpf (LSM programs not known: reading which are attached takes CAP_SYS_ADMIN) also "
            "decides; not modelled");
  // --trust-lsm bpf: the caller checked.
  f.trusted = {"bpf"};
  EXPECT_FALSE(AssessModules(f).MayRefuse());
  EXPECT_EQ(AssessModules(f).Describe()[0],
            "bpf: taken to refuse nothing (--trust-lsm): refuses nothing the model answers");
}

TEST(SecurityModulesTest, IpeRefusesExecutionsOnly) {
  const SecurityModules s = AssessModules(Facts({"capability", "ipe"}));
  EXPECT_EQ(s.WhyUnknown(Op::kOpen), "");
  EXPECT_EQ(s.WhyUnknown(Op::kExecCheck), "ipe (its policy is not modelled) also decides; not modelled");
}

TEST(SecurityModulesTest, ModulesWithUnmodelledPoliciesRefuseAndSeveralAreNamed) {
  for (const char* name : {"smack", "tomoyo", "ima", "evm", "lsm 120"}) {
    const SecurityModules s = AssessModules(Facts({"capability", name}));
    EXPECT_TRUE(s.MayRefuse()) << name;
  }
  for (const char* name : {"lockdown", "yama", "loadpin", "safesetid", "landlock"})
    EXPECT_FALSE(AssessModules(Facts({name})).MayRefuse()) << name;
  ModuleFacts f = Facts({"selinux", "smack"});
  f.selinux_enforce = "1";
  EXPECT_EQ(AssessModules(f).WhyUnknown(Op::kChmod),
            "selinux (enforcing) also decides; smack (its policy is not modelled) also decides; "
            "not modelled");
}

TEST(SecurityModulesTest, LsmIdsAreNamedAsTheKernelNamesThem) {
  EXPECT_EQ(LsmName(100), "capability");
  EXPECT_EQ(LsmName(104), "apparmor");
  EXPECT_EQ(LsmName(109), "bpf");
  EXPECT_EQ(LsmName(110), "landlock");
  EXPECT_EQ(LsmName(113), "ipe");
  EXPECT_EQ(LsmName(114), "lsm 114");
  EXPECT_EQ(LsmName(0), "lsm 0");
}

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(SecurityModulesTest, AStandInRootIsReadAsFiles) {
  base_testing::ScratchDir root("pw-lsm");
  SecurityModuleSources from;
  from.root = root.path();
  // No securityfs under it: not known, and said why.
  ModuleFacts none = ReadModuleFacts(from);
  EXPECT_FALSE(none.names.has_value());
  EXPECT_NE(none.names_why.find("securityfs"), std::string::npos) << none.names_why;

  Write(root.path() + "/sys/kernel/security/lsm", "capability,selinux,apparmor,bpf\n");
  Write(root.path() + "/sys/fs/selinux/enforce", "0");
  Write(root.path() + "/proc/42/attr/apparmor/current", "unconfined\n");
  Write(root.path() + "/sys/kernel/security/apparmor/.ns_level", "0\n");
  from.pid = 42;
  ModuleFacts f = ReadModuleFacts(from);
  ASSERT_TRUE(f.names.has_value());
  EXPECT_EQ(*f.names, (std::vector<std::string>{"capability", "selinux", "apparmor", "bpf"}));
  EXPECT_EQ(f.selinux_enforce, "0");
  EXPECT_EQ(f.apparmor_label, "unconfined");
  EXPECT_EQ(f.apparmor_ns_level, "0");
  // BPF programs cannot be stood in for: bpf alone may refuse.
  const SecurityModules s = AssessModules(f);
  EXPECT_EQ(s.WhyUnknown(Op::kOpen),
            "bpf (LSM programs not known: BPF programs are not read under a stand-in root) also "
            "decides; not modelled");
  // The shared attr file where the stacking-safe one is missing.
  std::filesystem::remove_all(root.path() + "/proc/42/attr/apparmor");
  Write(root.path() + "/proc/42/attr/current", "/usr/bin/evince (enforce)\n");
  EXPECT_EQ(ReadModuleFacts(from).apparmor_label, "/usr/bin/evince (enforce)");
  // Read off: nothing.
  from.read = false;
  EXPECT_TRUE(ReadSecurityModules(from).active.empty());
  EXPECT_FALSE(ReadSecurityModules(from).MayRefuse());
}

// securityfs's list, read by a child in a private mount namespace where it
// mounts securityfs on a directory of its own; "" when it cannot.
std::string SecurityfsList(const std::string& dir) {
  int p[2];
  if (pipe(p) != 0) return "";
  const pid_t child = fork();
  if (child == 0) {
    close(p[0]);
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("none", dir.c_str(), "securityfs", 0, nullptr) != 0)
      _exit(1);
    char buf[4096];
    const int fd = open((dir + "/lsm").c_str(), O_RDONLY);
    const ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (n <= 0 || write(p[1], buf, static_cast<size_t>(n)) != n) _exit(1);
    _exit(0);
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

TEST(SecurityModulesTest, TheSystemCallsListIsSecurityfss) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting securityfs in a private namespace needs root";
  base_testing::ScratchDir dir("pw-securityfs");
  std::string list = SecurityfsList(dir.path());
  while (!list.empty() && list.back() == '\n') list.pop_back();
  if (list.empty()) GTEST_SKIP() << "securityfs cannot be mounted here";
  ModuleFacts f = ReadModuleFacts(SecurityModuleSources{});
  ASSERT_TRUE(f.names.has_value()) << f.names_why;
  std::string joined;
  for (const std::string& n : *f.names) joined += (joined.empty() ? "" : ",") + n;
  EXPECT_EQ(joined, list);
  // As root the BPF links are read (none attached, or named).
  if (std::find(f.names->begin(), f.names->end(), "bpf") != f.names->end()) {
    EXPECT_TRUE(f.bpf_lsm_programs.has_value()) << f.bpf_why;
  }
}

}  // namespace
}  // namespace pathwarden::security
