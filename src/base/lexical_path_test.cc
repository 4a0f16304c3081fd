#include "src/base/lexical_path.h"

#include <string_view>
#include <utility>

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
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"/a/./b//c/../d", "/a/b/d"},
      {"a/../..", "/"},
      {"", "/"},
      {"/../x/", "/x"},
      {"/a/..b/.c", "/a/..b/.c"},
      {"/", "/"},
      {"/a/b/d", "/a/b/d"},
  };
  for (const auto& [path, normal] : cases) EXPECT_EQ(LexicallyNormal(path), normal) << path;
}

}  // namespace
}  // namespace pathwarden::internal
