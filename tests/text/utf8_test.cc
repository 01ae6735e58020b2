#include "text/utf8.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

TEST(Utf8Test, WellFormedTextOfEveryLengthIsValid) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("A dog."));
  EXPECT_TRUE(IsValidUtf8("Männer"));                // 2 bytes
  EXPECT_TRUE(IsValidUtf8("我来了"));                // 3 bytes
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x90\x95"));      // U+1F415, 4 bytes
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the last code point
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // NUL is a character
}

// The malformed sequences of the Unicode standard's table 3-7 and its examples.
TEST(Utf8Test, MalformedSequencesAreNot) {
  for (const char* bad : {
           "\x80",                  // a continuation byte alone
           "\xC3",                  // a lead byte without its continuation
           "\xC3(",                 // a lead byte followed by ASCII
           "\xC0\xAF",              // an overlong "/" (2 bytes)
           "\xE0\x80\xAF",          // an overlong "/" (3 bytes)
           "\xF0\x80\x80\xAF",      // an overlong "/" (4 bytes)
           "\xED\xA0\x80",          // U+D800, a surrogate
           "\xED\xBF\xBF",          // U+DFFF, a surrogate
           "\xF4\x90\x80\x80",      // U+110000, past the last code point
           "\xF8\x88\x80\x80\x80",  // a 5-byte form
           "\xFF",                  // never in UTF-8
       }) {
    EXPECT_FALSE(IsValidUtf8(bad)) << ::testing::PrintToString(std::string(bad));
    EXPECT_FALSE(IsValidUtf8(std::string("ok ") + bad + " ok"));
  }
}

TEST(Utf8Test, TheErrorNamesTheField) {
  EXPECT_TRUE(CheckUtf8("A dog.", "texts[0]").ok());
  const absl::Status status = CheckUtf8("A \xFF dog.", "texts[3]");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "texts[3] is not valid UTF-8");
}

}  // namespace
}  // namespace mtserve
