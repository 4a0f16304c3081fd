// PolicyFromEnv(): the sandboxer's variables, rights per ABI, errors.
// Upstream: samples/landlock/sandboxer.c @v6.18

#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/policy/policy.h"

namespace pathwarden::policy {
namespace {

using landlock::kFsAll;
using ::testing::HasSubstr;

constexpr landlock::AccessMask kRead =
    landlock::kFsExecute | landlock::kFsReadFile | landlock::kFsReadDir;

Result<Policy, std::string> FromEnv(const std::map<std::string, std::string>& env, int abi = 7,
                                    const std::string& cwd = "") {
  return PolicyFromEnv(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      abi, cwd);
}

TEST(PolicyFromEnv, ReadOnlyAndReadWritePathsGetRoughlyReadAndEverything) {
  auto p = FromEnv({{"LL_FS_RO", "/usr:/etc"}, {"LL_FS_RW", "/tmp"}});
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->abi, 7);
  EXPECT_EQ(p->source, "environment");
  EXPECT_EQ(p->handled_fs, kFsAll);
  EXPECT_EQ(p->handled_net, 0u);
  EXPECT_EQ(p->scoped, 0u);
  ASSERT_EQ(p->paths.size(), 3u);
  EXPECT_EQ(p->paths[0].path, "/etc");  // sorted bytewise
  EXPECT_EQ(p->paths[0].access, kRead);
  EXPECT_EQ(p->paths[0].origins, (std::vector<Origin>{{"LL_FS_RO", 0, 0}}));
  EXPECT_EQ(p->paths[1].path, "/tmp");
  EXPECT_EQ(p->paths[1].access, kFsAll);
  EXPECT_EQ(p->paths[1].origins, (std::vector<Origin>{{"LL_FS_RW", 0, 0}}));
  EXPECT_EQ(p->paths[2].path, "/usr");
}

TEST(PolicyFromEnv, PathInBothVariablesMergesWithBothOrigins) {
  auto p = FromEnv({{"LL_FS_RO", "/srv"}, {"LL_FS_RW", "/srv"}});
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->paths.size(), 1u);
  EXPECT_EQ(p->paths[0].access, kFsAll);
  EXPECT_EQ(p->paths[0].origins,
            (std::vector<Origin>{{"LL_FS_RO", 0, 0}, {"LL_FS_RW", 0, 0}}));
}

TEST(PolicyFromEnv, EmptyValuesMeanNoPathsButEveryFsRightHandled) {
  auto p = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}});
  ASSERT_TRUE(p) << p.error();
  EXPECT_TRUE(p->paths.empty());
  EXPECT_EQ(p->handled_fs, kFsAll);
}

TEST(PolicyFromEnv, EmptyElementsGrantNothing) {
  auto p = FromEnv({{"LL_FS_RO", ":/usr::"}, {"LL_FS_RW", ""}});
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->paths.size(), 1u);
  EXPECT_EQ(p->paths[0].path, "/usr");
}

TEST(PolicyFromEnv, PathsAreKeptAsTheSandboxerOpensThem) {
  auto p = FromEnv({{"LL_FS_RO", "rel/dir:/a//b/"}, {"LL_FS_RW", ""}});
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->paths.size(), 2u);
  EXPECT_EQ(p->paths[0].path, "/a//b/");
  EXPECT_EQ(p->paths[1].path, "rel/dir");
}

// The sandboxer opens a relative path from its working directory: the
// command's, not the identity's --cwd.
TEST(PolicyFromEnv, RelativePathsJoinTheCommandsDirectory) {
  auto p = FromEnv({{"LL_FS_RO", ".:rel/../dir:/abs"}, {"LL_FS_RW", "w"}}, 7, "/home/a");
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->paths.size(), 4u);
  EXPECT_EQ(p->paths[0].path, "/abs");
  EXPECT_EQ(p->paths[1].path, "/home/a/.");
  EXPECT_EQ(p->paths[2].path, "/home/a/rel/../dir");
  EXPECT_EQ(p->paths[3].path, "/home/a/w");
  auto root = FromEnv({{"LL_FS_RO", "etc"}, {"LL_FS_RW", ""}}, 7, "/");
  ASSERT_TRUE(root) << root.error();
  EXPECT_EQ(root->paths[0].path, "/etc");
}

TEST(PolicyFromEnv, MissingFsVariableIsAnError) {
  auto ro = FromEnv({{"LL_FS_RW", "/tmp"}});
  ASSERT_FALSE(ro);
  EXPECT_THAT(ro.error(), HasSubstr("missing environment variable LL_FS_RO"));
  auto rw = FromEnv({{"LL_FS_RO", "/usr"}});
  ASSERT_FALSE(rw);
  EXPECT_THAT(rw.error(), HasSubstr("missing environment variable LL_FS_RW"));
}

// The sandboxer's switch (abi): refer from 2, truncate from 3, network
// from 4, ioctl_dev from 5, scopes from 6.
TEST(PolicyFromEnv, HandledRightsFollowTheAbi) {
  std::map<std::string, std::string> env = {{"LL_FS_RO", "/usr"},
                                            {"LL_FS_RW", "/tmp"},
                                            {"LL_TCP_BIND", "80"},
                                            {"LL_TCP_CONNECT", "443"},
                                            {"LL_SCOPED", "a:s"}};
  struct Case {
    int abi;
    landlock::AccessMask fs, net, scoped;
  } cases[] = {
      {1, (1u << 13) - 1, 0, 0},
      {2, (1u << 14) - 1, 0, 0},
      {3, (1u << 15) - 1, 0, 0},
      {4, (1u << 15) - 1, landlock::kNetAll, 0},
      {5, kFsAll, landlock::kNetAll, 0},
      {6, kFsAll, landlock::kNetAll, landlock::kScopeAll},
      {7, kFsAll, landlock::kNetAll, landlock::kScopeAll},
      {9, kFsAll, landlock::kNetAll, landlock::kScopeAll},  // clamped to 7
  };
  for (const Case& c : cases) {
    auto p = FromEnv(env, c.abi);
    ASSERT_TRUE(p) << c.abi << ": " << p.error();
    EXPECT_EQ(p->abi, std::min(c.abi, landlock::kAbiLatest));
    EXPECT_EQ(p->handled_fs, c.fs) << "abi " << c.abi;
    EXPECT_EQ(p->handled_net, c.net) << "abi " << c.abi;
    EXPECT_EQ(p->scoped, c.scoped) << "abi " << c.abi;
    ASSERT_EQ(p->paths.size(), 2u);
    EXPECT_EQ(p->paths[0].path, "/tmp");
    EXPECT_EQ(p->paths[0].access, c.fs) << "abi " << c.abi;
    EXPECT_EQ(p->paths[1].access, kRead) << "abi " << c.abi;
    EXPECT_EQ(p->ports.size(), c.net != 0 ? 2u : 0u) << "abi " << c.abi;
  }
}

TEST(PolicyFromEnv, PortVariablesHandleTheirRightOnlyWhenSet) {
  auto bind = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_BIND", "9418"}});
  ASSERT_TRUE(bind) << bind.error();
  EXPECT_EQ(bind->handled_net, landlock::kNetBindTcp);
  ASSERT_EQ(bind->ports.size(), 1u);
  EXPECT_EQ(bind->ports[0].port, 9418u);
  EXPECT_EQ(bind->ports[0].access, landlock::kNetBindTcp);
  EXPECT_EQ(bind->ports[0].origins, (std::vector<Origin>{{"LL_TCP_BIND", 0, 0}}));

  // Empty: handled, no port allowed.
  auto none = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_CONNECT", ""}});
  ASSERT_TRUE(none) << none.error();
  EXPECT_EQ(none->handled_net, landlock::kNetConnectTcp);
  EXPECT_TRUE(none->ports.empty());
}

TEST(PolicyFromEnv, PortsMergeAscendingAcrossVariables) {
  auto p = FromEnv({{"LL_FS_RO", ""},
                    {"LL_FS_RW", ""},
                    {"LL_TCP_BIND", "8080::80"},
                    {"LL_TCP_CONNECT", "443:80"}});
  ASSERT_TRUE(p) << p.error();
  ASSERT_EQ(p->ports.size(), 3u);
  EXPECT_EQ(p->ports[0].port, 80u);
  EXPECT_EQ(p->ports[0].access, landlock::kNetAll);
  EXPECT_EQ(p->ports[0].origins,
            (std::vector<Origin>{{"LL_TCP_BIND", 0, 0}, {"LL_TCP_CONNECT", 0, 0}}));
  EXPECT_EQ(p->ports[1].port, 443u);
  EXPECT_EQ(p->ports[2].port, 8080u);
}

TEST(PolicyFromEnv, BadPortsAreErrors) {
  struct Case {
    const char* value;
    const char* message;
  } cases[] = {
      {"http", "LL_TCP_BIND: \"http\" is not a port number"},
      {"80x", "LL_TCP_BIND: \"80x\" is not a port number"},
      {"65536", "LL_TCP_BIND: port 65536 is above 65535"},
      {"99999999999999999999", "is not a port number"},  // ERANGE
  };
  for (const Case& c : cases) {
    auto p = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_BIND", c.value}});
    ASSERT_FALSE(p) << c.value;
    EXPECT_THAT(p.error(), HasSubstr(c.message));
  }
  auto max = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_CONNECT", "0:65535"}});
  ASSERT_TRUE(max) << max.error();
  EXPECT_EQ(max->ports.size(), 2u);
}

TEST(PolicyFromEnv, ScopesByLetter) {
  auto a = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_SCOPED", "a"}});
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->scoped, landlock::kScopeAbstractUnixSocket);
  auto s = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_SCOPED", "s"}});
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->scoped, landlock::kScopeSignal);
  auto empty = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_SCOPED", ""}});
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_EQ(empty->scoped, 0u);
}

TEST(PolicyFromEnv, UnknownOrDuplicateScopeIsAnError) {
  for (const char* value : {"x", "a:a", "a:", "as"}) {
    auto p = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_SCOPED", value}});
    ASSERT_FALSE(p) << value;
    EXPECT_THAT(p.error(), HasSubstr("LL_SCOPED: unknown or duplicate scope"));
  }
}

// Below ABI 6 the sandboxer never reads LL_SCOPED, so even a bad value passes.
TEST(PolicyFromEnv, ScopesIgnoredBelowAbi6) {
  auto p = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_SCOPED", "x"}}, 5);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->scoped, 0u);
}

// Below ABI 4 the kernel has no port rules: ports are checked, then dropped.
TEST(PolicyFromEnv, PortsDroppedBelowAbi4ButStillChecked) {
  auto p = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_BIND", "80"}}, 3);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->handled_net, 0u);
  EXPECT_TRUE(p->ports.empty());
  auto bad = FromEnv({{"LL_FS_RO", ""}, {"LL_FS_RW", ""}, {"LL_TCP_BIND", "http"}}, 3);
  EXPECT_FALSE(bad);
}

}  // namespace
}  // namespace pathwarden::policy
