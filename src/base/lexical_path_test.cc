#include "src/base/lexical_path.h"

#include <gtest/gtest.h>

namespace pathwarden::internal {
namespace {

TEST(LexicalPath, NormalisedAbsolute) {
  for (const char* yes : {"/", "/a", "/a/b", "/a/.b/..c"})
    EXPECT_TRUE(IsNormalisedAbsolute(yes)) << yes;
  for (const char* no : {"", "a", "/a/", "//a", "/a//b", "/./a", "/a/..", "/a/."})
    EXPECT_FALSE(IsNormalisedAbsolute(no)) << no;
}

TEST(LexicalPath, LexicallyNormal) {
  EXPECT_EQ(LexicallyNormal("/a/./b//c/../d"), "/a/b/d");
  EXPECT_EQ(LexicallyNormal("a/../.."), "/");
  EXPECT_EQ(LexicallyNormal(""), "/");
  EXPECT_EQ(LexicallyNormal("/../x/"), "/x");
  EXPECT_EQ(LexicallyNormal("/a/..b/.c"), "/a/..b/.c");
  for (const char* p : {"/", "/a/b/d", "/x"}) EXPECT_EQ(LexicallyNormal(p), p);
}

}  // namespace
}  // namespace pathwarden::internal
