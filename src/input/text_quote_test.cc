#include "src/input/text_quote.h"

#include <string>

#include <gtest/gtest.h>

namespace pathwarden::input {
namespace {

TEST(TextQuote, PrintableNamesStayAsTheyAre) {
  EXPECT_EQ(QuoteName("/tmp/x"), "/tmp/x");
  EXPECT_EQ(QuoteName("été-日本"), "été-日本");
  EXPECT_FALSE(NeedsQuoting("a.b~c"));
}

TEST(TextQuote, ControlCharactersAreEscapedAndQuoted) {
  EXPECT_EQ(QuoteName("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(QuoteName("\x1b[2Jevil\nfake  line"), "\"\\033[2Jevil\\nfake  line\"");
  EXPECT_EQ(QuoteName(std::string("a\0b", 3)), "\"a\\000b\"");
  EXPECT_EQ(QuoteName("\t\r\a\b\v\f\x7f"), "\"\\t\\r\\a\\b\\v\\f\\177\"");
}

TEST(TextQuote, BlanksQuotesAndBackslashesQuoteTheName) {
  EXPECT_EQ(QuoteName("my file"), "\"my file\"");
  EXPECT_EQ(QuoteName("say\"hi\""), "\"say\\\"hi\\\"\"");
  EXPECT_EQ(QuoteName("a\\n"), "\"a\\\\n\"");
  EXPECT_EQ(QuoteName(""), "\"\"");
}

TEST(TextQuote, InvalidUtf8IsEscapedByteByByte) {
  EXPECT_EQ(QuoteName("x\xff\xfey"), "\"x\\377\\376y\"");
  // Overlong, a surrogate, past U+10FFFF, a truncated sequence.
  EXPECT_EQ(QuoteName("\xc0\xaf"), "\"\\300\\257\"");
  EXPECT_EQ(QuoteName("\xed\xa0\x80"), "\"\\355\\240\\200\"");
  EXPECT_EQ(QuoteName("\xf4\x90\x80\x80"), "\"\\364\\220\\200\\200\"");
  EXPECT_EQ(QuoteName("a\xe2\x82"), "\"a\\342\\202\"");
}

TEST(TextQuote, CharactersThatReorderOrBreakLinesAreEscaped) {
  // U+202E RIGHT-TO-LEFT OVERRIDE, U+2028 LINE SEPARATOR, U+0085 (C1).
  EXPECT_EQ(QuoteName("a\xe2\x80\xaez"), "\"a\\342\\200\\256z\"");
  EXPECT_EQ(QuoteName("a\xe2\x80\xa8z"), "\"a\\342\\200\\250z\"");
  EXPECT_EQ(QuoteName("a\xc2\x85z"), "\"a\\302\\205z\"");
}

TEST(TextQuote, ProseKeepsItsQuotesAndStaysOneLine) {
  EXPECT_EQ(EscapeText("rule \"/srv\" on a\nb"), "rule \"/srv\" on a\\nb");
  EXPECT_EQ(EscapeText("back\\slash"), "back\\\\slash");
  EXPECT_EQ(EscapeText("my file"), "my file");
}

}  // namespace
}  // namespace pathwarden::input
