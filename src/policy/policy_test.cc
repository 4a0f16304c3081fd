#include "src/policy/policy.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"
#include "src/policy/config.h"

namespace pathwarden::policy {
namespace {

using ::testing::HasSubstr;
using namespace landlock;  // NOLINT: the right bits

Result<Policy, std::string> Json(std::string_view text, const std::string& cwd = "/w") {
  return ParsePolicy(text, "p.json", true, cwd);
}
Result<Policy, std::string> Toml(std::string_view text, const std::string& cwd = "/w") {
  return ParsePolicy(text, "p.toml", false, cwd);
}
std::string JsonError(std::string_view text) {
  auto p = Json(text);
  EXPECT_FALSE(p.has_value()) << text;
  return p ? std::string() : p.error();
}
std::string TomlError(std::string_view text) {
  auto p = Toml(text);
  EXPECT_FALSE(p.has_value()) << text;
  return p ? std::string() : p.error();
}
std::map<std::string, AccessMask> Paths(const Policy& p) {
  std::map<std::string, AccessMask> m;
  for (const auto& r : p.paths) m[r.path] = r.access;
  return m;
}

constexpr AccessMask kRx = kFsExecute | kFsReadFile | kFsReadDir;

TEST(PolicyParse, JsonExample) {
  auto p = Json(R"({
  "abi": 5,
  "ruleset": [ { "handledAccessFs": ["abi.all"], "handledAccessNet": ["bind_tcp"] } ],
  "pathBeneath": [
    { "allowedAccess": ["abi.read_execute"], "parent": [".", "/usr", "/etc"] },
    { "allowedAccess": ["abi.read_write"], "parent": ["/tmp"] }
  ],
  "netPort": [ { "allowedAccess": ["bind_tcp"], "port": [443, 80] } ]
})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->abi, 5);
  EXPECT_EQ(p->handled_fs, RightsForAbi(5).fs);
  EXPECT_EQ(p->handled_net, kNetBindTcp);
  EXPECT_EQ(p->scoped, 0u);
  ASSERT_EQ(p->paths.size(), 4u);
  EXPECT_EQ(p->paths[0].path, "/etc");  // sorted bytewise
  EXPECT_EQ(p->paths[1].path, "/tmp");
  EXPECT_EQ(p->paths[2].path, "/usr");
  EXPECT_EQ(p->paths[3].path, "/w");  // "." from the cwd
  EXPECT_EQ(p->paths[0].access, kRx | kFsRefer);
  EXPECT_EQ(p->paths[1].access, RightsForAbi(5).fs & ~kFsExecute);
  ASSERT_EQ(p->ports.size(), 2u);
  EXPECT_EQ(p->ports[0].port, 80u);
  EXPECT_EQ(p->ports[1].port, 443u);
  ASSERT_EQ(p->paths[3].origins.size(), 1u);
  EXPECT_EQ(p->paths[3].origins[0], (Origin{"p.json", 5, 57}));
  EXPECT_EQ(p->ports[0].origins[0], (Origin{"p.json", 8, 63}));
  EXPECT_EQ(p->source, "p.json");
}

TEST(PolicyParse, TomlSpellsKeysInSnakeCase) {
  auto t = Toml(R"(abi = 5
[[ruleset]]
handled_access_fs = ["abi.all"]
handled_access_net = ["bind_tcp"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = [".", "/usr"]
[[net_port]]
allowed_access = ["bind_tcp"]
port = [443]
)");
  ASSERT_TRUE(t.has_value()) << t.error();
  auto j = Json(R"({"abi": 5, "ruleset": [{"handledAccessFs": ["abi.all"],
    "handledAccessNet": ["bind_tcp"]}], "pathBeneath": [{"allowedAccess": ["abi.read_execute"],
    "parent": [".", "/usr"]}], "netPort": [{"allowedAccess": ["bind_tcp"], "port": [443]}]})");
  ASSERT_TRUE(j.has_value()) << j.error();
  EXPECT_TRUE(SameRules(*t, *j));
  EXPECT_EQ(t->paths[0].origins[0], (Origin{"p.toml", 7, 16}));  // "/usr"
  // Each format's own spelling only.
  EXPECT_EQ(TomlError("[[pathBeneath]]\nallowed_access = [\"execute\"]\nparent = [\"/\"]\n"),
            "p.toml:1:3: unknown key \"pathBeneath\" in the policy\n"
            "p.toml:1:1: a policy needs at least one of \"variable\", \"ruleset\", "
            "\"path_beneath\", \"net_port\"");
  EXPECT_EQ(JsonError(R"({"ruleset": [{"handled_access_fs": ["execute"]}]})"),
            "p.json:1:15: /ruleset/0/handled_access_fs: unknown key \"handled_access_fs\" in a "
            "ruleset");
}

TEST(PolicyParse, Abi) {
  auto top = [](std::string_view abi) {
    return std::string(R"({"abi": )") + std::string(abi) +
           R"(, "pathBeneath": [{"allowedAccess": ["abi.all"], "parent": ["/"]}]})";
  };
  EXPECT_EQ(JsonError(top("0")), "p.json:1:9: /abi: \"abi\" = 0 is out of range [1, 2147483647]");
  EXPECT_EQ(JsonError(top("-1")), "p.json:1:9: /abi: \"abi\" = -1 is out of range [1, 2147483647]");
  EXPECT_EQ(JsonError(top("2147483648")),
            "p.json:1:9: /abi: \"abi\" = 2147483648 is out of range [1, 2147483647]");
  EXPECT_EQ(JsonError(top("18446744073709551615")),
            "p.json:1:9: /abi: \"abi\" = 18446744073709551615 is out of range [1, 2147483647]");
  EXPECT_EQ(JsonError(top("\"5\"")), "p.json:1:9: /abi: \"abi\" must be an integer, not a string");
  EXPECT_EQ(JsonError(top("1e999")), "p.json:1:9: number overflow parsing '1e999'");
  for (int abi = 1; abi <= 7; ++abi) {
    auto p = Json(top(std::to_string(abi)));
    ASSERT_TRUE(p.has_value()) << p.error();
    EXPECT_EQ(p->abi, abi);
    EXPECT_EQ(p->handled_fs, RightsForAbi(abi).fs);
  }
  // Above the newest ABI known: clamped to it.
  for (std::string_view big : {"8", "100", "2147483647"}) {
    auto p = Json(top(big));
    ASSERT_TRUE(p.has_value()) << p.error();
    EXPECT_EQ(p->abi, kAbiLatest);
  }
  // abi alone is no policy; nor is an empty object.
  EXPECT_EQ(JsonError(R"({"abi": 1})"),
            "p.json:1:1: /: a policy needs at least one of \"variable\", \"ruleset\", "
            "\"pathBeneath\", \"netPort\"");
  EXPECT_THAT(JsonError("{}"), HasSubstr("a policy needs at least one of"));
  EXPECT_THAT(TomlError(""), HasSubstr("p.toml:1:1: a policy needs at least one of"));
  EXPECT_EQ(JsonError(R"({"abi": 1, "abi": 2, "ruleset": [{"scoped": ["signal"]}]})"),
            "p.json:1:12: /abi: duplicate key \"abi\"");
}

TEST(PolicyParse, GroupsNeedAbi) {
  EXPECT_EQ(JsonError(R"({"ruleset": [{"handledAccessFs": ["execute", "abi.all"]}]})"),
            "p.json:1:46: /ruleset/0/handledAccessFs/1: \"abi.all\" needs the top-level \"abi\" "
            "(variable 'abi' not found)");
  EXPECT_THAT(JsonError(R"({"netPort": [{"allowedAccess": ["abi.all"], "port": [1]}]})"),
              HasSubstr("\"abi.all\" needs the top-level \"abi\""));
  EXPECT_THAT(TomlError("[[ruleset]]\nscoped = [\"abi.all\"]\n"),
              HasSubstr("p.toml:2:11: \"abi.all\" needs the top-level \"abi\""));
  // No abi with explicit names is fine.
  auto p = Json(R"({"ruleset": [{"handledAccessFs": ["execute"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->abi, std::nullopt);
}

TEST(PolicyParse, GroupsPerAbi) {
  auto fs = [](int abi, std::string_view group) {
    auto p = Json(R"({"abi": )" + std::to_string(abi) + R"(, "ruleset": [{"handledAccessFs": [")" +
                  std::string(group) + R"("]}]})");
    EXPECT_TRUE(p.has_value()) << p.error();
    return p ? p->handled_fs : 0;
  };
  EXPECT_EQ(fs(1, "abi.read_execute"), kRx);
  EXPECT_EQ(fs(2, "abi.read_execute"), kRx | kFsRefer);
  EXPECT_EQ(fs(7, "abi.read_execute"), kRx | kFsRefer);
  EXPECT_EQ(fs(1, "abi.read_write"), ((1u << 13) - 1) & ~kFsExecute);
  EXPECT_EQ(fs(2, "abi.read_write"), (((1u << 13) - 1) & ~kFsExecute) | kFsRefer);
  EXPECT_EQ(fs(4, "abi.read_write"), RightsForAbi(4).fs & ~kFsExecute);
  EXPECT_EQ(fs(4, "abi.read_write") & kFsTruncate, kFsTruncate);
  EXPECT_EQ(fs(5, "abi.all"), kFsAll);
  EXPECT_EQ(fs(3, "abi.all"), kFsAll & ~kFsIoctlDev);
  auto net = [](int abi) {
    auto p = Json(R"({"abi": )" + std::to_string(abi) +
                  R"(, "ruleset": [{"handledAccessNet": ["abi.all"], "scoped": ["abi.all"]}]})");
    EXPECT_TRUE(p.has_value()) << p.error();
    return p ? std::pair{p->handled_net, p->scoped} : std::pair{0u, 0u};
  };
  EXPECT_EQ(net(3), std::pair(0u, 0u));
  EXPECT_EQ(net(4), std::pair(kNetAll, 0u));
  EXPECT_EQ(net(5), std::pair(kNetAll, 0u));
  EXPECT_EQ(net(6), std::pair(kNetAll, kScopeAll));
}

TEST(PolicyParse, EmptyAccessRulesAreDropped) {
  // net abi.all is empty below ABI 4: the port rule goes.
  for (int abi = 1; abi <= 7; ++abi) {
    auto p = Json(R"({"abi": )" + std::to_string(abi) +
                  R"(, "netPort": [{"allowedAccess": ["abi.all"], "port": [80]}]})");
    ASSERT_TRUE(p.has_value()) << p.error();
    EXPECT_EQ(p->ports.size(), abi >= 4 ? 1u : 0u) << abi;
  }
}

TEST(PolicyParse, HandledRightsFollowTheRules) {
  auto p = Json(R"({"ruleset": [{"handledAccessFs": ["execute"]}],
    "pathBeneath": [{"allowedAccess": ["read_file"], "parent": ["/a"]}],
    "netPort": [{"allowedAccess": ["connect_tcp"], "port": [1]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->handled_fs, kFsExecute | kFsReadFile);
  EXPECT_EQ(p->handled_net, kNetConnectTcp);
  // Rules alone are a policy.
  auto q = Json(R"({"pathBeneath": [{"allowedAccess": ["read_dir"], "parent": ["/a"]}]})");
  ASSERT_TRUE(q.has_value()) << q.error();
  EXPECT_EQ(q->handled_fs, kFsReadDir);
}

TEST(PolicyParse, RightNames) {
  // Every name, in any order, duplicates fine.
  std::string all;
  for (int b = kNumFsRights - 1; b >= 0; --b) all += "\"" + std::string(FsRightName(b)) + "\", ";
  auto p = Json(R"({"ruleset": [{"handledAccessFs": [)" + all + R"("execute"],
      "handledAccessNet": ["connect_tcp", "bind_tcp", "bind_tcp"],
      "scoped": ["signal", "abstract_unix_socket"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->handled_fs, kFsAll);
  EXPECT_EQ(p->handled_net, kNetAll);
  EXPECT_EQ(p->scoped, kScopeAll);
  EXPECT_EQ(JsonError(R"({"ruleset": [{"handledAccessFs": ["foo"]}]})"),
            "p.json:1:35: /ruleset/0/handledAccessFs/0: unknown filesystem right \"foo\" in "
            "\"handledAccessFs\"");
  EXPECT_THAT(JsonError(R"({"ruleset": [{"handledAccessFs": ["bind_tcp"]}]})"),
              HasSubstr("unknown filesystem right \"bind_tcp\""));
  EXPECT_THAT(JsonError(R"({"ruleset": [{"handledAccessNet": ["execute"]}]})"),
              HasSubstr("unknown network right \"execute\" in \"handledAccessNet\""));
  EXPECT_THAT(JsonError(R"({"ruleset": [{"scoped": ["bind_tcp"]}]})"),
              HasSubstr("unknown scope \"bind_tcp\" in \"scoped\""));
  EXPECT_THAT(JsonError(R"({"abi": 5, "ruleset": [{"handledAccessFs": ["v5.all"]}]})"),
              HasSubstr("unknown filesystem right \"v5.all\""));
  EXPECT_THAT(JsonError(R"({"abi": 5, "ruleset": [{"handledAccessNet": ["abi.read_write"]}]})"),
              HasSubstr("unknown network right \"abi.read_write\""));
  EXPECT_THAT(JsonError(R"({"ruleset": [{"handledAccessFs": [3]}]})"),
              HasSubstr("p.json:1:35: /ruleset/0/handledAccessFs/0: \"handledAccessFs\" must hold "
                        "right names, not an integer"));
}

TEST(PolicyParse, EmptyArraysAndObjects) {
  EXPECT_EQ(JsonError(R"({"ruleset": []})"),
            "p.json:1:13: /ruleset: \"ruleset\" must not be empty");
  EXPECT_EQ(JsonError(R"({"ruleset": [{}]})"), "p.json:1:14: /ruleset/0: empty ruleset");
  EXPECT_THAT(JsonError(R"({"variable": []})"), HasSubstr("\"variable\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": []})"), HasSubstr("\"pathBeneath\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"netPort": []})"), HasSubstr("\"netPort\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"ruleset": [{"handledAccessFs": []}]})"),
              HasSubstr("p.json:1:34: /ruleset/0/handledAccessFs: \"handledAccessFs\" must not "
                        "be empty"));
  EXPECT_THAT(JsonError(R"({"ruleset": [{"scoped": []}]})"), HasSubstr("\"scoped\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": [], "parent": ["/"]}]})"),
              HasSubstr("\"allowedAccess\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": []}]})"),
              HasSubstr("\"parent\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": []}]})"),
              HasSubstr("\"port\" must not be empty"));
  EXPECT_THAT(JsonError(R"({"variable": [{"name": "a", "literal": []}]})"),
              HasSubstr("\"literal\" must not be empty"));
  EXPECT_THAT(TomlError("ruleset = []\n"), HasSubstr("p.toml:1:11: \"ruleset\" must not be empty"));
  EXPECT_THAT(TomlError("[[ruleset]]\n"), HasSubstr("p.toml:1:1: empty ruleset"));
}

TEST(PolicyParse, UnknownAndMissingKeys) {
  EXPECT_EQ(JsonError(R"({"ruleset": [{"scoped": ["signal"]}], "foo": []})"),
            "p.json:1:39: /foo: unknown key \"foo\" in the policy");
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["/"],)"
                        R"( "nofollow": true}]})"),
              HasSubstr("unknown key \"nofollow\" in a \"pathBeneath\" entry"));
  EXPECT_THAT(JsonError(R"({"variable": [{"name": "a", "value": ["x"]}]})"),
              HasSubstr("unknown key \"value\" in a variable"));
  EXPECT_EQ(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"]}]})"),
            "p.json:1:18: /pathBeneath/0: a \"pathBeneath\" entry needs \"parent\"");
  EXPECT_THAT(JsonError(R"({"netPort": [{"port": [1]}]})"),
              HasSubstr("a \"netPort\" entry needs \"allowedAccess\""));
  EXPECT_THAT(JsonError(R"({"variable": [{"literal": ["x"]}]})"),
              HasSubstr("a variable needs \"name\""));
  EXPECT_THAT(JsonError(R"([1])"), HasSubstr("p.json:1:1: /: the policy must be a table"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": [2]}]})"),
              HasSubstr("\"parent\" must hold strings, not an integer"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": {"allowedAccess": ["execute"], "parent": ["/"]}})"),
              HasSubstr("\"pathBeneath\" must be an array, not a table"));
}

TEST(PolicyParse, Ports) {
  auto p = Json(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [0, 65535, 80]},
    {"allowedAccess": ["connect_tcp"], "port": [80]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  ASSERT_EQ(p->ports.size(), 3u);
  EXPECT_EQ(p->ports[0].port, 0u);
  EXPECT_EQ(p->ports[1].port, 80u);
  EXPECT_EQ(p->ports[1].access, kNetAll);  // merged
  EXPECT_EQ(p->ports[1].origins.size(), 2u);
  EXPECT_EQ(p->ports[2].port, 65535u);
  EXPECT_EQ(JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [65536]}]})"),
            "p.json:1:55: /netPort/0/port/0: port 65536 is out of range [0, 65535]");
  EXPECT_THAT(JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [-1]}]})"),
              HasSubstr("port -1 is out of range [0, 65535]"));
  EXPECT_THAT(
      JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [18446744073709551615]}]})"),
      HasSubstr("port 18446744073709551615 is out of range [0, 65535]"));
  EXPECT_THAT(
      JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [18446744073709551616]}]})"),
      HasSubstr("port 18446744073709551616 is out of range [0, 65535]"));
  EXPECT_THAT(JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": ["80"]}]})"),
              HasSubstr("\"port\" must hold integers, not a string"));
  EXPECT_THAT(JsonError(R"({"netPort": [{"allowedAccess": ["bind_tcp"], "port": [8.0]}]})"),
              HasSubstr("\"port\" must hold integers, not a float"));
  EXPECT_THAT(TomlError("[[net_port]]\nallowed_access = [\"bind_tcp\"]\nport = [70000]\n"),
              HasSubstr("p.toml:3:9: port 70000 is out of range [0, 65535]"));
}

TEST(PolicyParse, PathsMergeAfterNormalisation) {
  auto p = Json(R"({"pathBeneath": [
    {"allowedAccess": ["execute"], "parent": [".", "./", ".//", "/a/./b", "/a/////b/"]},
    {"allowedAccess": ["read_file"], "parent": ["/a/b", "/c/../c", "/c", "x/./y/", "./x/y"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(Paths(*p), (std::map<std::string, AccessMask>{{"/a/b", kFsExecute | kFsReadFile},
                                                          {"/c", kFsReadFile},
                                                          {"/c/../c", kFsReadFile},
                                                          {"/w", kFsExecute},
                                                          {"/w/x/y", kFsReadFile}}));
  EXPECT_EQ(p->paths[0].origins.size(), 3u);  // "/a/./b", "/a/////b/", "/a/b"
  // Without a cwd, relative paths stay as landlockconfig keys them; the
  // empty template names no path there (AnEmptyTemplateIsNoPath).
  auto q = Json(R"({"pathBeneath": [{"allowedAccess": ["execute"],
    "parent": [".", "./", "a/./b", "./a/b", "//", "/.", ""]}]})", "");
  ASSERT_TRUE(q.has_value()) << q.error();
  EXPECT_EQ(Paths(*q), (std::map<std::string, AccessMask>{{".", kFsExecute},
                                                          {"./a/b", kFsExecute},
                                                          {"/", kFsExecute},
                                                          {"a/b", kFsExecute}}));
}

TEST(PolicyNormalise, AsRustPathBuf) {
  using internal::NormalisePath;
  EXPECT_EQ(NormalisePath("/"), "/");
  EXPECT_EQ(NormalisePath("///"), "/");
  EXPECT_EQ(NormalisePath("/a//b/"), "/a/b");
  EXPECT_EQ(NormalisePath("/a/./b/."), "/a/b");
  EXPECT_EQ(NormalisePath("/a/../b"), "/a/../b");
  EXPECT_EQ(NormalisePath("/.."), "/..");
  EXPECT_EQ(NormalisePath("././a"), "./a");
  EXPECT_EQ(NormalisePath("a/."), "a");
  EXPECT_EQ(NormalisePath(".."), "..");
  EXPECT_EQ(NormalisePath(""), "");
}

TEST(PolicyVariables, CartesianProduct) {
  auto p = Json(R"({"variable": [{"name": "a", "literal": ["/y", "/x"]},
    {"name": "b", "literal": ["2", "1"]}, {"name": "a", "literal": ["/z"]}],
    "pathBeneath": [{"allowedAccess": ["execute"], "parent": ["${a}/${b}", "${b}${b}"]}]})", "");
  ASSERT_TRUE(p.has_value()) << p.error();
  std::vector<std::string> paths;
  for (const auto& r : p->paths) paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/x/1", "/x/2", "/y/1", "/y/2", "/z/1", "/z/2",
                                             "11", "12", "21", "22"}));
}

TEST(PolicyVariables, Escapes) {
  auto p = Json(R"({"variable": [{"name": "foo", "literal": ["bar", "$x"]}],
    "pathBeneath": [{"allowedAccess": ["execute"],
      "parent": ["/$$", "/$${foo}", "/$${${foo}", "/{${foo}", "/a$b", "/$", "/${foo}"]}]})", "");
  ASSERT_TRUE(p.has_value()) << p.error();
  std::vector<std::string> paths;
  for (const auto& r : p->paths) paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/$", "/$x", "/${$x", "/${bar", "/${foo}", "/a$b", "/bar",
                                             "/{$x", "/{bar"}));
}

TEST(PolicyVariables, Errors) {
  EXPECT_EQ(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["/a/${x"]}]})"),
            "p.json:1:60: /pathBeneath/0/parent/0: \"parent\" \"/a/${x\": unclosed variable "
            "reference starting at position 3");
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": [" ${0}"]}]})"),
              HasSubstr("invalid variable name at position 1: invalid first character in name "
                        "(must be ASCII alphabetic): 0"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["${a-b}"]}]})"),
              HasSubstr("invalid variable name at position 0: invalid character(s) in name (must "
                        "be ASCII alphanumeric or '_'): a-b"));
  EXPECT_THAT(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["  ${}"]}]})"),
              HasSubstr("invalid variable name at position 2: name cannot be empty"));
  EXPECT_EQ(JsonError(R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["/${bar}"]}]})"),
            "p.json:1:60: \"parent\" \"/${bar}\": variable \"bar\" not found");
  EXPECT_THAT(JsonError(R"({"variable": [{"name": "9a"}]})"),
              HasSubstr("p.json:1:24: /variable/0/name: invalid first character in name"));
  EXPECT_THAT(JsonError(R"({"variable": [{"name": "a", "literal": [1]}]})"),
              HasSubstr("\"literal\" must hold strings, not an integer"));
}

TEST(PolicyVariables, WithoutLiteralExpandsToNothing) {
  auto p = Json(R"({"variable": [{"name": "empty"}],
    "pathBeneath": [{"allowedAccess": ["execute"], "parent": ["/${empty}", "/b"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  ASSERT_EQ(p->paths.size(), 1u);
  EXPECT_EQ(p->paths[0].path, "/b");
  EXPECT_EQ(p->handled_fs, kFsExecute);
  auto q = Json(R"({"variable": [{"name": "x"}]})");
  ASSERT_TRUE(q.has_value()) << q.error();
  EXPECT_TRUE(q->paths.empty());
}

// landlockconfig expands an empty template to no path (an empty
// product: variable.rs VecStringIterator), its rights still handled; a
// variable whose value is "" still names the path "".
TEST(PolicyVariables, AnEmptyTemplateIsNoPath) {
  auto p = Json(R"({"ruleset": [{"handledAccessFs": ["read_file", "write_file"]}],
    "pathBeneath": [{"allowedAccess": ["read_file"], "parent": ["", "/usr"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  ASSERT_EQ(p->paths.size(), 1u);
  EXPECT_EQ(p->paths[0].path, "/usr");
  EXPECT_EQ(p->handled_fs, kFsReadFile | kFsWriteFile);
  auto only = Json(R"({"ruleset": [{"handledAccessFs": ["read_file"]}],
    "pathBeneath": [{"allowedAccess": ["read_file"], "parent": [""]}]})");
  ASSERT_TRUE(only.has_value()) << only.error();
  EXPECT_TRUE(only->paths.empty());
  EXPECT_EQ(only->handled_fs, kFsReadFile);
  auto var = Json(R"({"variable": [{"name": "v", "literal": [""]}],
    "pathBeneath": [{"allowedAccess": ["execute"], "parent": ["${v}"]}]})");
  ASSERT_TRUE(var.has_value()) << var.error();
  ASSERT_EQ(var->paths.size(), 1u);
  EXPECT_EQ(var->paths[0].path, "");
}

// The Cartesian product is bounded before it is made: twelve references
// to two 4-value variables (4^12 paths) took 53 s and 5.7 GB, sixteen
// would fill any memory (tests/hostile/).
TEST(PolicyVariables, ExpansionIsBounded) {
  const std::string vars =
      "abi = 1\n[[variable]]\nname = \"a\"\nliteral = [\"/a\", \"/b\", \"/c\", \"/d\"]\n"
      "[[ruleset]]\nhandled_access_fs = [\"read_file\"]\n"
      "[[path_beneath]]\nallowed_access = [\"read_file\"]\n";
  std::string refs;
  for (int i = 0; i < 8; ++i) refs += "${a}";  // 4^8 = 65,536: the limit
  auto at = Toml(vars + "parent = [\"" + refs + "\"]\n");
  ASSERT_TRUE(at.has_value()) << at.error();
  EXPECT_EQ(at->paths.size(), 65536u);
  refs += "${a}";  // 4^9
  auto over = Toml(vars + "parent = [\"" + refs + "\"]\n");
  ASSERT_FALSE(over.has_value());
  EXPECT_THAT(over.error(), HasSubstr("p.toml:9:11: \"parent\" \"" + refs +
                                      "\": the variables expand to more than 65536 paths or "
                                      "67108864 bytes in the policy"));
  // Sixty-four references (4^64 overflows 64 bits): refused, not wrapped.
  std::string many;
  for (int i = 0; i < 64; ++i) many += "${a}";
  auto huge = Toml(vars + "parent = [\"" + many + "\"]\n");
  ASSERT_FALSE(huge.has_value());
  EXPECT_THAT(huge.error(), HasSubstr("expand to more than 65536 paths"));
  // Two parents under the limit each but not together.
  auto two = Toml(vars + "parent = [\"" + refs.substr(4) + "\", \"/x" + refs.substr(4) + "\"]\n");
  ASSERT_FALSE(two.has_value());
  EXPECT_THAT(two.error(), HasSubstr("expand to more than 65536 paths"));
}

// ---- Directories: composition ----

class PolicyDir : public base_testing::ScratchDirTest {
 protected:
  void Write(const std::string& name, std::string_view text) {
    ASSERT_TRUE(scratch_.Write(name, text)) << name;
  }
};

TEST_F(PolicyDir, ComposesAsLandlockconfig) {
  Write("a.json", R"({"abi": 6, "variable": [{"name": "v", "literal": ["/v"]}],
    "ruleset": [{"handledAccessFs": ["execute", "read_file", "write_file"],
                 "handledAccessNet": ["bind_tcp"], "scoped": ["signal", "abstract_unix_socket"]}],
    "pathBeneath": [{"allowedAccess": ["execute", "write_file"], "parent": ["/common", "/a"]},
                    {"allowedAccess": ["write_file"], "parent": ["/w"]}],
    "netPort": [{"allowedAccess": ["bind_tcp"], "port": [1]}]})");
  Write("b.toml", R"(abi = 4
[[ruleset]]
handled_access_fs = ["execute", "read_file", "read_dir"]
scoped = ["signal"]
[[path_beneath]]
allowed_access = ["read_file", "execute"]
parent = ["/common", "${v}/x"]
)");
  Write(".hidden.json", R"({"ruleset": [{"handledAccessFs": ["execute"]}]})");
  Write("notes.txt", "not a policy");
  Write("bad.json.bak", "{");
  std::filesystem::create_directory(dir_ + "/sub.json");
  Write("sub.json/c.json", R"({"ruleset": [{"handledAccessFs": ["execute"]}]})");
  auto p = LoadPolicy(dir_, "/cwd");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->abi, 4);                                  // the minimum
  EXPECT_EQ(p->handled_fs, kFsExecute | kFsReadFile);    // intersected
  EXPECT_EQ(p->handled_net, 0u);
  EXPECT_EQ(p->scoped, kScopeSignal);
  // Downgraded to the common rights, empty ones dropped ("/w"), the
  // variable of one file serving the other.
  EXPECT_EQ(Paths(*p), (std::map<std::string, AccessMask>{{"/a", kFsExecute},
                                                          {"/common", kFsExecute | kFsReadFile},
                                                          {"/v/x", kFsExecute | kFsReadFile}}));
  EXPECT_TRUE(p->ports.empty());
  EXPECT_EQ(p->source, dir_);
  const auto& common = p->paths[1].origins;
  ASSERT_EQ(common.size(), 2u);
  EXPECT_EQ(common[0].file, dir_ + "/a.json");
  EXPECT_EQ(common[1], (Origin{dir_ + "/b.toml", 7, 11}));
}

TEST_F(PolicyDir, DifferentRulesetsComposeToNothing) {
  Write("a.json", R"({"ruleset": [{"handledAccessFs": ["execute"]}]})");
  Write("b.json", R"({"ruleset": [{"handledAccessNet": ["bind_tcp"]}]})");
  auto p = LoadPolicy(dir_, "/");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->handled_fs, 0u);
  EXPECT_EQ(p->handled_net, 0u);
  EXPECT_EQ(p->abi, std::nullopt);
}

TEST_F(PolicyDir, ErrorsOfEveryFileAndNoFiles) {
  auto none = LoadPolicy(dir_, "/");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error(), dir_ + ": no configuration file found (*.json, *.toml)");
  Write("a.json", R"({"ruleset": [{"handledAccessFs": ["nope"]}]})");
  Write("b.toml", "ruleset = 1\n");
  Write("c.json", R"({"ruleset": [{"handledAccessFs": ["execute"]}]})");
  auto p = LoadPolicy(dir_, "/");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), dir_ + "/a.json:1:35: /ruleset/0/handledAccessFs/0: unknown filesystem "
                              "right \"nope\" in \"handledAccessFs\"\n" +
                           dir_ + "/b.toml:1:11: \"ruleset\" must be an array, not an integer");
  // An undefined variable is one only after composing.
  std::filesystem::remove(dir_ + "/a.json");
  std::filesystem::remove(dir_ + "/b.toml");
  Write("d.json", R"({"pathBeneath": [{"allowedAccess": ["execute"], "parent": ["${late}"]}]})");
  EXPECT_THAT(LoadPolicy(dir_, "/").error(), HasSubstr("variable \"late\" not found"));
  Write("e.json", R"({"variable": [{"name": "late", "literal": ["/l"]}]})");
  auto q = LoadPolicy(dir_, "/");
  ASSERT_TRUE(q.has_value()) << q.error();
}

TEST_F(PolicyDir, FilesByName) {
  Write("p.toml", "[[ruleset]]\nscoped = [\"signal\"]\n");
  auto p = LoadPolicy(dir_ + "/p.toml", "/");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(p->scoped, kScopeSignal);
  EXPECT_THAT(LoadPolicy(dir_ + "/missing.json", "/").error(),
              HasSubstr("/missing.json: cannot read: No such file or directory"));
  Write("p.yaml", "x");
  EXPECT_THAT(LoadPolicy(dir_ + "/p.yaml", "/").error(),
              HasSubstr("p.yaml: a policy file is named *.json or *.toml"));
}

// ---- BuildLayer ----

TEST(PolicyBuild, AsLandlockconfigOnAHost) {
  auto p = Json(R"({"abi": 7, "ruleset": [{"handledAccessFs": ["abi.all"],
    "handledAccessNet": ["abi.all"], "scoped": ["abi.all"]}],
    "pathBeneath": [{"allowedAccess": ["abi.all"], "parent": ["/dir", "/file", "/missing"]},
                    {"allowedAccess": ["refer", "ioctl_dev"], "parent": ["/only-new"]},
                    {"allowedAccess": ["read_dir"], "parent": ["/file2"]}],
    "netPort": [{"allowedAccess": ["bind_tcp"], "port": [80]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  auto kind = [](const std::string& path) {
    if (path == "/dir" || path == "/only-new") return PathKind::kDirectory;
    if (path == "/file" || path == "/file2") return PathKind::kOther;
    return PathKind::kMissing;
  };
  HostLayer h = BuildLayer(*p, 7, kind);
  EXPECT_EQ(h.ruleset.handled_access_fs, kFsAll);
  EXPECT_EQ(h.ruleset.handled_access_net, kNetAll);
  EXPECT_EQ(h.ruleset.scoped, kScopeAll);
  ASSERT_EQ(h.ruleset.rules.size(), 4u);
  EXPECT_EQ(h.ruleset.rules[0].path, "/dir");
  EXPECT_EQ(h.ruleset.rules[0].allowed_access, kFsAll);
  EXPECT_EQ(h.ruleset.rules[1].path, "/file");
  EXPECT_EQ(h.ruleset.rules[1].allowed_access, kFsFileRights);
  EXPECT_EQ(h.ruleset.rules[2].path, "/only-new");
  EXPECT_EQ(h.ruleset.rules[3].type, kRuleNetPort);
  EXPECT_EQ(h.ruleset.rules[3].port, 80u);
  ASSERT_EQ(h.origins.size(), 4u);
  EXPECT_EQ(h.origins[0][0], (Origin{"p.json", 3, 63}));
  ASSERT_EQ(h.warnings.size(), 3u);
  EXPECT_THAT(h.warnings[0], HasSubstr("p.json:3:71: rule on \"/file\": not a directory, so only "
                                       "file rights apply: fs.read_dir,"));
  EXPECT_THAT(h.warnings[1], HasSubstr("rule on \"/file2\": not a directory, so only file rights "
                                       "apply: fs.read_dir dropped; skipped"));
  EXPECT_EQ(h.warnings[2], "p.json:3:80: rule on \"/missing\": no such file or directory; skipped");

  // On an ABI 1 kernel: clamped, the newer rights dropped.
  HostLayer old = BuildLayer(*p, 1, kind);
  EXPECT_EQ(old.ruleset.handled_access_fs, RightsForAbi(1).fs);
  EXPECT_EQ(old.ruleset.handled_access_net, 0u);
  EXPECT_EQ(old.ruleset.scoped, 0u);
  ASSERT_EQ(old.ruleset.rules.size(), 2u);  // /dir, /file; no /only-new, no port
  EXPECT_EQ(old.ruleset.rules[1].allowed_access,
            kFsExecute | kFsWriteFile | kFsReadFile);
  EXPECT_EQ(old.warnings[0], "p.json: policy ABI 7 is above the kernel's (1): clamped to 1");
  EXPECT_EQ(old.warnings[1],
            "p.json: handled rights unknown to ABI 1 dropped: fs.refer,fs.truncate,fs.ioctl_dev");
  EXPECT_EQ(old.warnings[2],
            "p.json: handled rights unknown to ABI 1 dropped: net.bind_tcp,net.connect_tcp");
  EXPECT_EQ(old.warnings[3],
            "p.json: scopes unknown to ABI 1 dropped: scope.abstract_unix_socket,scope.signal");
  EXPECT_THAT(old.warnings, ::testing::Contains(HasSubstr(
                                "rule on \"/only-new\": none of its rights (fs.refer,fs.ioctl_dev) "
                                "exists at ABI 1; skipped")));
  EXPECT_THAT(old.warnings,
              ::testing::Contains(HasSubstr("rule on port 80: none of its rights exists at ABI 1")));
}

// ---- Printing ----

TEST(PolicyPrint, JsonAsTheIssueShowsIt) {
  auto p = Json(R"({"abi": 5, "ruleset": [{"handledAccessFs": ["abi.read_execute"],
      "handledAccessNet": ["bind_tcp"]}],
    "pathBeneath": [{"allowedAccess": ["read_file", "execute"], "parent": ["/usr/", "/a$b"]}],
    "netPort": [{"allowedAccess": ["bind_tcp"], "port": [443, 22]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(ToJson(*p), R"({
  "abi": 5,
  "ruleset": [
    {
      "handledAccessFs": [
        "execute",
        "read_file",
        "read_dir",
        "refer"
      ],
      "handledAccessNet": [
        "bind_tcp"
      ]
    }
  ],
  "pathBeneath": [
    {
      "allowedAccess": [
        "execute",
        "read_file"
      ],
      "parent": [
        "/a$$b"
      ]
    },
    {
      "allowedAccess": [
        "execute",
        "read_file"
      ],
      "parent": [
        "/usr"
      ]
    }
  ],
  "netPort": [
    {
      "allowedAccess": [
        "bind_tcp"
      ],
      "port": [
        22
      ]
    },
    {
      "allowedAccess": [
        "bind_tcp"
      ],
      "port": [
        443
      ]
    }
  ]
}
)");
  EXPECT_EQ(ToToml(*p), R"(abi = 5

[[ruleset]]
handled_access_fs = ["execute", "read_file", "read_dir", "refer"]
handled_access_net = ["bind_tcp"]

[[path_beneath]]
allowed_access = ["execute", "read_file"]
parent = ["/a$$b"]

[[path_beneath]]
allowed_access = ["execute", "read_file"]
parent = ["/usr"]

[[net_port]]
allowed_access = ["bind_tcp"]
port = [22]

[[net_port]]
allowed_access = ["bind_tcp"]
port = [443]
)");
  EXPECT_EQ(ToText(*p), R"(policy p.json
abi 5
handled fs: execute read_file read_dir refer
handled net: bind_tcp
scoped: -
path /a$b: execute read_file  (p.json:3:85)
path /usr: execute read_file  (p.json:3:76)
port 22: bind_tcp  (p.json:4:63)
port 443: bind_tcp  (p.json:4:58)
)");
}

TEST(PolicyPrint, NullAbiAndEmptyListsLeftOut) {
  auto p = Json(R"({"ruleset": [{"scoped": ["signal"]}]})");
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ(ToJson(*p), "{\n  \"ruleset\": [\n    {\n      \"scoped\": [\n        \"signal\"\n"
                        "      ]\n    }\n  ]\n}\n");
  EXPECT_EQ(ToToml(*p), "\n[[ruleset]]\nscoped = [\"signal\"]\n");
}

// Print, read back: the same policy, over many policies.
TEST(PolicyPrint, RoundTrips) {
  std::vector<std::string> policies = {
      R"({"abi": 5, "ruleset": [{"handledAccessFs": ["abi.all"], "handledAccessNet": ["abi.all"],
         "scoped": ["abi.all"]}]})",
      R"({"abi": 99, "ruleset": [{"handledAccessFs": ["abi.all"], "scoped": ["abi.all"]}],
         "pathBeneath": [{"allowedAccess": ["abi.read_execute"], "parent": ["/usr", ".", "a/../b"]},
                         {"allowedAccess": ["abi.read_write"], "parent": ["/tmp", "/usr"]}]})",
      R"({"variable": [{"name": "h", "literal": ["/home", "/root", "/$x", "/we\"ird\\path",
           "/new\nline", "/tab\t", "/é", "/del\u007f"]}],
         "pathBeneath": [{"allowedAccess": ["read_file"], "parent": ["${h}/.cache/", "/$$"]}]})",
      R"({"netPort": [{"allowedAccess": ["bind_tcp", "connect_tcp"], "port": [0, 1, 65535]},
                      {"allowedAccess": ["connect_tcp"], "port": [443]}]})",
      R"({"abi": 3, "netPort": [{"allowedAccess": ["abi.all"], "port": [1]}]})",
      R"({"variable": [{"name": "x"}]})",
      R"({"abi": 1, "pathBeneath": [{"allowedAccess": ["abi.read_write"], "parent": [""]}]})",
  };
  for (int abi = 1; abi <= 7; ++abi)
    policies.push_back(R"({"abi": )" + std::to_string(abi) +
                       R"(, "ruleset": [{"handledAccessFs": ["abi.read_execute"]}],
         "pathBeneath": [{"allowedAccess": ["abi.all"], "parent": ["/", "/x//y/./"]}],
         "netPort": [{"allowedAccess": ["abi.all"], "port": [8080]}]})");
  // Every single right alone, as a rule.
  for (int b = 0; b < kNumFsRights; ++b)
    policies.push_back(R"({"pathBeneath": [{"allowedAccess": [")" + std::string(FsRightName(b)) +
                       R"("], "parent": ["/r"]}]})");
  for (const std::string& text : policies) {
    auto p = Json(text, "/cwd");
    ASSERT_TRUE(p.has_value()) << text << "\n" << p.error();
    const std::string json = ToJson(*p);
    auto j = Json(json, "/elsewhere");
    ASSERT_TRUE(j.has_value()) << json << "\n" << j.error();
    EXPECT_TRUE(SameRules(*p, *j)) << text << "\n" << json;
    const std::string toml = ToToml(*p);
    auto t = Toml(toml, "/elsewhere");
    ASSERT_TRUE(t.has_value()) << toml << "\n" << t.error();
    EXPECT_TRUE(SameRules(*p, *t)) << text << "\n" << toml;
    // And printing again is a fixed point.
    EXPECT_EQ(ToJson(*j), json);
    EXPECT_EQ(ToToml(*t), toml);
  }
}

// Random resolved policies (normalised absolute paths with awkward bytes,
// rights within the handled ones), printed both ways and read back.
TEST(PolicyPrint, RandomPoliciesRoundTrip) {
  uint64_t state = 20261201;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const std::string_view kComponents[] = {"usr", "a b", "$", "${x}", "$$", "é", "\\", "\"q\"",
                                          "..", "tab\t", "x.json", "-", "{}"};
  for (int n = 0; n < 300; ++n) {
    Policy p;
    p.source = "random";
    if (next() % 4) p.abi = static_cast<int>(next() % kAbiLatest) + 1;
    p.handled_fs = next() & kFsAll;
    p.handled_net = next() & kNetAll;
    p.scoped = next() & kScopeAll;
    std::map<std::string, AccessMask> paths;
    for (int i = static_cast<int>(next() % 6); i > 0; --i) {
      std::string path;
      for (int c = static_cast<int>(next() % 4); c >= 0; --c)
        path += "/" + std::string(kComponents[next() % std::size(kComponents)]);
      if (AccessMask a = next() & p.handled_fs) paths[path] |= a;
    }
    for (const auto& [path, a] : paths) p.paths.push_back(PathRule{path, a, {}});
    std::map<uint64_t, AccessMask> ports;
    for (int i = static_cast<int>(next() % 4); i > 0; --i)
      if (AccessMask a = next() & p.handled_net) ports[next() % 65536] |= a;
    for (const auto& [port, a] : ports) p.ports.push_back(PortRule{port, a, {}});
    const std::string json = ToJson(p);
    auto j = Json(json);
    ASSERT_TRUE(j.has_value()) << json << "\n" << j.error();
    EXPECT_TRUE(SameRules(p, *j)) << json;
    const std::string toml = ToToml(p);
    auto t = Toml(toml);
    ASSERT_TRUE(t.has_value()) << toml << "\n" << t.error();
    EXPECT_TRUE(SameRules(p, *t)) << toml;
  }
}

}  // namespace
}  // namespace pathwarden::policy
