#include "base/excerpt.h"

#include <string>

#include "gtest/gtest.h"

namespace mtserve {
namespace {

TEST(ExcerptTest, ShortValuesAreKeptWhole) {
  EXPECT_EQ(Excerpt("en-de"), "en-de");
  EXPECT_EQ(Excerpt(std::string(64, 'x')), std::string(64, 'x'));
}

TEST(ExcerptTest, LongValuesAreCutAndSayTheirLength) {
  EXPECT_EQ(Excerpt(std::string(100000, 'x'), 5), "xxxxx... (100000 bytes)");
}

TEST(ExcerptTest, NeverCutsACharacterInTwo) {
  // "ü" is two bytes: a cut after 3 bytes of "aüü" would split the second one.
  EXPECT_EQ(Excerpt("a\xC3\xBC\xC3\xBC", 4), "a\xC3\xBC... (5 bytes)");
  EXPECT_EQ(Excerpt("\xE2\x82\xAC\xE2\x82\xAC", 2), "... (6 bytes)");
}

}  // namespace
}  // namespace mtserve
