// The query grammar: what each line asks, and every refusal with its
// column.

#include "src/query/query.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pathwarden/uapi.h"
#include "src/input/text_quote.h"
#include "src/query/explain.h"

namespace pathwarden::query {
namespace {

TEST(Tokenize, QuotesEscapesAndColumns) {
  auto t = Tokenize("open  \"/a b/\\\"c\\\"\" O_RDONLY\t\"x\\ty\"");
  ASSERT_TRUE(t) << t.error();
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[0].text, "open");
  EXPECT_EQ((*t)[1].text, "/a b/\"c\"");
  EXPECT_EQ((*t)[1].col, 7u);
  EXPECT_EQ((*t)[2].text, "O_RDONLY");
  EXPECT_EQ((*t)[3].text, "x\ty");
  EXPECT_EQ(Tokenize("stat \"/a").error(), "6: a quote that is not closed");
  EXPECT_EQ(Tokenize("stat \"/a\\q\"").error(),
            "9: unknown escape \\q (\\\" \\\\ \\a \\b \\t \\n \\v \\f \\r \\ooo)");
  EXPECT_EQ(Tokenize(std::string_view("stat /a\0b", 9)).error(), "8: a NUL byte");
  EXPECT_EQ(Tokenize("stat a\"b\"").error(), "7: a quote inside a token (quote the whole token)");
  EXPECT_EQ(Tokenize("stat \"a\"b").error(), "9: a closing quote must end the token");
}

TEST(Tokenize, CEscapesAndOctalBytes) {
  auto t = Tokenize(R"(stat "\a\b\t\n\v\f\r" "\033[2J" "\377\1x" "\1234")");
  ASSERT_TRUE(t) << t.error();
  ASSERT_EQ(t->size(), 5u);
  EXPECT_EQ((*t)[1].text, "\a\b\t\n\v\f\r");
  EXPECT_EQ((*t)[2].text, "\x1b[2J");
  EXPECT_EQ((*t)[3].text, "\xff\x01x");  // one to three digits, as C reads them
  EXPECT_EQ((*t)[4].text, "S4");
  EXPECT_EQ(Tokenize(R"(stat "a\000b")").error(), "8: a NUL byte");
  EXPECT_EQ(Tokenize(R"(stat "a\0")").error(), "8: a NUL byte");
  EXPECT_EQ(Tokenize(R"(stat "a\400")").error(), "8: \\400 is not a byte");
  // Outside quotes a backslash is itself.
  EXPECT_EQ(Tokenize(R"(stat a\n)")->at(1).text, "a\\n");
}

// What explain prints a name as reads back as that name: a query line
// made of printed names asks about the same bytes.
TEST(Tokenize, ReadsBackPrintedNames) {
  const std::string names[] = {"/tmp/a\nb", "\x1b[2Jevil\nfake  line", "x\xff\xfey", "a b",
                               "q\"uote", "back\\slash", "c1\xc2\x9b", "", "/plain",
                               std::string("\x01\x7f\r\t", 4)};
  for (const std::string& n : names) {
    auto t = Tokenize("stat " + input::QuoteName(n));
    ASSERT_TRUE(t) << input::QuoteName(n) << ": " << t.error();
    ASSERT_EQ(t->size(), 2u) << input::QuoteName(n);
    EXPECT_EQ((*t)[1].text, n) << input::QuoteName(n);
  }
}

TEST(ParseQuery, XattrOperations) {
  auto q = ParseQueryLine("getxattr /etc/passwd user.a AT_SYMLINK_NOFOLLOW");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Getxattr>(q->request).name, "user.a");
  EXPECT_EQ(std::get<Getxattr>(q->request).flags, static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW));
  EXPECT_TRUE(q->read_only);
  q = ParseQueryLine("setxattr /tmp/x user.a \"a value\"");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Setxattr>(q->request).value, "a value");
  EXPECT_FALSE(q->read_only);
  q = ParseQueryLine("listxattr /tmp/x");
  ASSERT_TRUE(q) << q.error();
  EXPECT_TRUE(q->read_only);
  q = ParseQueryLine("removexattr /tmp/x trusted.t");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Removexattr>(q->request).name, "trusted.t");
  EXPECT_FALSE(ParseQueryLine("getxattr /tmp/x"));
}

TEST(ParseQuery, EachOperation) {
  auto q = ParseQueryLine("open /tmp/x O_WRONLY|O_CREAT 0600");
  ASSERT_TRUE(q) << q.error();
  auto* open = std::get_if<Open>(&q->request);
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->path, "/tmp/x");
  EXPECT_EQ(open->flags, static_cast<uint64_t>(O_WRONLY | O_CREAT));
  EXPECT_EQ(open->mode, 0600u);
  EXPECT_FALSE(q->read_only);
  // Flags anywhere after PATH; the default O_RDONLY.
  q = ParseQueryLine("open /etc/passwd");
  ASSERT_TRUE(q);
  EXPECT_EQ(std::get<Open>(q->request).flags, 0u);
  EXPECT_TRUE(q->read_only);
  q = ParseQueryLine("open /tmp/y 0640 O_CREAT|O_EXCL");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Open>(q->request).mode, 0640u);
  q = ParseQueryLine("access /usr/bin/env X_OK|R_OK");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Access>(q->request).mode, static_cast<uint32_t>(X_OK | R_OK));
  q = ParseQueryLine("access /x W_OK|AT_EACCESS");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Access>(q->request).flags, static_cast<uint64_t>(AT_EACCESS));
  q = ParseQueryLine("rename /a /b RENAME_NOREPLACE");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Rename>(q->request).newpath, "/b");
  EXPECT_EQ(q->path2, "/b");
  q = ParseQueryLine("mknod /tmp/f fifo 0600");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Mknod>(q->request).type, static_cast<uint32_t>(S_IFIFO));
  q = ParseQueryLine("chown /tmp/f -1:100");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Chown>(q->request).uid, -1);
  EXPECT_EQ(std::get<Chown>(q->request).gid, 100);
  q = ParseQueryLine("symlink /tmp/l ../target");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<Symlink>(q->request).target, "../target");
  q = ParseQueryLine("mount_setattr /mnt MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOSUID AT_RECURSIVE 0");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<MountSetattr>(q->request).attr_set, kMountAttrRdonly | kMountAttrNosuid);
  EXPECT_EQ(std::get<MountSetattr>(q->request).attr_clr, 0u);
  EXPECT_EQ(std::get<MountSetattr>(q->request).flags, kAtRecursive);
  EXPECT_FALSE(q->read_only);
  q = ParseQueryLine("mount_setattr /mnt 0 MOUNT_ATTR_NOEXEC");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<MountSetattr>(q->request).attr_set, 0u);
  EXPECT_EQ(std::get<MountSetattr>(q->request).attr_clr, kMountAttrNoexec);
  q = ParseQueryLine("connect_tcp 443");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<ConnectTcp>(q->request).port, 443u);
  for (const char* line : {"stat /", "lstat /x", "readlink /x", "chdir /", "exec_check /bin/sh"}) {
    q = ParseQueryLine(line);
    ASSERT_TRUE(q) << line;
    EXPECT_TRUE(q->read_only) << line;
  }
  for (const char* line : {"mkdir /x", "unlink /x", "rmdir /x", "truncate /x", "chmod /x 0755",
                           "link /a /b AT_SYMLINK_FOLLOW", "lchown /x 0:0", "bind_tcp 0"}) {
    q = ParseQueryLine(line);
    ASSERT_TRUE(q) << line << ": " << q.error();
    EXPECT_FALSE(q->read_only) << line;
  }
}

TEST(ParseQuery, Refusals) {
  struct Case {
    const char* line;
    const char* error;
  } cases[] = {
      {"", "1: no operation"},
      {"frobnicate /x", "1: unknown operation \"frobnicate\""},
      {"stat", "5: stat takes PATH"},
      {"stat /a /b", "9: an argument too many: \"/b\" (stat takes PATH)"},
      {"open /a O_BOGUS", "9: \"O_BOGUS\" is neither open flags"},
      {"open /a O_RDONLY O_RDONLY", "18: flags given twice"},
      {"mkdir /a 0999", "10: \"0999\" is not an octal mode"},
      {"chmod /a", "9: chmod takes PATH MODE"},
      {"chown /a 1000", "10: \"1000\" is not UID:GID"},
      {"chown /a 4294967295:0", "10: \"4294967295:0\" is not UID:GID"},
      {"mknod /a char", "10: \"char\" is not file, fifo or socket"},
      {"bind_tcp 65536", "10: \"65536\" is not a port (0 to 65535)"},
      {"connect_tcp -1", "13: \"-1\" is not a port"},
      {"access /x R_OK|O_CREAT", "11: an argument too many"},
      {"mount_setattr /m", "17: mount_setattr takes PATH ATTRS [ATTRS]"},
      {"mount_setattr /m MOUNT_ATTR_BOGUS", "18: \"MOUNT_ATTR_BOGUS\" is not MOUNT_ATTR_* names"},
      {"mount_setattr /m 0 0 0", "22: an argument too many"},
      {"close 3", "1: unknown operation \"close\" (one of open, stat, "},
  };
  for (const Case& c : cases) {
    auto q = ParseQueryLine(c.line);
    ASSERT_FALSE(q) << c.line;
    EXPECT_TRUE(q.error().starts_with(c.error)) << c.line << "\n  gave: " << q.error();
  }
}

// explain --help lists Grammar(): every flag it names parses in its place,
// and every operation the parser knows has a form there.
TEST(Grammar, EveryListedFormAndFlagParses) {
  std::set<std::string> ops;
  size_t flags_seen = 0;
  for (const std::string& line : Grammar()) {
    std::istringstream words(line.substr(0, line.find("  (")));
    std::string names, w;
    words >> names;
    std::vector<std::string> fixed, slot;
    while (words >> w) {
      if (w == "PATH" || w == "PATH2" || w == "TARGET") {
        fixed.push_back("/x");
      } else if (w == "NAME") {
        fixed.push_back("user.x");
      } else if (w == "MODE") {
        fixed.push_back("0644");
      } else if (w == "UID:GID") {
        fixed.push_back("0:0");
      } else if (w == "PORT") {
        fixed.push_back("80");
      } else if (w == "file|fifo|socket") {
        fixed.push_back("file");
      } else if (w == "ATTRS") {
        fixed.push_back("MOUNT_ATTR_RDONLY");
      } else if (w == "[MODE]" || w == "[VALUE]" || w == "[ATTRS]") {
      } else {
        ASSERT_TRUE(w.starts_with("[") && w.ends_with("]")) << line;
        std::istringstream f(w.substr(1, w.size() - 2));
        for (std::string flag; std::getline(f, flag, '|');) slot.push_back(flag);
      }
    }
    std::istringstream each(names);
    for (std::string op; std::getline(each, op, '|');) {
      ops.insert(op);
      std::string base = op;
      for (const std::string& a : fixed) base += " " + a;
      auto q = ParseQueryLine(base);
      EXPECT_TRUE(q) << base << ": " << q.error();
      for (const std::string& flag : slot) {
        q = ParseQueryLine(base + " " + flag);
        EXPECT_TRUE(q) << base << " " << flag << ": " << q.error();
        ++flags_seen;
      }
    }
  }
  for (const char* op : {"open", "stat", "lstat", "readlink", "chdir", "exec_check", "access",
                         "mkdir", "mknod", "symlink", "link", "rename", "unlink", "rmdir",
                         "truncate", "chmod", "chown", "lchown", "getxattr", "listxattr",
                         "setxattr", "removexattr", "bind_tcp", "connect_tcp", "mount_setattr"})
    EXPECT_TRUE(ops.contains(op)) << op;
  EXPECT_GT(flags_seen, 40u);
  // The flags the audit found missing from the help.
  bool access = false;
  for (const std::string& line : Grammar())
    access |= line.starts_with("access PATH [F_OK|R_OK|W_OK|X_OK|AT_EACCESS|AT_SYMLINK_NOFOLLOW");
  EXPECT_TRUE(access);
}

// ResultLines: each line is ResultName() and a newline, for every errno
// (the table's and beyond it), unknown, and in colour.
TEST(ResultLines, EachLineIsTheResultName) {
  using pathwarden::Verdict;
  std::vector<Decision> all = {Decision(Verdict::kUnknown, -1), Decision(Verdict::kAllowed, 0)};
  for (int e = 1; e < 4200; ++e) all.push_back(Decision(Verdict::kDenied, e));
  // Inconsistent, and still named as ResultName() names it.
  all.push_back(Decision(Verdict::kDenied, -7));
  std::string want, want_colour;
  for (const Decision& d : all) {
    want += ResultName(d) + "\n";
    const char* c = d.allowed() ? ansi::kGreen : d.unknown() ? ansi::kYellow : ansi::kRed;
    want_colour += Paint(true, c, ResultName(d)) + "\n";
  }
  ResultLines plain, colour(true);
  for (const Decision& d : all) {
    plain.Add(d);
    colour.Add(d);
  }
  EXPECT_EQ(plain.text(), want);
  EXPECT_EQ(colour.text(), want_colour);
  EXPECT_EQ(want.substr(0, 11), "unknown\nok\n");
  plain.clear();
  EXPECT_EQ(plain.text(), "");
  plain.Add(Decision(Verdict::kDenied, EACCES));
  EXPECT_EQ(plain.text(), "EACCES\n");
}

}  // namespace
}  // namespace pathwarden::query
