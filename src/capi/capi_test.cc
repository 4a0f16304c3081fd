// The C API (include/pathwarden/pathwarden.h) through libpathwarden.so,
// as a C program links it: every function, its errors (flags != 0, NULL,
// a handle of another kind, indexes out of range) and denials whose
// reasons and layers are checked.

#include "pathwarden/pathwarden.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/request.h"  // the C enum checked against Op
#include "src/base/scratch_dir_test_util.h"
#include "src/capi/capi_test_util.h"

namespace {

using pathwarden::capi_testing::kFsExecute;
using pathwarden::capi_testing::kFsReadDir;
using pathwarden::capi_testing::kFsReadFile;
using pathwarden::capi_testing::LastError;

// A model: /home (0755), /home/alice (0700 1000:1000) with key (0600
// 1000:1000), /srv with a (0644), /etc/x (0644); a process "backup" as
// uid 34 and "alice" as 1000 (group 1000, supplementary 50).
class CapiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pathwarden_model_new(&m_, 0, 0), 0) << LastError();
    ASSERT_EQ(pathwarden_model_mkdir(m_, "/home", 0755, 0, 0, 0), 0) << LastError();
    ASSERT_EQ(pathwarden_model_mkdir(m_, "/home/alice", 0700, 1000, 1000, 0), 0);
    ASSERT_EQ(pathwarden_model_create(m_, "/home/alice/key", PATHWARDEN_FILE_REGULAR, nullptr,
                                      0600, 1000, 1000, 0),
              0);
    ASSERT_EQ(pathwarden_model_mkdir(m_, "/srv", 0755, 0, 0, 0), 0);
    ASSERT_EQ(pathwarden_model_create(m_, "/srv/a", PATHWARDEN_FILE_REGULAR, nullptr, 0644, 0, 0, 0),
              0);
    ASSERT_EQ(pathwarden_model_mkdir(m_, "/etc", 0755, 0, 0, 0), 0);
    ASSERT_EQ(pathwarden_model_create(m_, "/etc/x", PATHWARDEN_FILE_REGULAR, nullptr, 0644, 0, 0, 0),
              0);
    pathwarden_cred c{};
    c.uid = 34;
    c.gid = 34;
    c.umask = 022;
    ASSERT_EQ(pathwarden_process_new(m_, "backup", &c, &backup_, 0), 0) << LastError();
    const uint32_t groups[] = {50};
    pathwarden_cred a{1000, 1000, groups, 1, 0, 022};
    ASSERT_EQ(pathwarden_process_new(m_, "alice", &a, &alice_, 0), 0) << LastError();
  }
  void TearDown() override {
    pathwarden_process_free(alice_);
    pathwarden_process_free(backup_);
    pathwarden_model_free(m_);
  }

  // Asks `line` of `p`; the decision (freed by the test).
  pathwarden_decision* AskLine(const pathwarden_process* p, const char* line) {
    pathwarden_decision* d = nullptr;
    EXPECT_EQ(pathwarden_ask_line(p, line, &d, 0), 0) << LastError();
    return d;
  }
  int ErrOf(const pathwarden_process* p, const char* line) {
    pathwarden_decision* d = AskLine(p, line);
    const int e = pathwarden_decision_errno(d);
    pathwarden_decision_free(d);
    return e;
  }

  pathwarden_model* m_ = nullptr;
  pathwarden_process* backup_ = nullptr;
  pathwarden_process* alice_ = nullptr;
};

// A policy file in a temporary directory, removed after.
class TempPolicy {
 public:
  explicit TempPolicy(const std::string& text) {
    if (!dir_.Write("policy.toml", text)) std::abort();
  }
  std::string path() const { return dir_.Path("policy.toml"); }

 private:
  pathwarden::base_testing::ScratchDir dir_{"pathwarden-capi"};
};

constexpr const char kSrvPolicy[] = R"(
[[ruleset]]
handled_access_fs = ["read_file", "read_dir", "execute"]

[[path_beneath]]
allowed_access = ["read_file", "read_dir"]
parent = ["/srv"]
)";

TEST(Capi, VersionAndLastError) {
  EXPECT_STREQ(pathwarden_version(), "0.1.0");
  pathwarden_model* m = nullptr;
  EXPECT_EQ(pathwarden_model_new(&m, 0, 1), -EINVAL);
  EXPECT_NE(LastError().find("flags must be 0"), std::string::npos) << LastError();
  ASSERT_EQ(pathwarden_model_new(&m, 3, 0), 0);
  EXPECT_EQ(LastError(), "");
  pathwarden_model_free(m);
  EXPECT_EQ(pathwarden_model_new(&m, 8, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_new(nullptr, 0, 0), -EINVAL);
  pathwarden_model_free(nullptr);  // takes NULL
}

TEST(Capi, LastErrorIsPerThread) {
  pathwarden_model* m = nullptr;
  EXPECT_EQ(pathwarden_model_new(&m, 0, 1), -EINVAL);
  std::string other = "unset";
  std::thread t([&] { other = pathwarden_last_error(); });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_NE(LastError(), "");
}

TEST_F(CapiTest, WalkDenialWithItsReasonAndComponents) {
  pathwarden_request r;
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_ACCESS), 0);
  r.path = "/home/alice/key";
  r.mode = 4;  // R_OK
  pathwarden_decision* d = nullptr;
  ASSERT_EQ(pathwarden_ask(backup_, &r, PATHWARDEN_DETAIL_TRACE, &d, 0), 0) << LastError();
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_DENIED);
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_STREQ(pathwarden_decision_stage(d), "walk");
  EXPECT_STREQ(pathwarden_decision_result(d), "EACCES");
  EXPECT_STREQ(pathwarden_decision_reason(d),
               "walk: no search permission on /home/alice (drwx------ 1000:1000; uid 34 falls in "
               "\"other\": --- lacks x)");
  EXPECT_STREQ(pathwarden_decision_unknown_why(d), "");
  EXPECT_EQ(pathwarden_decision_fd(d), -1);
  // The walk: "/", "/home" (anyone may search), then /home/alice refused.
  const int n = pathwarden_decision_component_count(d);
  ASSERT_GE(n, 1);
  pathwarden_check last{};
  ASSERT_EQ(pathwarden_decision_component(d, static_cast<size_t>(n - 1), &last, 0), 0);
  EXPECT_STREQ(last.path, "/home/alice");
  EXPECT_EQ(last.want, 1u);
  EXPECT_EQ(last.granted, 0);
  EXPECT_EQ(last.uid, 1000u);
  EXPECT_EQ(last.mode & 07777, 0700u);
  EXPECT_EQ(last.mode & S_IFMT, static_cast<uint32_t>(S_IFDIR));
  EXPECT_EQ(last.capability, -1);
  EXPECT_STREQ(last.decided_by, "other");
  for (int i = 0; i + 1 < n; ++i) {
    pathwarden_check c{};
    ASSERT_EQ(pathwarden_decision_component(d, static_cast<size_t>(i), &c, 0), 0);
    EXPECT_EQ(c.granted, 1) << c.path;
  }
  pathwarden_check c{};
  EXPECT_EQ(pathwarden_decision_component(d, static_cast<size_t>(n), &c, 0), -ERANGE);
  EXPECT_EQ(pathwarden_decision_component(d, 0, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_decision_component(d, 0, &c, 2), -EINVAL);
  EXPECT_EQ(pathwarden_decision_dac(d, &c, 0), -ENOENT);  // the walk decided
  EXPECT_EQ(pathwarden_decision_layer_count(d), 0);
  pathwarden_layer l{};
  EXPECT_EQ(pathwarden_decision_layer(d, 0, &l, 0), -ERANGE);
  // The JSON explain --json prints.
  const std::string json = pathwarden_decision_json(d, 0);
  EXPECT_NE(json.find("\"result\":\"EACCES\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"op\":\"access\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"path\":\"/home/alice/key\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"stage\":\"walk\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"walk\":["), std::string::npos) << json;
  EXPECT_EQ(pathwarden_decision_json(d, 1), nullptr);
  pathwarden_decision_free(d);

  // Without detail: the verdict and errno only.
  ASSERT_EQ(pathwarden_ask(backup_, &r, PATHWARDEN_DETAIL_VERDICT_ONLY, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_STREQ(pathwarden_decision_reason(d), "");
  EXPECT_EQ(pathwarden_decision_component_count(d), 0);
  pathwarden_decision_free(d);
  EXPECT_EQ(pathwarden_ask(backup_, &r, 7, &d, 0), -EINVAL);
}

TEST_F(CapiTest, DacDenialAndAllowedOwner) {
  pathwarden_decision* d = AskLine(alice_, "open /home/alice/key O_RDWR");
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_ALLOWED);
  EXPECT_EQ(pathwarden_decision_errno(d), 0);
  pathwarden_check dac{};
  ASSERT_EQ(pathwarden_decision_dac(d, &dac, 0), 0);
  EXPECT_STREQ(dac.path, "/home/alice/key");
  EXPECT_EQ(dac.granted, 1);
  EXPECT_STREQ(dac.decided_by, "owner 1000");
  EXPECT_EQ(pathwarden_decision_dac(d, &dac, 1), -EINVAL);
  pathwarden_decision_free(d);
  d = AskLine(alice_, "open /etc/x O_WRONLY");
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_STREQ(pathwarden_decision_stage(d), "dac");
  ASSERT_EQ(pathwarden_decision_dac(d, &dac, 0), 0);
  EXPECT_EQ(dac.want, 2u);
  EXPECT_EQ(dac.granted, 0);
  pathwarden_decision_free(d);
}

TEST_F(CapiTest, PolicyFileLayerDenialWithItsLayer) {
  TempPolicy pol(kSrvPolicy);
  pathwarden_ruleset* rs = nullptr;
  ASSERT_EQ(pathwarden_ruleset_load(&rs, pol.path().c_str(), 0), 0) << LastError();
  EXPECT_EQ(pathwarden_process_layers(alice_, 0), 0);
  ASSERT_EQ(pathwarden_process_restrict(alice_, rs, 0), 0) << LastError();
  EXPECT_EQ(pathwarden_process_layers(alice_, 0), 1);
  EXPECT_EQ(pathwarden_process_layers(alice_, 1), -EINVAL);

  pathwarden_decision* d = AskLine(alice_, "open /etc/x");
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_DENIED);
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_STREQ(pathwarden_decision_stage(d), "landlock");
  EXPECT_NE(std::string(pathwarden_decision_reason(d)).find("landlock"), std::string::npos);
  ASSERT_EQ(pathwarden_decision_layer_count(d), 1);
  pathwarden_layer l{};
  ASSERT_EQ(pathwarden_decision_layer(d, 0, &l, 0), 0);
  EXPECT_EQ(l.layer, 1);
  EXPECT_EQ(l.kind, PATHWARDEN_LAYER_FS);
  EXPECT_EQ(l.requested, kFsReadFile);
  EXPECT_EQ(l.missing, kFsReadFile);
  EXPECT_STREQ(l.missing_names, "fs.read_file");
  EXPECT_EQ(l.policy, pol.path());
  EXPECT_EQ(l.grant_count, 0u);
  EXPECT_EQ(pathwarden_decision_layer(d, 0, &l, 4), -EINVAL);
  pathwarden_grant g{};
  EXPECT_EQ(pathwarden_decision_grant(d, 0, 0, &g, 0), -ERANGE);
  EXPECT_EQ(pathwarden_decision_grant(d, 1, 0, &g, 0), -ERANGE);
  const std::string json = pathwarden_decision_json(d, 0);
  EXPECT_NE(json.find("\"missing\":[\"fs.read_file\"]"), std::string::npos) << json;
  EXPECT_NE(json.find(pol.path()), std::string::npos) << json;
  pathwarden_decision_free(d);

  // Allowed beneath /srv: the rule that granted it, and where it is written.
  d = AskLine(alice_, "open /srv/a");
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_ALLOWED);
  ASSERT_EQ(pathwarden_decision_layer_count(d), 1);
  ASSERT_EQ(pathwarden_decision_layer(d, 0, &l, 0), 0);
  EXPECT_EQ(l.missing, 0u);
  ASSERT_EQ(l.grant_count, 1u);
  ASSERT_EQ(pathwarden_decision_grant(d, 0, 0, &g, 0), 0);
  EXPECT_STREQ(g.path, "/srv");
  EXPECT_EQ(g.granted, kFsReadFile);
  EXPECT_EQ(g.origin, pol.path() + ":7");
  EXPECT_EQ(pathwarden_decision_grant(d, 0, 0, &g, 1), -EINVAL);
  EXPECT_EQ(pathwarden_decision_grant(d, 0, 0, nullptr, 0), -EINVAL);
  pathwarden_decision_free(d);

  // A ruleset from a file takes no rules by hand.
  EXPECT_EQ(pathwarden_ruleset_allow_path(rs, "/etc", kFsReadFile, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_allow_port(rs, 80, 1, 0), -EINVAL);
  pathwarden_ruleset_free(rs);
}

TEST(Capi, BadPolicyFileSaysWhere) {
  TempPolicy pol("[[ruleset]]\nhandled_access_fs = [\"read_fil\"]\n");
  pathwarden_ruleset* rs = nullptr;
  EXPECT_EQ(pathwarden_ruleset_load(&rs, pol.path().c_str(), 0), -EINVAL);
  EXPECT_NE(LastError().find(pol.path() + ":2:"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_ruleset_load(&rs, "/nonexistent/policy.toml", 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_load(&rs, pol.path().c_str(), 1), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_load(nullptr, pol.path().c_str(), 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_load(&rs, nullptr, 0), -EINVAL);
}

TEST_F(CapiTest, RulesetByHandAndTheKernelsRefusals) {
  pathwarden_ruleset* rs = nullptr;
  ASSERT_EQ(pathwarden_ruleset_new(&rs, kFsReadFile | kFsReadDir | kFsExecute, 0, 0, 0), 0);
  ASSERT_EQ(pathwarden_ruleset_allow_path(rs, "/etc", kFsReadFile, 0), 0);
  EXPECT_EQ(pathwarden_ruleset_allow_path(rs, "/etc", kFsReadFile, 1), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_allow_path(rs, nullptr, kFsReadFile, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_allow_path(rs, "/etc", uint64_t{1} << 40, 0), -EINVAL);
  ASSERT_EQ(pathwarden_process_restrict(backup_, rs, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(backup_, "open /etc/x"), 0);
  EXPECT_EQ(ErrOf(backup_, "open /srv/a"), EACCES);
  pathwarden_decision* d = AskLine(backup_, "open /srv/a");
  pathwarden_layer l{};
  ASSERT_EQ(pathwarden_decision_layer(d, 0, &l, 0), 0);
  EXPECT_STREQ(l.policy, "");  // rules by hand: no file
  pathwarden_decision_free(d);
  // Up to 16 layers; the 17th is E2BIG.
  for (int i = 2; i <= 16; ++i) ASSERT_EQ(pathwarden_process_restrict(backup_, rs, 0), 0) << i;
  EXPECT_EQ(pathwarden_process_restrict(backup_, rs, 0), -E2BIG);
  EXPECT_NE(LastError(), "");
  EXPECT_EQ(pathwarden_process_layers(backup_, 0), 16);
  pathwarden_ruleset_free(rs);

  // A ruleset handling nothing: ENOMSG, as landlock_create_ruleset().
  ASSERT_EQ(pathwarden_ruleset_new(&rs, 0, 0, 0, 0), 0);
  EXPECT_EQ(pathwarden_process_restrict(alice_, rs, 0), -ENOMSG);
  pathwarden_ruleset_free(rs);
  // A port rule on TCP rights.
  ASSERT_EQ(pathwarden_ruleset_new(&rs, 0, 3, 0, 0), 0);
  ASSERT_EQ(pathwarden_ruleset_allow_port(rs, 443, 2, 0), 0);
  EXPECT_EQ(pathwarden_ruleset_allow_port(rs, 443, 2, 1), -EINVAL);
  ASSERT_EQ(pathwarden_process_restrict(alice_, rs, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(alice_, "connect_tcp 443"), 0);
  EXPECT_EQ(ErrOf(alice_, "connect_tcp 80"), EACCES);
  pathwarden_ruleset_free(rs);
  EXPECT_EQ(pathwarden_ruleset_new(&rs, 1, 0, 0, 1), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_new(nullptr, 1, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_new(&rs, uint64_t{1} << 33, 0, 0, 0), -EINVAL);
  pathwarden_ruleset_free(nullptr);
}

TEST_F(CapiTest, BuilderChmodChownSetfaclMountSysctl) {
  EXPECT_EQ(ErrOf(backup_, "stat /home/alice/key"), EACCES);
  // An ACL entry lets uid 34 search.
  ASSERT_EQ(pathwarden_model_setfacl(m_, "/home/alice", "u:34:--x", nullptr, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(backup_, "stat /home/alice/key"), 0);
  pathwarden_decision* d = AskLine(backup_, "open /home/alice/key");
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_STREQ(pathwarden_decision_stage(d), "dac");
  pathwarden_check c{};
  const int n = pathwarden_decision_component_count(d);
  ASSERT_GE(n, 1);
  ASSERT_EQ(pathwarden_decision_component(d, static_cast<size_t>(n - 1), &c, 0), 0);
  EXPECT_STREQ(c.path, "/home/alice");
  EXPECT_EQ(c.has_acl, 1);
  EXPECT_STREQ(c.decided_by, "ACL entry user:34");
  EXPECT_STREQ(c.layer, "");  // not an overlay
  pathwarden_decision_free(d);
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/home/alice", "u:34:rwz", nullptr, 0), -EINVAL);
  // (uid_t)-1 is no id: Linux refuses it in an ACL, and so do the builders.
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/home/alice", "u:4294967295:r--", nullptr, 0), -EINVAL);
  EXPECT_NE(LastError().find("(uid_t)-1"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/home/alice", nullptr, "g:4294967295:r--", 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/home/alice/key", nullptr, "u:34:r--", 0), -EACCES);
  ASSERT_EQ(pathwarden_model_setfacl(m_, "/home/alice", nullptr, "u:34:r--", 0), 0);
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/nope", "u:34:r--", nullptr, 0), -ENOENT);
  EXPECT_EQ(pathwarden_model_setfacl(m_, "/home/alice", "u:34:r--", nullptr, 1), -EINVAL);
  // chmod and chown as root.
  ASSERT_EQ(pathwarden_model_chmod(m_, "/home/alice/key", 0644, 0), 0);
  EXPECT_EQ(ErrOf(backup_, "open /home/alice/key"), 0);
  ASSERT_EQ(pathwarden_model_chown(m_, "/home/alice/key", 34, -1, 0), 0);
  EXPECT_EQ(ErrOf(backup_, "open /home/alice/key O_WRONLY"), 0);
  EXPECT_EQ(pathwarden_model_chmod(m_, "/nope", 0644, 0), -ENOENT);
  EXPECT_NE(LastError().find("chmod /nope"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_model_chown(m_, "/home/alice/key", -2, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_chmod(m_, "/home", 0755, 1), -EINVAL);
  EXPECT_EQ(pathwarden_model_chown(m_, "/home", 0, 0, 1), -EINVAL);
  // The builder's errors are Linux's.
  EXPECT_EQ(pathwarden_model_mkdir(m_, "/home", 0755, 0, 0, 0), -EEXIST);
  EXPECT_EQ(pathwarden_model_mkdir(m_, "/a/b", 0755, 0, 0, 0), -ENOENT);
  EXPECT_EQ(pathwarden_model_mkdir(m_, "/etc/x/y", 0755, 0, 0, 0), -ENOTDIR);
  EXPECT_EQ(pathwarden_model_mkdir(m_, "relative", 0755, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_mkdir(m_, "/", 0755, 0, 0, 0), -EEXIST);
  EXPECT_EQ(pathwarden_model_mkdir(m_, "/new", 0755, 0, 0, 1), -EINVAL);
  EXPECT_EQ(pathwarden_model_mkdir(m_, nullptr, 0755, 0, 0, 0), -EINVAL);
  ASSERT_EQ(pathwarden_model_create(m_, "/srv/link", PATHWARDEN_FILE_SYMLINK, "a", 0777, 0, 0, 0), 0);
  EXPECT_EQ(ErrOf(alice_, "open /srv/link"), 0);
  EXPECT_EQ(pathwarden_model_create(m_, "/srv/l2", PATHWARDEN_FILE_SYMLINK, nullptr, 0, 0, 0, 0),
            -EINVAL);
  EXPECT_EQ(pathwarden_model_create(m_, "/srv/f", PATHWARDEN_FILE_FIFO, "x", 0, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_create(m_, "/srv/f", 9, nullptr, 0, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_create(m_, "/srv/f", PATHWARDEN_FILE_FIFO, nullptr, 0, 0, 0, 1), -EINVAL);
  ASSERT_EQ(pathwarden_model_create(m_, "/srv/f", PATHWARDEN_FILE_FIFO, nullptr, 0666, 0, 0, 0), 0);
  // A tmpfs, then read-only.
  ASSERT_EQ(pathwarden_model_mkdir(m_, "/mnt", 0755, 0, 0, 0), 0);
  ASSERT_EQ(pathwarden_model_mount_tmpfs(m_, "/mnt", 01777, 0, 0, PATHWARDEN_MOUNT_NOEXEC, 0), 0)
      << LastError();
  EXPECT_EQ(ErrOf(alice_, "mkdir /mnt/d"), 0);
  ASSERT_EQ(pathwarden_model_remount(m_, "/mnt", PATHWARDEN_MOUNT_RDONLY, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(alice_, "mkdir /mnt/d"), EROFS);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(m_, "/srv", 0755, 0, 0, PATHWARDEN_MOUNT_RDONLY, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(m_, "/srv", 0755, 0, 0, 0, 1), -EINVAL);
  EXPECT_EQ(pathwarden_model_remount(m_, "/mnt", 0x100, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_remount(m_, "/mnt", 0, 1), -EINVAL);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(m_, "/nope", 0755, 0, 0, 0, 0), -ENOENT);
  // protected_regular: O_CREAT of another's file in a sticky directory.
  ASSERT_EQ(pathwarden_model_mkdir(m_, "/tmp", 01777, 0, 0, 0), 0);
  ASSERT_EQ(pathwarden_model_create(m_, "/tmp/f", PATHWARDEN_FILE_REGULAR, nullptr, 0666, 34, 34, 0),
            0);
  EXPECT_EQ(ErrOf(alice_, "open /tmp/f O_WRONLY|O_CREAT"), 0);
  ASSERT_EQ(pathwarden_model_set_sysctl(m_, "protected_regular", 2, 0), 0);
  EXPECT_EQ(ErrOf(alice_, "open /tmp/f O_WRONLY|O_CREAT"), EACCES);
  EXPECT_EQ(pathwarden_model_set_sysctl(m_, "protected_regular", 3, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_set_sysctl(m_, "protected_nothing", 1, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_set_sysctl(m_, nullptr, 1, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_set_sysctl(m_, "protected_regular", 0, 1), -EINVAL);
}

// pathwarden_op follows Op, value for value.
static_assert(PATHWARDEN_OP_FCHDIR == static_cast<int>(pathwarden::Op::kFchdir));
static_assert(PATHWARDEN_OP_FUTIMENS == static_cast<int>(pathwarden::Op::kFutimens));
static_assert(PATHWARDEN_OP_RESTRICT == static_cast<int>(pathwarden::Op::kRestrict));
static_assert(PATHWARDEN_OP_UTIMENSAT == static_cast<int>(pathwarden::Op::kUtimensat));
static_assert(PATHWARDEN_OP_MOUNT_SETATTR == static_cast<int>(pathwarden::Op::kMountSetattr));
static_assert(PATHWARDEN_OP_MOUNT_SETATTR + 1 == std::variant_size_v<pathwarden::Request>);

TEST_F(CapiTest, EveryOpIsAsked) {
  pathwarden_ruleset* rs = nullptr;
  ASSERT_EQ(pathwarden_ruleset_new(&rs, kFsReadFile, 0, 0, 0), 0);
  for (int op = PATHWARDEN_OP_OPEN; op <= PATHWARDEN_OP_MOUNT_SETATTR; ++op) {
    pathwarden_request r;
    ASSERT_EQ(pathwarden_request_init(&r, op), 0);
    r.path = "/srv/a";
    r.path2 = "/srv/b";
    r.target = backup_;
    r.ruleset = rs;
    r.fd = 0;
    r.name = "user.k";
    r.value = "v";
    r.value_len = 1;
    pathwarden_decision* d = nullptr;
    ASSERT_EQ(pathwarden_ask(alice_, &r, PATHWARDEN_DETAIL_TRACE, &d, 0), 0)
        << "op " << op << ": " << LastError();
    const int v = pathwarden_decision_verdict(d);
    EXPECT_TRUE(v == PATHWARDEN_ALLOWED || v == PATHWARDEN_DENIED) << "op " << op;
    EXPECT_NE(pathwarden_decision_json(d, 0), nullptr);
    pathwarden_decision_free(d);
  }
  pathwarden_ruleset_free(rs);
  // Each op named as the scenario format names it, and nothing past the last.
  EXPECT_STREQ(pathwarden_op_name(PATHWARDEN_OP_OPEN), "open");
  EXPECT_STREQ(pathwarden_op_name(PATHWARDEN_OP_EXEC_CHECK), "exec_check");
  EXPECT_STREQ(pathwarden_op_name(PATHWARDEN_OP_FUTIMENS), "futimens");
  EXPECT_STREQ(pathwarden_op_name(PATHWARDEN_OP_MOUNT_SETATTR), "mount_setattr");
  EXPECT_EQ(pathwarden_op_name(PATHWARDEN_OP_MOUNT_SETATTR + 1), nullptr);
  EXPECT_EQ(pathwarden_op_name(-1), nullptr);
  // Requests the ops cannot take.
  pathwarden_request r;
  EXPECT_EQ(pathwarden_request_init(&r, -1), -EINVAL);
  EXPECT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_MOUNT_SETATTR + 1), -EINVAL);
  EXPECT_EQ(pathwarden_request_init(nullptr, 0), -EINVAL);
  // Each op's default mode is its request type's: mkdir 0755, mknod 0644,
  // the rest that take one 0.
  for (auto [op, mode] : {std::pair{PATHWARDEN_OP_MKDIR, 0755u}, {PATHWARDEN_OP_MKNOD, 0644u},
                          {PATHWARDEN_OP_CHMOD, 0u}, {PATHWARDEN_OP_ACCESS, 0u},
                          {PATHWARDEN_OP_STAT, 0u}}) {
    ASSERT_EQ(pathwarden_request_init(&r, op), 0);
    EXPECT_EQ(r.mode, mode) << "op " << op;
  }
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_OPEN), 0);
  EXPECT_EQ(r.dirfd, PATHWARDEN_AT_FDCWD);
  EXPECT_EQ(r.mode, 0644u);
  EXPECT_EQ(r.uid, -1);
  pathwarden_decision* d = nullptr;
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);  // no path
  EXPECT_NE(LastError().find("open needs path"), std::string::npos) << LastError();
  r.op = 99;
  r.path = "/srv/a";
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_RENAME), 0);
  r.path = "/srv/a";
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);  // no path2
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_SIGNAL), 0);
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);  // no target
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_RESTRICT), 0);
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);  // no ruleset
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_UTIMENSAT), 0);
  r.path = "/srv/a";
  r.has_times = 1;
  r.times[0] = 5;
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask(alice_, nullptr, 0, &d, 0), -EINVAL);
  // A target of another model.
  pathwarden_model* other = nullptr;
  ASSERT_EQ(pathwarden_model_new(&other, 0, 0), 0);
  pathwarden_cred c{};
  pathwarden_process* stranger = nullptr;
  ASSERT_EQ(pathwarden_process_new(other, nullptr, &c, &stranger, 0), 0);
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_SIGNAL), 0);
  r.target = stranger;
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), -EINVAL);
  EXPECT_NE(LastError().find("another model"), std::string::npos) << LastError();
  pathwarden_process_free(stranger);
  pathwarden_model_free(other);
}

TEST_F(CapiTest, ApplyChangesTheModel) {
  pathwarden_request r;
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_MKDIR), 0);
  r.path = "/srv/new";
  pathwarden_decision* d = nullptr;
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);  // /srv is root's
  pathwarden_decision_free(d);
  pathwarden_cred root{0, 0, nullptr, 0, PATHWARDEN_CAPS_ALL, 022};
  pathwarden_process* admin = nullptr;
  ASSERT_EQ(pathwarden_process_new(m_, "admin", &root, &admin, 0), 0);
  EXPECT_EQ(pathwarden_ask(admin, &r, 0, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), 0);
  pathwarden_decision_free(d);
  EXPECT_EQ(ErrOf(admin, "stat /srv/new"), ENOENT);  // asking changed nothing
  ASSERT_EQ(pathwarden_apply(admin, &r, 0, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), 0);
  pathwarden_decision_free(d);
  EXPECT_EQ(ErrOf(admin, "stat /srv/new"), 0);
  // An applied open gives an fd, which close takes.
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_OPEN), 0);
  r.path = "/srv/a";
  ASSERT_EQ(pathwarden_apply(alice_, &r, 0, &d, 0), 0);
  const int fd = pathwarden_decision_fd(d);
  EXPECT_GE(fd, 0);
  pathwarden_decision_free(d);
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_CLOSE), 0);
  r.fd = fd;
  ASSERT_EQ(pathwarden_apply(alice_, &r, 0, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), 0);
  pathwarden_decision_free(d);
  ASSERT_EQ(pathwarden_apply(alice_, &r, 0, &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_errno(d), EBADF);
  EXPECT_STREQ(pathwarden_decision_stage(d), "fd");
  pathwarden_decision_free(d);
  EXPECT_EQ(pathwarden_apply(alice_, &r, 0, &d, 1), -EINVAL);
  EXPECT_EQ(pathwarden_apply(alice_, &r, 0, nullptr, 0), -EINVAL);
  // chdir as the process: checked.
  EXPECT_EQ(pathwarden_process_chdir(backup_, "/home/alice", 0), -EACCES);
  EXPECT_NE(LastError().find("no search permission"), std::string::npos) << LastError();
  ASSERT_EQ(pathwarden_process_chdir(backup_, "/srv", 0), 0);
  EXPECT_EQ(ErrOf(backup_, "open a"), 0);  // relative to the new cwd
  EXPECT_EQ(pathwarden_process_chdir(backup_, "/srv", 1), -EINVAL);
  EXPECT_EQ(pathwarden_process_chdir(backup_, nullptr, 0), -EINVAL);
  pathwarden_process_free(admin);
}

// unshare -r by alice: root of a namespace mapped onto uid 1000. Its
// capabilities count over her own files only (their owner and group map).
TEST_F(CapiTest, AProcessInAUserNamespace) {
  pathwarden_cred c{1000, 1000, nullptr, 0, PATHWARDEN_CAPS_ALL, 022};
  pathwarden_process* ns_root = nullptr;
  ASSERT_EQ(pathwarden_process_new(m_, "ns-root", &c, &ns_root, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(ns_root, "open /etc/x O_WRONLY"), 0);  // before: CAP_DAC_OVERRIDE
  ASSERT_EQ(pathwarden_process_set_userns(ns_root, "0:1000:1", nullptr, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(ns_root, "open /etc/x O_WRONLY"), EACCES);  // root's: unmapped
  EXPECT_EQ(ErrOf(ns_root, "chmod /home/alice/key 0"), 0);
  EXPECT_EQ(ErrOf(ns_root, "chown /home/alice/key 0:0"), EINVAL);  // uid 0 does not map
  EXPECT_EQ(ErrOf(ns_root, "setxattr /home/alice/key trusted.x v"), EPERM);  // capable()
  // Its ids must map; maps are checked as the kernel checks uid_map.
  EXPECT_EQ(pathwarden_process_set_userns(backup_, "0:1000:1", nullptr, 0), -EINVAL);
  EXPECT_NE(LastError().find("uid 34 has no mapping"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_process_set_userns(alice_, "0:1000:1,0:2000:1", nullptr, 0), -EINVAL);
  EXPECT_NE(LastError().find("overlaps"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_process_set_userns(alice_, nullptr, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_set_userns(alice_, "1000:1000:1", nullptr, 1), -EINVAL);
  pathwarden_process_free(ns_root);
}

TEST_F(CapiTest, AskLine) {
  pathwarden_decision* d = nullptr;
  EXPECT_EQ(pathwarden_ask_line(backup_, "open /home/alice/key O_NOPE", &d, 0), -EINVAL);
  EXPECT_NE(LastError().find("O_NOPE"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_ask_line(backup_, "frobnicate /x", &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask_line(backup_, nullptr, &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask_line(backup_, "stat /", &d, 1), -EINVAL);
  EXPECT_EQ(pathwarden_ask_line(backup_, "stat /", nullptr, 0), -EINVAL);
  EXPECT_EQ(ErrOf(backup_, "rename /srv/a /srv/b RENAME_NOREPLACE"), EACCES);
}

TEST_F(CapiTest, HandlesOfTheWrongKindAreEbadf) {
  // A pointer to another kind of handle is named, not trusted.
  auto* not_process = reinterpret_cast<pathwarden_process*>(m_);
  auto* not_model = reinterpret_cast<pathwarden_model*>(alice_);
  auto* not_decision = reinterpret_cast<pathwarden_decision*>(alice_);
  auto* not_ruleset = reinterpret_cast<pathwarden_ruleset*>(m_);
  pathwarden_decision* d = nullptr;
  pathwarden_process* p = nullptr;
  pathwarden_cred c{};
  EXPECT_EQ(pathwarden_ask_line(not_process, "stat /", &d, 0), -EBADF);
  EXPECT_NE(LastError().find("not a live process handle"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_model_mkdir(not_model, "/x", 0755, 0, 0, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_create(not_model, "/x", 0, nullptr, 0755, 0, 0, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_chmod(not_model, "/x", 0755, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_chown(not_model, "/x", 0, 0, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_setfacl(not_model, "/x", "u:1:r--", nullptr, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(not_model, "/x", 0755, 0, 0, 0, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_remount(not_model, "/x", 0, 0), -EBADF);
  EXPECT_EQ(pathwarden_model_set_sysctl(not_model, "protected_regular", 1, 0), -EBADF);
  EXPECT_EQ(pathwarden_process_new(not_model, "x", &c, &p, 0), -EBADF);
  EXPECT_EQ(pathwarden_process_from_pid(not_model, getpid(), &p, 0), -EBADF);
  EXPECT_EQ(pathwarden_process_layers(not_process, 0), -EBADF);
  EXPECT_EQ(pathwarden_process_chdir(not_process, "/", 0), -EBADF);
  EXPECT_EQ(pathwarden_process_set_userns(not_process, "0:0:1", nullptr, 0), -EBADF);
  EXPECT_EQ(pathwarden_process_restrict(alice_, not_ruleset, 0), -EBADF);
  EXPECT_EQ(pathwarden_ruleset_allow_path(not_ruleset, "/", 1, 0), -EBADF);
  EXPECT_EQ(pathwarden_ruleset_allow_port(not_ruleset, 1, 1, 0), -EBADF);
  pathwarden_request r;
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_STAT), 0);
  r.path = "/";
  EXPECT_EQ(pathwarden_ask(not_process, &r, 0, &d, 0), -EBADF);
  EXPECT_EQ(pathwarden_apply(not_process, &r, 0, &d, 0), -EBADF);
  EXPECT_EQ(pathwarden_decision_verdict(not_decision), -EBADF);
  EXPECT_EQ(pathwarden_decision_errno(not_decision), -EBADF);
  EXPECT_EQ(pathwarden_decision_fd(not_decision), -EBADF);
  EXPECT_EQ(pathwarden_decision_stage(not_decision), nullptr);
  EXPECT_EQ(pathwarden_decision_reason(not_decision), nullptr);
  EXPECT_EQ(pathwarden_decision_unknown_why(not_decision), nullptr);
  EXPECT_EQ(pathwarden_decision_result(not_decision), nullptr);
  EXPECT_EQ(pathwarden_decision_json(not_decision, 0), nullptr);
  EXPECT_EQ(pathwarden_decision_component_count(not_decision), -EBADF);
  EXPECT_EQ(pathwarden_decision_layer_count(not_decision), -EBADF);
  pathwarden_check chk{};
  pathwarden_layer l{};
  pathwarden_grant g{};
  EXPECT_EQ(pathwarden_decision_component(not_decision, 0, &chk, 0), -EBADF);
  EXPECT_EQ(pathwarden_decision_dac(not_decision, &chk, 0), -EBADF);
  EXPECT_EQ(pathwarden_decision_layer(not_decision, 0, &l, 0), -EBADF);
  EXPECT_EQ(pathwarden_decision_grant(not_decision, 0, 0, &g, 0), -EBADF);
  // The *_free() of a wrong kind does nothing (the handle stays usable).
  pathwarden_model_free(not_model);
  pathwarden_process_free(not_process);
  pathwarden_decision_free(not_decision);
  pathwarden_ruleset_free(not_ruleset);
  EXPECT_EQ(ErrOf(alice_, "stat /srv"), 0);
}

TEST_F(CapiTest, NullHandlesAreEinval) {
  pathwarden_decision* d = nullptr;
  pathwarden_process* p = nullptr;
  pathwarden_cred c{};
  EXPECT_EQ(pathwarden_model_mkdir(nullptr, "/x", 0755, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_create(nullptr, "/x", 0, nullptr, 0755, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_chmod(nullptr, "/x", 0755, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_chmod(m_, nullptr, 0755, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_chown(nullptr, "/x", 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_chown(m_, nullptr, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_setfacl(nullptr, "/x", nullptr, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_setfacl(m_, nullptr, nullptr, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(nullptr, "/x", 0755, 0, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_mount_tmpfs(m_, nullptr, 0755, 0, 0, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_remount(nullptr, "/x", 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_remount(m_, nullptr, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_new(nullptr, "x", &c, &p, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_new(m_, "x", nullptr, &p, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_new(m_, "x", &c, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_new(m_, "x", &c, &p, 1), -EINVAL);
  c.ngroups = 2;  // and no groups
  EXPECT_EQ(pathwarden_process_new(m_, "x", &c, &p, 0), -EINVAL);
  c.ngroups = 0;
  c.caps = uint64_t{1} << 50;
  EXPECT_EQ(pathwarden_process_new(m_, "x", &c, &p, 0), -EINVAL);
  c.caps = 0;
  c.umask = 01000;
  EXPECT_EQ(pathwarden_process_new(m_, "x", &c, &p, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_from_pid(nullptr, getpid(), &p, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_from_pid(m_, getpid(), nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_layers(nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_chdir(nullptr, "/", 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_restrict(nullptr, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_restrict(alice_, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_allow_path(nullptr, "/", 1, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ruleset_allow_port(nullptr, 1, 1, 0), -EINVAL);
  pathwarden_request r;
  ASSERT_EQ(pathwarden_request_init(&r, PATHWARDEN_OP_STAT), 0);
  r.path = "/";
  EXPECT_EQ(pathwarden_ask(nullptr, &r, 0, &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, nullptr, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask(alice_, &r, 0, &d, 1), -EINVAL);
  EXPECT_EQ(pathwarden_apply(nullptr, &r, 0, &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_apply(alice_, nullptr, 0, &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_ask_line(nullptr, "stat /", &d, 0), -EINVAL);
  EXPECT_EQ(pathwarden_decision_verdict(nullptr), -EINVAL);
  EXPECT_EQ(pathwarden_decision_errno(nullptr), -EINVAL);
  EXPECT_EQ(pathwarden_decision_fd(nullptr), -EINVAL);
  EXPECT_EQ(pathwarden_decision_stage(nullptr), nullptr);
  EXPECT_EQ(pathwarden_decision_reason(nullptr), nullptr);
  EXPECT_EQ(pathwarden_decision_unknown_why(nullptr), nullptr);
  EXPECT_EQ(pathwarden_decision_result(nullptr), nullptr);
  EXPECT_EQ(pathwarden_decision_json(nullptr, 0), nullptr);
  EXPECT_EQ(pathwarden_decision_component_count(nullptr), -EINVAL);
  EXPECT_EQ(pathwarden_decision_layer_count(nullptr), -EINVAL);
  pathwarden_check chk{};
  pathwarden_layer l{};
  pathwarden_grant g{};
  EXPECT_EQ(pathwarden_decision_component(nullptr, 0, &chk, 0), -EINVAL);
  EXPECT_EQ(pathwarden_decision_dac(nullptr, &chk, 0), -EINVAL);
  EXPECT_EQ(pathwarden_decision_layer(nullptr, 0, &l, 0), -EINVAL);
  EXPECT_EQ(pathwarden_decision_grant(nullptr, 0, 0, &g, 0), -EINVAL);
  pathwarden_decision_free(nullptr);
  pathwarden_process_free(nullptr);
}

TEST_F(CapiTest, HandlesOutliveTheirModel) {
  pathwarden_decision* d = AskLine(backup_, "stat /home/alice/key");
  pathwarden_model_free(m_);
  m_ = nullptr;
  // The process and the decision keep the model alive.
  EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
  EXPECT_EQ(ErrOf(alice_, "stat /home/alice/key"), 0);
  pathwarden_process_free(alice_);
  alice_ = nullptr;
  EXPECT_NE(std::string(pathwarden_decision_json(d, 0)).find("EACCES"), std::string::npos);
  pathwarden_decision_free(d);
}

// The learner: what the needs ask for, as a policy that loads back and
// allows them and not their neighbours; what it refuses, refused at once.
TEST_F(CapiTest, LearnerPolicyAllowsTheNeedsAndNoMore) {
  constexpr uint64_t kFsMakeReg = 1u << 8;
  constexpr uint64_t kNetConnectTcp = 1u << 1;
  constexpr uint64_t kScopeSignal = 1u << 1;
  pathwarden_learner* l = nullptr;
  ASSERT_EQ(pathwarden_learner_new(&l, 0), 0) << LastError();
  ASSERT_EQ(pathwarden_learner_add_path(l, "/etc/x", kFsReadFile, 0, 0), 0) << LastError();
  ASSERT_EQ(pathwarden_learner_add_path(l, "/srv", kFsReadDir, 1, 0), 0) << LastError();
  ASSERT_EQ(pathwarden_learner_add_port(l, 443, kNetConnectTcp, 0), 0) << LastError();
  ASSERT_EQ(pathwarden_learner_need_unscoped(l, kScopeSignal, 0), 0) << LastError();
  // Refused, and not recorded.
  EXPECT_EQ(pathwarden_learner_add_path(l, "etc/x", kFsReadFile, 0, 0), -EINVAL);
  EXPECT_NE(LastError().find("etc/x"), std::string::npos) << LastError();
  EXPECT_EQ(pathwarden_learner_add_path(l, "/etc/x", kFsMakeReg, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_add_path(l, "/etc/./x", kFsReadFile, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_add_path(l, nullptr, kFsReadFile, 0, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_add_port(l, 70000, kNetConnectTcp, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_need_unscoped(l, uint64_t{1} << 20, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_add_path(l, "/etc/x", kFsReadFile, 0, 1), -EINVAL);
  const char* toml = nullptr;
  EXPECT_EQ(pathwarden_learner_policy(l, 99, &toml, 0), -EINVAL);
  EXPECT_EQ(pathwarden_learner_policy(l, 0, nullptr, 0), -EINVAL);
  ASSERT_EQ(pathwarden_learner_policy(l, 0, &toml, 0), 0) << LastError();
  const std::string text = toml;
  EXPECT_NE(text.find("\"/etc/x\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"/srv\""), std::string::npos) << text;
  EXPECT_NE(text.find("443"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"etc/x\""), std::string::npos) << text;
  EXPECT_EQ(pathwarden_learner_beyond(l, 0), nullptr);
  // A handle of another kind.
  EXPECT_EQ(pathwarden_learner_add_path(reinterpret_cast<pathwarden_learner*>(m_), "/etc/x",
                                        kFsReadFile, 0, 0),
            -EBADF);
  pathwarden_learner_free(l);

  TempPolicy pol(text);
  pathwarden_ruleset* rs = nullptr;
  ASSERT_EQ(pathwarden_ruleset_load(&rs, pol.path().c_str(), 0), 0) << LastError() << "\n" << text;
  ASSERT_EQ(pathwarden_process_restrict(backup_, rs, 0), 0) << LastError();
  EXPECT_EQ(ErrOf(backup_, "open /etc/x"), 0);
  EXPECT_EQ(ErrOf(backup_, "open /srv/a"), EACCES);  // read_dir on /srv, not read_file
  EXPECT_EQ(ErrOf(backup_, "open /srv O_RDONLY|O_DIRECTORY"), 0);
  pathwarden_ruleset_free(rs);
}

// A right needed beneath four entries of one directory is granted on it,
// and the note says how much more that is, counted on this host.
TEST(CapiLearner, WidenedRulesAreCountedOnTheHost) {
  const pathwarden::base_testing::ScratchDir dir("pathwarden-learn");
  const std::string& d = dir.path();
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) ASSERT_TRUE(dir.Write(n, ""));
  pathwarden_learner* l = nullptr;
  ASSERT_EQ(pathwarden_learner_new(&l, 0), 0);
  for (const char* n : {"a", "b", "c", "d"})
    ASSERT_EQ(pathwarden_learner_add_path(l, (d + "/" + n).c_str(), kFsReadFile, 0, 0), 0)
        << LastError();
  const char* toml = nullptr;
  EXPECT_EQ(pathwarden_learner_policy(l, 0, &toml, 0), 1) << LastError();
  const char* note = pathwarden_learner_beyond(l, 0);
  ASSERT_NE(note, nullptr);
  EXPECT_NE(std::string(note).find("all 6 entries beneath " + d + " (the run used 4 of them)"),
            std::string::npos)
      << note;
  EXPECT_EQ(pathwarden_learner_beyond(l, 1), nullptr);
  EXPECT_NE(std::string(toml).find("\"" + d + "\""), std::string::npos) << toml;
  pathwarden_learner_free(l);
}

}  // namespace
