// Scenario parsing: every rule of the format that can be wrong is reported
// with file:line:col and nothing else.

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace pathwarden
