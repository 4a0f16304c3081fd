// Scenario parsing: every rule of the format that can be wrong is reported
// with file:line:col and nothing else.

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "pathwarden/acl.h"

#include "pathwarden/scenario.h"

namespace pathwarden {
namespace {

Result<Scenario, std::string> Toml(std::string_view text) {
  return ParseScenario(text, "t.toml", false);
}

// The messages that list what a key takes, word for word (keys come in the
// document's order, which for TOML is sorted).
TEST(ScenarioParse, VocabularyErrorsSayWhatIsAccepted) {
  auto s = Toml(R"(format = 1
[[node]]
path = "/d"
type = "tmpfs"
mount_flags = ["ro", "rw"]
[[node]]
path = "/f"
attrs = ["sticky"]
[[step]]
op = "mknod"
path = "/x"
type = "tmpfs"
expect = "ok"
[[step]]
op = "utimensat"
path = "/f"
times = ["now", "later"]
expect = "ok"
[[step]]
op = "utimensat"
path = "/f"
times = ["now"]
expect = "ok"
[[step]]
op = "close"
fd = "a"
path = "/f"
times = ["now", "now"]
bogus = 1
expect = "ok"
)");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error(),
            "t.toml:5:15: unknown mount flag \"rw\"\n"
            "t.toml:8:9: unknown attribute \"sticky\" (immutable, append)\n"
            "t.toml:12:8: mknod type \"tmpfs\" is not file, fifo, socket, char, block or dir\n"
            "t.toml:17:9: \"times\": \"later\" is not now, omit or set\n"
            "t.toml:22:9: \"times\" holds two of \"now\", \"omit\", \"set\" (atime, mtime)\n"
            "t.toml:29:1: unknown key \"bogus\" in [[step]]\n"
            "t.toml:27:1: \"path\" does not apply to close\n"
            "t.toml:28:1: \"times\" does not apply to close");
}

TEST(ScenarioParse, SpecExampleParses) {
  auto s = Toml(R"(format = 1
description = "web"
[[node]]
path = "/srv/www"
type = "dir"
mode = 0o750
uid = 33
gid = 33
[[process]]
name = "web"
uid = 33
gid = 33
[[process.layer]]
handled_fs = ["read_file", "read_dir", "write_file"]
rule = [{ path = "/srv/www", access = ["read_file", "read_dir"] }]
[[step]]
as = "web"
op = "open"
path = "/srv/www/index.html"
flags = "O_WRONLY|O_CREAT"
expect = "EACCES"
)");
  ASSERT_TRUE(s.has_value()) << s.error();
  ASSERT_EQ(s->nodes.size(), 1u);
  EXPECT_EQ(*s->nodes[0].mode, 0750u);
  ASSERT_EQ(s->processes.size(), 1u);
  ASSERT_EQ(s->processes[0].layers.size(), 1u);
  EXPECT_EQ(s->processes[0].layers[0].rules.size(), 1u);
  ASSERT_EQ(s->steps.size(), 1u);
  EXPECT_EQ(s->steps[0].expect, EACCES);
  EXPECT_EQ(s->steps[0].flags, unsigned(O_WRONLY | O_CREAT));
  EXPECT_EQ(s->steps[0].mode, 0644u);
}

TEST(ScenarioParse, UnknownKeyNamesLineAndColumn) {
  auto s = Toml("format = 1\n[[node]]\npath = \"/a\"\nmodee = 0o644\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error(), "t.toml:4:1: unknown key \"modee\" in [[node]]");
}

TEST(ScenarioParse, UnknownFlagIsAnError) {
  auto s = Toml("format = 1\n[[step]]\nop = \"open\"\npath = \"/a\"\n"
                "flags = \"O_RDONLY|O_BOGUS\"\nexpect = \"ok\"\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("t.toml:5:9: flag O_BOGUS does not apply to open"),
            std::string::npos)
      << s.error();
}

// A process's user namespace: maps as uid_map takes them, its ids mapping,
// and a round trip through the writer.
TEST(ScenarioParse, UserNamespaceMapsAreCheckedWhereWritten) {
  auto ok = Toml("format = 1\n[[process]]\nname = \"p\"\nuid = 1000\ngid = 1000\n"
                 "userns = \"0:1000:1,1:100000:65536\"\nuserns_gids = \"0:1000:1\"\n");
  ASSERT_TRUE(ok.has_value()) << ok.error();
  EXPECT_EQ(ok->processes[0].userns_uids,
            (std::vector<IdRange>{{0, 1000, 1}, {1, 100000, 65536}}));
  EXPECT_EQ(ok->processes[0].EffectiveCaps(), kCapAll);  // root in it
  auto again = ParseScenario(ScenarioToToml(*ok), "w.toml", false);
  ASSERT_TRUE(again.has_value()) << again.error();
  EXPECT_EQ(again->processes[0].userns_gids, ok->processes[0].userns_gids);
  auto bad = Toml("format = 1\n[[process]]\nname = \"p\"\nuid = 5\n"
                  "userns = \"0:1000:1,3:1000:2\"\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(),
            "t.toml:5:10: \"userns\": range 2 \"3:1000:2\" at character 10: it overlaps "
            "0:1000:1 outside");
  auto unmapped = Toml("format = 1\n[[process]]\nname = \"p\"\nuid = 5\n"
                       "userns = \"0:1000:1\"\n");
  ASSERT_FALSE(unmapped.has_value());
  EXPECT_NE(unmapped.error().find("t.toml:4:7: uid 5 has no mapping in \"userns\""),
            std::string::npos)
      << unmapped.error();
  auto forked = Toml("format = 1\n[[process]]\nname = \"p\"\n[[process]]\nname = \"q\"\n"
                     "parent = \"p\"\nuserns = \"0:0:1\"\n");
  ASSERT_FALSE(forked.has_value());
  EXPECT_NE(forked.error().find("inherits \"userns\""), std::string::npos) << forked.error();
}

TEST(ScenarioParse, UndefinedProcessIsAnError) {
  auto s = Toml("format = 1\n[[step]]\nas = \"ghost\"\nop = \"stat\"\n"
                "path = \"/\"\nexpect = \"ok\"\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("no process named \"ghost\""), std::string::npos);
}

TEST(ScenarioParse, NodePathMustBeNormalised) {
  auto s = Toml("format = 1\n[[node]]\npath = \"/a//b\"\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("absolute and normalised"), std::string::npos);
}

TEST(ScenarioParse, JsonErrorsNamePositionAndKeyPath) {
  auto s = ParseScenario(
      R"({"format": 1, "step": [{"op": "open", "path": "/a", "flags": "O_X", "expect": "ok"}]})",
      "t.json", true);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("t.json:1:62: /step/0/flags: flag O_X"), std::string::npos)
      << s.error();
}

TEST(ScenarioParse, JsonAcceptsModeStrings) {
  auto s = ParseScenario(
      R"({"format": 1, "node": [{"path": "/a", "mode": "0o600"}]})", "t.json",
      true);
  ASSERT_TRUE(s.has_value()) << s.error();
  EXPECT_EQ(*s->nodes[0].mode, 0600u);
}

TEST(ScenarioParse, ParentProcessesInheritCredentials) {
  auto s = Toml("format = 1\n[[process]]\nname = \"a\"\nuid = 5\n"
                "[[process]]\nname = \"b\"\nparent = \"a\"\nuid = 6\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().find("inherits \"uid\""), std::string::npos);
}

TEST(ScenarioParse, TomlRoundTrip) {
  auto s = Toml(R"(format = 1
[sysctl]
protected_regular = 2
[[node]]
path = "/d"
type = "dir"
mode = 0o1777
default_acl = "u:7:rwx"
[[node]]
path = "/d/l"
type = "symlink"
target = "../x"
[[process]]
name = "p"
uid = 7
gid = 8
groups = [9]
caps = ["CAP_FOWNER"]
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/d", access = ["read_file"] }]
[[step]]
as = "p"
op = "rename"
path = "/d/l"
path2 = "/d/m"
flags = "RENAME_NOREPLACE"
expect = "EACCES"
[[step]]
op = "access"
path = "/d"
flags = "R_OK|W_OK|AT_EACCESS"
expect = "ok"
)");
  ASSERT_TRUE(s.has_value()) << s.error();
  std::string text = ScenarioToToml(*s);
  auto again = Toml(text);
  ASSERT_TRUE(again.has_value()) << again.error() << "\n" << text;
  EXPECT_EQ(ScenarioToToml(*again), text);
  EXPECT_EQ(again->sysctl.protected_regular, 2);
  EXPECT_EQ(again->steps[1].access_mode, unsigned(R_OK | W_OK));
  EXPECT_EQ(again->steps[1].flags, unsigned(AT_EACCESS));
}

TEST(ScenarioParse, KernelRulesAreNamedOrLeftToTheRunningKernel) {
  auto none = Toml("format = 1\n");
  ASSERT_TRUE(none.has_value()) << none.error();
  EXPECT_TRUE(none->kernel.Empty());
  EXPECT_EQ(ScenarioToToml(*none).find("[kernel]"), std::string::npos);
  for (const char* value : {"stored", "refused"}) {
    auto s = Toml(std::string("format = 1\n[kernel]\nempty_file_caps = \"") + value + "\"\n");
    ASSERT_TRUE(s.has_value()) << s.error();
    ASSERT_TRUE(s->kernel.named[0]);
    EXPECT_EQ(kKernelRuleFields[0].ValueName(s->kernel.rules), value);
    const std::string text = ScenarioToToml(*s);
    EXPECT_NE(text.find(std::string("[kernel]\nempty_file_caps = \"") + value + "\""),
              std::string::npos)
        << text;
    auto again = Toml(text);
    ASSERT_TRUE(again.has_value()) << again.error();
    EXPECT_EQ(again->kernel.rules, s->kernel.rules);
  }
  // "unknown" is what a probe may find, not what a kernel does.
  auto unknown = Toml("format = 1\n[kernel]\nempty_file_caps = \"unknown\"\n");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error(),
            "t.toml:3:19: \"empty_file_caps\" = \"unknown\": the rule is \"stored\" or \"refused\"");
  auto key = Toml("format = 1\n[kernel]\nempty_caps = \"stored\"\n");
  ASSERT_FALSE(key.has_value());
  EXPECT_EQ(key.error(), "t.toml:3:1: unknown key \"empty_caps\" in [kernel]");
  auto type = Toml("format = 1\n[kernel]\nempty_file_caps = 1\n");
  ASSERT_FALSE(type.has_value());
  EXPECT_NE(type.error().find("t.toml:3:19:"), std::string::npos) << type.error();
}

// The strict reader (src/input) under the scenario format: JSON errors
// have positions, duplicate keys and NUL bytes are errors, big numbers
// neither wrap nor abort.
Result<Scenario, std::string> Json(std::string_view text) {
  return ParseScenario(text, "t.json", true);
}

TEST(ScenarioParse, StrictReaderJson) {
  auto dup = Json(R"({"format": 1, "format": 1})");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error(), "t.json:1:15: /format: duplicate key \"format\"");
  auto nul = Json(R"({"format": 1, "node": [{"path": "/a\u0000b"}]})");
  ASSERT_FALSE(nul.has_value());
  EXPECT_EQ(nul.error(), "t.json:1:33: a string holds a NUL byte");
  auto big = Json(R"({"format": 1, "node": [{"path": "/a", "uid": 18446744073709551615}]})");
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error(),
            "t.json:1:46: /node/0/uid: \"uid\" = 18446744073709551615 is out of range [0, "
            "4294967294]");
  auto id = Json(R"({"format": 1, "node": [{"path": "/a", "gid": 4294967295}]})");
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error(),
            "t.json:1:46: /node/0/gid: \"gid\" = 4294967295 is out of range [0, 4294967294]");
  auto inf = Json(R"({"format": 1, "abi": 1e999})");
  ASSERT_FALSE(inf.has_value());
  EXPECT_EQ(inf.error(), "t.json:1:22: number overflow parsing '1e999'");
  auto mode = Json(R"({"format": 1, "node": [{"path": "/a", "mode": 99999999999999999999}]})");
  ASSERT_FALSE(mode.has_value());
  EXPECT_EQ(mode.error(), "t.json:1:47: /node/0/mode: \"mode\" = 99999999999999999999 is out of "
                          "range (at most 07777)");
  // A negative mode as written, not as {:#o} shows it ("-01").
  auto neg = Json(R"({"format": 1, "node": [{"path": "/a", "mode": -1}]})");
  ASSERT_FALSE(neg.has_value());
  EXPECT_EQ(neg.error(), "t.json:1:47: /node/0/mode: \"mode\" = -1 is out of range (at most 07777)");
  // rdev parts are digits within 12 and 20 bits: sscanf("%u") read
  // "4294967296:3" as major 0 and accepted it (tests/hostile/).
  auto dev = [](std::string_view rdev) {
    return std::string(R"({"format": 1, "node": [{"path": "/d", "type": "char", "rdev": ")") +
           std::string(rdev) + "\"}]}";
  };
  for (const char* bad : {"4294967296:3", "1:1048576", "4096:0", " 1:3", "1: 3", "+1:3", "-1:3",
                          "1:", ":3", "1:3x", "1:3:4"}) {
    auto r = Json(dev(bad));
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().find("is not major:minor"), std::string::npos) << r.error();
  }
  for (const char* good : {"1:3", "4095:1048575", "0:0"}) {
    auto r = Json(dev(good));
    EXPECT_TRUE(r.has_value()) << good << ": " << r.error();
  }
  auto port = Json(R"({"format": 1, "step": [{"op": "bind_tcp", "port": 65536, "expect": "ok"}]})");
  ASSERT_FALSE(port.has_value());
  EXPECT_NE(port.error().find("t.json:1:51: /step/0/port: \"port\" = 65536 is out of range [0, "
                              "65535]"),
            std::string::npos)
      << port.error();
  auto syntax = Json("{\"format\": 1,\n \"node\": [}");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_NE(syntax.error().find("t.json:2:11: parse error"), std::string::npos) << syntax.error();
  std::string deep = R"({"format": 1, "description": )" + std::string(1000, '[');
  auto nested = Json(deep);
  ASSERT_FALSE(nested.has_value());
  EXPECT_NE(nested.error().find("nesting deeper than 64 levels"), std::string::npos);
  // A long path is the kernel's ENAMETOOLONG to model, not an input error.
  auto longpath = Json(R"({"format": 1, "step": [{"op": "stat", "path": "/)" +
                       std::string(5000, 'a') + R"(", "expect": "ENAMETOOLONG"}]})");
  EXPECT_TRUE(longpath.has_value()) << longpath.error();
}

TEST(ScenarioParse, StrictReaderToml) {
  auto nul = Toml("format = 1\n[[node]]\npath = \"/a\\u0000\"\n");
  ASSERT_FALSE(nul.has_value());
  EXPECT_EQ(nul.error(), "t.toml:3:8: a string holds a NUL byte");
  auto dup = Toml("format = 1\nformat = 1\n");
  ASSERT_FALSE(dup.has_value());
  EXPECT_NE(dup.error().find("t.toml:2:"), std::string::npos) << dup.error();
  auto big = Toml("format = 1\n[[node]]\npath = \"/a\"\nuid = 4294967295\n");
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error(), "t.toml:4:7: \"uid\" = 4294967295 is out of range [0, 4294967294]");
}

// The xattr and fallocate keys: values as text, hex or ACL text (its
// xattr form), the flags, the fallocate range bound; and the round trip
// through the writer.
TEST(ScenarioParse, XattrAndFallocateKeys) {
  auto s = Toml(R"(format = 1
[[step]]
op = "setxattr"
path = "/f"
name = "user.a"
value = "v"
xattr_flags = "XATTR_CREATE|XATTR_REPLACE"
expect = "ok"
[[step]]
op = "setxattr"
path = "/f"
name = "security.capability"
value_hex = "0100000200"
expect = "EINVAL"
[[step]]
op = "setxattr"
path = "/f"
name = "system.posix_acl_access"
acl = "u::rw-,g::r--,o::---"
expect = "ok"
[[step]]
op = "fallocate"
fd = "x"
flags = "FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE"
offset = 9223372036854775807
len = 2
expect = "EFBIG"
)");
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->steps.size(), 4u);
  EXPECT_EQ(s->steps[0].xattr_value, "v");
  EXPECT_EQ(s->steps[0].xattr_flags, 3u);
  EXPECT_EQ(s->steps[1].xattr_value, std::string("\x01\0\0\x02\0", 5));
  EXPECT_EQ(s->steps[2].xattr_value,
            AclEntriesToXattr({{AclTag::kUserObj, 6, 0}, {AclTag::kGroupObj, 4, 0},
                               {AclTag::kOther, 0, 0}}));
  EXPECT_EQ(s->steps[3].flags, 3u);
  EXPECT_EQ(s->steps[3].offset, INT64_MAX);
  auto again = Toml(ScenarioToToml(*s));
  ASSERT_TRUE(again) << again.error();
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(again->steps[i].xattr_value, s->steps[i].xattr_value) << i;
    EXPECT_EQ(again->steps[i].xattr_flags, s->steps[i].xattr_flags) << i;
    EXPECT_EQ(again->steps[i].offset, s->steps[i].offset) << i;
    EXPECT_EQ(again->steps[i].len, s->steps[i].len) << i;
  }

  auto bad = Toml(R"(format = 1
[[step]]
op = "setxattr"
path = "/f"
name = "user.a"
acl = "u::rw-"
xattr_flags = "XATTR_NONE"
expect = "ok"
[[step]]
op = "setxattr"
path = "/f"
name = "user.a"
value_hex = "0g"
expect = "ok"
[[step]]
op = "fallocate"
fd = "x"
offset = 1048576
len = 1
expect = "ok"
)");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("\"acl\" is the value of system.posix_acl_access"), std::string::npos)
      << bad.error();
  EXPECT_NE(bad.error().find("XATTR_NONE is not XATTR_CREATE or XATTR_REPLACE"), std::string::npos);
  EXPECT_NE(bad.error().find("\"value_hex\" holds pairs of hex digits"), std::string::npos);
  EXPECT_NE(bad.error().find("fallocate: offset + len ends past 1048576"), std::string::npos);
}

}  // namespace
}  // namespace pathwarden
