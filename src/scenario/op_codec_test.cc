// The operations' codec rows: one per request type, each name read back
// to its operation, no key given twice, and a value past the enum's end
// gets the fail-closed row (no name, no errno).

#include "src/scenario/op_codec.h"

#include <cerrno>
#include <set>
#include <string_view>
#include <variant>

#include <gtest/gtest.h>

#include "pathwarden/scenario.h"
#include "src/scenario/errnos.h"

namespace pathwarden::scenario_internal {
namespace {

template <size_t... I>
std::set<Op> RequestOps(std::index_sequence<I...>) {
  return {std::variant_alternative_t<I, Request>::kOp...};
}

TEST(OpCodec, OneRowPerRequestTypeEachNamedOnce) {
  const std::set<Op> ops = RequestOps(std::make_index_sequence<std::variant_size_v<Request>>());
  ASSERT_EQ(ops.size(), OpCodecs().size());
  std::set<std::string_view> names;
  for (const OpCodec& c : OpCodecs()) {
    EXPECT_TRUE(ops.count(c.op)) << c.name;
    EXPECT_EQ(&CodecOf(c.op), &c) << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << "named twice: " << c.name;
    EXPECT_EQ(OpFromName(c.name), c.op) << c.name;
    EXPECT_EQ(OpName(c.op), c.name);
    std::set<std::string_view> keys;
    for (std::string_view k : c.required) EXPECT_TRUE(k.empty() || keys.insert(k).second) << k;
    for (std::string_view k : c.optional) EXPECT_TRUE(k.empty() || keys.insert(k).second) << k;
    EXPECT_FALSE(c.required[0].empty()) << c.name << " requires no key";
  }
}

TEST(OpCodec, PastTheEnumNoNameNoErrno) {
  const Op past = static_cast<Op>(OpCodecs().size());
  EXPECT_EQ(OpName(past), "?");
  EXPECT_FALSE(OpFromName("?").has_value());
  EXPECT_FALSE(LinuxReturns(past, EACCES));
  EXPECT_TRUE(LinuxReturns(past, 0));
  EXPECT_EQ(LinuxErrnoList(past), "");
}

TEST(OpCodec, ErrnoSetBounds) {
  constexpr ErrnoSet s = {EPERM, 133, -1, ErrnoSet::kEnd, 100000};
  static_assert(s.Has(EPERM) && s.Has(133));
  EXPECT_FALSE(s.Has(-1));
  EXPECT_FALSE(s.Has(ErrnoSet::kEnd));
  EXPECT_FALSE(s.Has(100000));
  EXPECT_FALSE(s.Has(0));
}

}  // namespace
}  // namespace pathwarden::scenario_internal
