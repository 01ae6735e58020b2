#include "frontends/http/http_framing.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

constexpr int kMaxFields = 64;  // civetweb's MG_MAX_HEADERS.

absl::StatusOr<BodyFraming> Framing(std::vector<HeaderField> fields) {
  return RequestBodyFraming(fields, kMaxFields);
}

void ExpectRefused(std::vector<HeaderField> fields, const std::string& words) {
  const absl::StatusOr<BodyFraming> framing = Framing(fields);
  ASSERT_FALSE(framing.ok());
  EXPECT_EQ(framing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(framing.status().message(), HasSubstr(words));
}

TEST(HttpFramingTest, NoFramingHeaderIsNoBody) {
  const absl::StatusOr<BodyFraming> framing = Framing({{"Host", "x"}, {"Accept", "*/*"}});
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_FALSE(framing->chunked);
  EXPECT_EQ(framing->content_length, 0);
  EXPECT_FALSE(framing->has_body());
}

TEST(HttpFramingTest, ContentLength) {
  absl::StatusOr<BodyFraming> framing = Framing({{"content-length", " 42 "}});
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_EQ(framing->content_length, 42);
  EXPECT_TRUE(framing->has_body());
  framing = Framing({{"Content-Length", "0"}});
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_FALSE(framing->has_body());
  // The same length twice says one thing.
  framing = Framing({{"Content-Length", "7"}, {"CONTENT-LENGTH", "7"}});
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_EQ(framing->content_length, 7);
}

TEST(HttpFramingTest, Chunked) {
  const absl::StatusOr<BodyFraming> framing = Framing({{"Transfer-Encoding", "Chunked"}});
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_TRUE(framing->chunked);
  EXPECT_TRUE(framing->has_body());
}

TEST(HttpFramingTest, ContentLengthThatIsNotDigits) {
  // civetweb reads "12abc" as 12 and "+12" as 12; another reader may not.
  for (const char* value : {"12abc", "+12", "1 2", "12, 12", "", "0x10", "-0"}) {
    ExpectRefused({{"Content-Length", value}}, "digits only");
  }
  ExpectRefused({{"Content-Length", "99999999999999999999"}}, "more bytes than any body");
}

TEST(HttpFramingTest, TwoDifferentLengths) {
  ExpectRefused({{"Content-Length", "5"}, {"Host", "x"}, {"content-length", "6"}},
                "Content-Length is given twice, \"5\" and \"6\"");
  // A second length that is not a number is refused too (civetweb reads the first only).
  ExpectRefused({{"Content-Length", "5"}, {"Content-Length", "x"}}, "digits only");
}

TEST(HttpFramingTest, LengthWithTransferEncoding) {
  ExpectRefused({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}},
                "Content-Length and Transfer-Encoding are both given");
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}},
                "Content-Length and Transfer-Encoding are both given");
  // civetweb takes identity as no coding, and then the length.
  ExpectRefused({{"Transfer-Encoding", "identity"}, {"Content-Length", "5"}},
                "Transfer-Encoding is \"identity\": the only transfer coding accepted is chunked");
}

TEST(HttpFramingTest, TransferEncodingOtherThanChunkedOnce) {
  ExpectRefused({{"Transfer-Encoding", "identity"}}, "only transfer coding accepted is chunked");
  ExpectRefused({{"Transfer-Encoding", "gzip, chunked"}}, "\"gzip, chunked\"");
  // civetweb reads the first field only.
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "gzip"}},
                "Transfer-Encoding is given twice");
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}},
                "Transfer-Encoding is given twice");
}

TEST(HttpFramingTest, FieldsUpToTheLimit) {
  std::vector<std::string> names;
  for (int i = 0; i < kMaxFields; ++i) names.push_back(absl::StrCat("X-Field-", i));
  std::vector<HeaderField> fields;
  for (int i = 0; i < kMaxFields - 1; ++i) fields.push_back({names[i], "v"});
  EXPECT_TRUE(Framing(fields).ok());
  // A request that fills civetweb's slots may have had more, which it dropped.
  fields.push_back({names.back(), "v"});
  ExpectRefused(fields, "more than 63 header fields");
}

}  // namespace
}  // namespace mtserve
