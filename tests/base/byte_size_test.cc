#include "base/byte_size.h"

#include <string>

#include "gtest/gtest.h"

namespace mtserve {
namespace {

int64_t Parse(const std::string& text) {
  ByteSize size;
  std::string error;
  EXPECT_TRUE(AbslParseFlag(text, &size, &error)) << text << ": " << error;
  return size.bytes;
}

bool Rejects(const std::string& text) {
  ByteSize size;
  std::string error;
  return !AbslParseFlag(text, &size, &error) && !error.empty();
}

TEST(ByteSizeTest, ParsesBinarySuffixes) {
  EXPECT_EQ(Parse("0"), 0);
  EXPECT_EQ(Parse("1000"), 1000);
  EXPECT_EQ(Parse("64KiB"), 64 * 1024);
  EXPECT_EQ(Parse("512MiB"), 512LL * 1024 * 1024);
  EXPECT_EQ(Parse("2GiB"), 2LL * 1024 * 1024 * 1024);
  EXPECT_EQ(Parse("1TiB"), 1LL << 40);
}

TEST(ByteSizeTest, RejectsWhatIsNotASize) {
  for (const char* text : {"", "MiB", "-1", "1.5GiB", "12 apples", "1GB", "99999999999TiB"}) {
    EXPECT_TRUE(Rejects(text)) << text;
  }
}

TEST(ByteSizeTest, UnparseGivesBackWhatParses) {
  for (const char* text : {"0", "1000", "64KiB", "512MiB", "3GiB"}) {
    EXPECT_EQ(AbslUnparseFlag(ByteSize{Parse(text)}), text);
  }
}

TEST(ByteSizeTest, FormatsForMessages) {
  EXPECT_EQ(FormatBytes(900), "900 bytes");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(412LL << 20), "412 MiB");
}

}  // namespace
}  // namespace mtserve
