// The word-at-a-time component hash must agree with the name hash the
// dentry table is keyed by, wherever the component sits in a path.

#include "src/base/string_pool.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace pathwarden::internal {
namespace {

// Every component of `path`, hashed in the path and alone.
void ExpectComponentsAgree(const std::string& path) {
  size_t i = 0;
  while (i <= path.size()) {
    uint32_t h = 0;
    uint64_t head = 0;
    const size_t len = HashComponent(path, i, &h, &head);
    ASSERT_LE(i + len, path.size()) << path;
    const std::string_view name = std::string_view(path).substr(i, len);
    ASSERT_EQ(name.find('/'), std::string_view::npos) << path;
    ASSERT_TRUE(i + len == path.size() || path[i + len] == '/') << path << " at " << i;
    EXPECT_EQ(h, HashName(name)) << "\"" << name << "\" in \"" << path << "\"";
    EXPECT_EQ(head, HeadOf(name)) << "\"" << name << "\" in \"" << path << "\"";
    // The scan the walk's loop uses: the same, with the name key; the
    // short form only for names shorter than a word.
    const Component c = ScanComponent(path, i);
    EXPECT_EQ(c.len, len) << path << " at " << i;
    EXPECT_EQ(c.hash, h) << path << " at " << i;
    EXPECT_EQ(c.head, head) << path << " at " << i;
    EXPECT_EQ(c.key, NameKey(HeadOf(name), name.size())) << path << " at " << i;
    Component s{};
    uint64_t w0 = 0;
    EXPECT_EQ(ScanShortComponent(path, i, &s, &w0), len < 8) << path << " at " << i;
    if (len >= 8) {
      const Component l = ScanLongComponentInline(path, i, w0);
      EXPECT_EQ(l.len, len);
      EXPECT_EQ(l.hash, h);
      EXPECT_EQ(l.key, c.key);
    }
    i += len + 1;
  }
}

TEST(HashComponentTest, AgreesWithHashNameAtEveryLengthAndOffset) {
  for (size_t lead = 0; lead < 9; ++lead) {
    for (size_t len = 0; len < 40; ++len) {
      std::string path(lead, 'x');
      path += '/';
      for (size_t k = 0; k < len; ++k) path += static_cast<char>('a' + k % 26);
      ExpectComponentsAgree(path);
      ExpectComponentsAgree(path + "/tail");
      ExpectComponentsAgree(path + "/");
    }
  }
}

TEST(HashComponentTest, HighBytesAroundSlashesDoNotEndTheNameEarly) {
  // Bytes 0x80..0xff next to '/' (0x2f) and to 0x2e, 0x30 are where a
  // careless zero-byte test reports false stops.
  std::mt19937 rng(7);
  const char alphabet[] = {'/', '.', '0', 'a', '\x80', '\xaf', '\xae', '\xb0', '\xff', '\x01'};
  for (int n = 0; n < 20000; ++n) {
    std::string path;
    const size_t len = rng() % 48;
    for (size_t k = 0; k < len; ++k) path += alphabet[rng() % sizeof(alphabet)];
    ExpectComponentsAgree(path);
  }
}

TEST(HashComponentTest, DistinctNamesRarelyCollide) {
  // Not a proof of quality, a guard against a degenerate mix: names that
  // differ in one byte, or only by length, hash apart.
  EXPECT_NE(HashName("a"), HashName("b"));
  EXPECT_NE(HashName("abcdefgh"), HashName("abcdefgi"));
  EXPECT_NE(HashName("abcdefgh"), HashName("abcdefgh\x01"));
  EXPECT_NE(HashName(""), HashName("\x01"));
  EXPECT_NE(HashName("include"), HashName("includf"));
}

TEST(NamesEqualTest, ComparesEveryLengthUpToTheLastByte) {
  for (size_t n = 0; n < 40; ++n) {
    std::string a(n, 'q');
    EXPECT_TRUE(NamesEqual(a.data(), std::string(n, 'q').data(), n));
    for (size_t k = 0; k < n; ++k) {
      std::string b = a;
      b[k] = '\xff';
      EXPECT_FALSE(NamesEqual(a.data(), b.data(), n)) << n << " " << k;
    }
  }
}

TEST(StringPoolTest, EqualsComparesSizeHeadAndTail) {
  StringPool pool;
  const std::string names[] = {"", "a", "ab", "fs.h", "include", "12345678", "123456789",
                               "a-much-longer-name-than-eight", "x86_64-linux-gnu",
                               "asan_symbolize-14"};
  std::vector<StrId> ids;
  for (const std::string& n : names) ids.push_back(pool.Intern(n));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (const std::string& other : names) {
      EXPECT_EQ(pool.Equals(ids[i], other, HeadOf(other)), other == names[i])
          << names[i] << " vs " << other;
      EXPECT_EQ(pool.EqualsInline(ids[i], other, HeadOf(other)), other == names[i])
          << names[i] << " vs " << other;
    }
    // Same size and head, different tail.
    std::string tail = names[i];
    if (tail.size() > 8) {
      tail.back() ^= 1;
      EXPECT_FALSE(pool.Equals(ids[i], tail, HeadOf(tail))) << tail;
      EXPECT_FALSE(pool.EqualsInline(ids[i], tail, HeadOf(tail))) << tail;
    }
  }
}

TEST(StringPoolTest, InternsOnceAndKeepsTheHash) {
  StringPool pool;
  const StrId a = pool.Intern("linux");
  const StrId b = pool.Intern("fs.h");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.Intern("linux"), a);
  EXPECT_EQ(pool.Get(a), "linux");
  EXPECT_EQ(pool.Hash(b), HashName("fs.h"));
}

}  // namespace
}  // namespace pathwarden::internal
