#include "src/input/doc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"

namespace pathwarden::input {
namespace {

std::string JsonError(std::string_view text) {
  auto d = ParseJsonDoc(text, "t.json");
  EXPECT_FALSE(d.has_value());
  return d ? std::string() : d.error();
}
std::string TomlError(std::string_view text) {
  auto d = ParseTomlDoc(text, "t.toml");
  EXPECT_FALSE(d.has_value());
  return d ? std::string() : d.error();
}

// UTF-8 of one code point.
std::string Utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// Non-ASCII characters where the parser looks for blanks: toml++ 3.3's
// code point tests reached __builtin_unreachable() for U+00A1 to U+0499
// and others (found by the libFuzzer targets under UBSan; doc.cc).
// TOML has no non-ASCII blanks: each is an error at its place, for every
// code point of the three stretches the tables leave out and around them.
TEST(InputToml, NonAsciiCharactersWhereBlanksMayStandAreErrors) {
  std::vector<std::pair<char32_t, char32_t>> stretches = {
      {0xA0, 0x4A0}, {0x2C00, 0x3010}, {0xFC00, 0xFFFD}};
  int tried = 0;
  for (auto [lo, hi] : stretches) {
    for (char32_t c = lo; c <= hi; ++c) {
      const std::string e = TomlError("a = \"x\"" + Utf8(c) + "\n");
      EXPECT_NE(e.find("t.toml:1:"), std::string::npos)
          << std::hex << static_cast<unsigned>(c) << ": " << e;
      ++tried;
    }
  }
  EXPECT_EQ(tried, 1025 + 1041 + 1022);
  // The fuzzer's input, as it was.
  EXPECT_NE(TomlError("#=oi \"stat\"\ng= \" c\"\xc4\x94\"\n").find("t.toml:2:"), std::string::npos);
}

TEST(InputJson, EveryValueAndKeyHasItsPosition) {
  auto d = ParseJsonDoc("{\n  \"a\": [1, \"x\",\n  {\"b\": true}],\n\"c\": null}", "t.json");
  ASSERT_TRUE(d.has_value()) << d.error();
  EXPECT_EQ(d->loc.line, 1);
  EXPECT_EQ(d->loc.col, 1);
  EXPECT_EQ(d->loc.key_path, "/");
  const Doc* a = d->Get("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(d->key_locs[0].line, 2);
  EXPECT_EQ(d->key_locs[0].col, 3);
  EXPECT_EQ(a->loc.line, 2);
  EXPECT_EQ(a->loc.col, 8);
  EXPECT_EQ(a->loc.key_path, "/a");
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[0].loc.col, 9);   // 1
  EXPECT_EQ(a->items[1].loc.col, 12);  // "x"
  EXPECT_EQ(a->items[1].loc.key_path, "/a/1");
  EXPECT_EQ(a->items[2].loc.line, 3);
  EXPECT_EQ(a->items[2].loc.col, 3);
  const Doc* b = a->items[2].Get("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->loc.col, 9);
  EXPECT_EQ(b->loc.key_path, "/a/2/b");
  EXPECT_EQ(d->key_locs[1].line, 4);
  EXPECT_EQ(d->key_locs[1].col, 1);
  EXPECT_EQ(d->Get("c")->loc.col, 6);
}

TEST(InputJson, ColumnsCountCharactersAndStringsHideStructure) {
  // "é" is two bytes, one column; the braces and quotes inside a string
  // start nothing.
  auto d = ParseJsonDoc(R"({"é": "{[\",", "k": 5})", "t.json");
  ASSERT_TRUE(d.has_value()) << d.error();
  EXPECT_EQ(d->Get("é")->loc.col, 7);
  EXPECT_EQ(d->key_locs[1].col, 16);
  EXPECT_EQ(d->Get("k")->loc.col, 21);
}

TEST(InputJson, SyntaxErrorsHaveLineAndColumn) {
  EXPECT_EQ(JsonError("{\n  \"a\": 1,\n  ]"),
            "t.json:3:3: parse error: syntax error while parsing object key - unexpected ']'; "
            "expected string literal");
  EXPECT_NE(JsonError("").find("t.json:1:1: parse error"), std::string::npos);
  EXPECT_NE(JsonError("{} {}").find("t.json:1:4: parse error"), std::string::npos);
}

TEST(InputJson, DuplicateKeysAreErrors) {
  EXPECT_EQ(JsonError("{\"a\": 1,\n \"a\": 2}"), "t.json:2:2: /a: duplicate key \"a\"");
  EXPECT_EQ(JsonError(R"({"x": {"a": 1, "b": {}, "a": 3}})"),
            "t.json:1:25: /x/a: duplicate key \"a\"");
  // The same key in two tables is fine.
  EXPECT_TRUE(ParseJsonDoc(R"([{"a": 1}, {"a": 2}])", "t.json").has_value());
}

TEST(InputJson, HugeNumbersDoNotAbortOrWrap) {
  EXPECT_EQ(JsonError(R"({"a": 1e999})"),
            "t.json:1:7: number overflow parsing '1e999'");
  auto d = ParseJsonDoc(R"({"a": 18446744073709551615, "b": -9223372036854775809,)"
                        R"( "c": 99999999999999999999999, "d": 9223372036854775807, "e": 1.5})",
                        "t.json");
  ASSERT_TRUE(d.has_value()) << d.error();
  const Doc* a = d->Get("a");
  EXPECT_EQ(a->kind, Doc::Kind::kInt);
  EXPECT_TRUE(a->int_overflow);
  EXPECT_EQ(a->num_text, "18446744073709551615");
  EXPECT_FALSE(a->IntIn(-1, 0).has_value());  // not -1
  EXPECT_TRUE(d->Get("b")->int_overflow);
  EXPECT_EQ(d->Get("b")->num_text, "-9223372036854775809");
  EXPECT_TRUE(d->Get("c")->int_overflow);
  EXPECT_EQ(d->Get("c")->num_text, "99999999999999999999999");
  EXPECT_EQ(d->Get("d")->IntIn(0, INT64_MAX), INT64_MAX);
  EXPECT_EQ(d->Get("e")->kind, Doc::Kind::kFloat);
}

TEST(InputJson, NulBytesAreErrors) {
  EXPECT_EQ(JsonError(R"({"path": "/a\u0000b"})"), "t.json:1:10: a string holds a NUL byte");
  EXPECT_EQ(JsonError(R"({"a\u0000": 1})"), "t.json:1:2: a key holds a NUL byte");
}

TEST(InputJson, NestingIsLimited) {
  std::string deep(kMaxDepth, '[');
  deep += std::string(kMaxDepth, ']');
  EXPECT_TRUE(ParseJsonDoc(deep, "t.json").has_value());
  std::string deeper(100000, '[');
  EXPECT_EQ(JsonError(deeper), "t.json:1:65: nesting deeper than 64 levels");
}

TEST(InputJson, LongStringsAreErrors) {
  std::string ok = "[\"" + std::string(kMaxField, 'a') + "\"]";
  EXPECT_TRUE(ParseJsonDoc(ok, "t.json").has_value());
  std::string big = "[\"" + std::string(kMaxField + 1, 'a') + "\"]";
  EXPECT_EQ(JsonError(big), "t.json:1:2: a string of 1048577 bytes is longer than the limit of "
                            "1048576 bytes");
}

TEST(InputJson, InvalidUtf8IsAnError) {
  EXPECT_NE(JsonError("[\"\xff\"]").find("t.json:1:"), std::string::npos);
}

TEST(InputToml, PositionsAndErrors) {
  auto d = ParseTomlDoc("a = 1\n[t]\nb = \"x\"\n", "t.toml");
  ASSERT_TRUE(d.has_value()) << d.error();
  EXPECT_EQ(d->loc.line, 1);
  const Doc* t = d->Get("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Get("b")->loc.line, 3);
  EXPECT_EQ(t->Get("b")->loc.col, 5);
  EXPECT_EQ(t->key_locs[0].line, 3);
  EXPECT_EQ(t->key_locs[0].col, 1);
  EXPECT_EQ(d->Get("a")->num_text, "1");
  EXPECT_NE(TomlError("a = 1\na = 2\n").find("t.toml:2:"), std::string::npos);
  EXPECT_NE(TomlError("a = 99999999999999999999\n").find("t.toml:1:"), std::string::npos);
}

TEST(InputToml, NulBytesAreErrors) {
  EXPECT_EQ(TomlError("p = \"/a\\u0000\"\n"), "t.toml:1:5: a string holds a NUL byte");
}

TEST(InputToml, NestingIsLimited) {
  std::string deep = "a = " + std::string(kMaxDepth + 1, '[') + std::string(kMaxDepth + 1, ']');
  EXPECT_NE(TomlError(deep).find("nesting deeper than 64 levels"), std::string::npos);
  std::string deeper = "a = " + std::string(100000, '[');
  EXPECT_NE(TomlError(deeper).find("t.toml:1:"), std::string::npos);
}

// The one reader of input files: what is not a file is refused by name,
// and an input that never ends stops at the limit instead of filling
// memory.
TEST(InputReadFile, ReadsAFile) {
  const base_testing::ScratchDir scratch("pathwarden-doc-test");
  const std::string& dir = scratch.path();
  const std::string f = scratch.Path("a.toml");
  ASSERT_TRUE(scratch.Write("a.toml", "format = 1\n"));
  auto text = ReadFile(f);
  ASSERT_TRUE(text.has_value()) << text.error();
  EXPECT_EQ(*text, "format = 1\n");
  // A directory is refused before anything is read, naming the path.
  auto d = ReadFile(dir);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error(), std::string(dir) + ": is a directory, not a file");
  // So is a symlink to one, under the name given.
  const std::string link = std::string(dir) + "/d.toml";
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0);
  auto l = ReadFile(link);
  ASSERT_FALSE(l.has_value());
  EXPECT_EQ(l.error(), link + ": is a directory, not a file");
  unlink(link.c_str());
  unlink(f.c_str());
  auto missing = ReadFile(f);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), f + ": cannot read: No such file or directory");
}

TEST(InputReadFile, AnEndlessDeviceStopsAtTheLimit) {
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    auto text = ReadFile(dev);
    ASSERT_FALSE(text.has_value()) << dev;
    EXPECT_EQ(text.error(), std::string(dev) + ": input larger than 67108864 bytes");
  }
  // An empty device is an empty input, not an error.
  auto null = ReadFile("/dev/null");
  ASSERT_TRUE(null.has_value()) << null.error();
  EXPECT_EQ(*null, "");
}

TEST(InputReadFile, TextGivenDirectlyHasTheSameLimit) {
  std::string big(kMaxFile + 1, ' ');
  EXPECT_EQ(TomlError(big), "t.toml: input larger than 67108864 bytes");
  EXPECT_EQ(JsonError(big), "t.json: input larger than 67108864 bytes");
}

TEST(InputToml, DottedKeysAndHeadersAreLimited) {
  // 100,000 tables deep by a dotted key or a table header overflowed the
  // stack inside toml::parse() (a crash, not an error).
  std::string dotted = "a";
  for (int i = 0; i < 100000; ++i) dotted += ".a";
  EXPECT_EQ(TomlError(dotted + " = 1\n"), "t.toml:1:128: nesting deeper than 64 levels");
  EXPECT_EQ(TomlError("[" + dotted + "]\n"), "t.toml:1:129: nesting deeper than 64 levels");
  EXPECT_EQ(TomlError("x = 1\n[[" + dotted + "]]\n"), "t.toml:2:130: nesting deeper than 64 levels");
  // 64 levels (63 dots) are within the limit.
  std::string ok = "a";
  for (int i = 0; i < 63; ++i) ok += ".a";
  EXPECT_TRUE(ParseTomlDoc(ok + " = 1\n", "t.toml").has_value()) << ok;
  // Dots in strings, comments and values are no levels.
  const std::string many(200, '.');
  const std::string text = "a = \"" + many + "\"\n" +        // a basic string
                           "b = '" + many + "'\n" +          // a literal string
                           "c = \"\"\"\n" + many + "\n\"\"\"\n" +  // a multi-line string
                           "e = \"\\\"" + many + "\"\n" +      // an escaped quote inside
                           "d = 1.5 # " + many + "\n" +        // a float, a comment
                           "\"x" + many + "\" = [1.5, 2.5]\n";  // a quoted key, floats
  auto d = ParseTomlDoc(text, "t.toml");
  EXPECT_TRUE(d.has_value()) << d.error();
}

TEST(InputWhere, JsonKeepsTheKeyPath) {
  EXPECT_EQ(Where("f", Loc{2, 3, ""}), "f:2:3");
  EXPECT_EQ(Where("f", Loc{2, 3, "/a/0"}), "f:2:3: /a/0");
}

}  // namespace
}  // namespace pathwarden::input
