#include "frontends/http/http_framing.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/asio/buffer.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/string_body.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<BodyFraming> Framing(std::vector<HeaderField> fields) {
  return RequestBodyFraming(fields);
}

// Beast's parser on `head`: the error it stops at, if any.
boost::system::error_code ParseHead(const std::string& head) {
  boost::beast::http::request_parser<boost::beast::http::string_body> parser;
  boost::beast::error_code error;
  parser.put(boost::asio::buffer(head), error);
  return error;
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
  // Some readers take "12abc" and "+12" as 12; another may not.
  for (const char* value : {"12abc", "+12", "1 2", "12, 12", "", "0x10", "-0"}) {
    ExpectRefused({{"Content-Length", value}}, "digits only");
  }
  ExpectRefused({{"Content-Length", "99999999999999999999"}}, "more bytes than any body");
}

TEST(HttpFramingTest, TwoDifferentLengths) {
  ExpectRefused({{"Content-Length", "5"}, {"Host", "x"}, {"content-length", "6"}},
                "Content-Length is given twice, \"5\" and \"6\"");
  // A second length that is not a number is refused too (a reader may read the first only).
  ExpectRefused({{"Content-Length", "5"}, {"Content-Length", "x"}}, "digits only");
}

TEST(HttpFramingTest, LengthWithTransferEncoding) {
  ExpectRefused({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}},
                "Content-Length and Transfer-Encoding are both given");
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}},
                "Content-Length and Transfer-Encoding are both given");
  // A reader may take identity as no coding, and then the length (Beast's parser does).
  ExpectRefused({{"Transfer-Encoding", "identity"}, {"Content-Length", "5"}},
                "Transfer-Encoding is \"identity\": the only transfer coding accepted is chunked");
}

TEST(HttpFramingTest, TransferEncodingOtherThanChunkedOnce) {
  ExpectRefused({{"Transfer-Encoding", "identity"}}, "only transfer coding accepted is chunked");
  ExpectRefused({{"Transfer-Encoding", "gzip, chunked"}}, "\"gzip, chunked\"");
  // A reader may read the first field only.
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "gzip"}},
                "Transfer-Encoding is given twice");
  ExpectRefused({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}},
                "Transfer-Encoding is given twice");
}

TEST(HttpFramingTest, ManyFieldsAreFine) {
  // Every field of a head is read (its size is bounded in bytes instead), so none can hide.
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back(absl::StrCat("X-Field-", i));
  std::vector<HeaderField> fields;
  for (const std::string& name : names) fields.push_back({name, "v"});
  fields.push_back({"Content-Length", "3"});
  const absl::StatusOr<BodyFraming> framing = Framing(fields);
  ASSERT_TRUE(framing.ok()) << framing.status();
  EXPECT_EQ(framing->content_length, 3);
}

TEST(HttpFramingTest, TheParsersRefusalsAreWorded) {
  const std::string start = "POST / HTTP/1.1\r\nHost: x\r\n";
  struct Case {
    std::string fields;
    std::string words;
  };
  for (const Case& c : std::vector<Case>{
           {"Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length is given twice"},
           {"Content-Length: 12abc\r\n", "digits only"},
           {"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "Content-Length"},
           {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
            "Content-Length and Transfer-Encoding are both given"},
           {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding is given twice"},
       }) {
    const boost::system::error_code error = ParseHead(start + c.fields + "\r\n");
    ASSERT_TRUE(error) << c.fields;
    const std::optional<absl::Status> status = ParserFramingError(error);
    ASSERT_TRUE(status.has_value()) << c.fields << ": " << error.message();
    EXPECT_EQ(status->code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status->message(), HasSubstr(c.words)) << c.fields;
  }
  // What the parser takes is left to RequestBodyFraming.
  EXPECT_FALSE(ParseHead(start + "Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n"));
  EXPECT_FALSE(ParserFramingError(boost::beast::http::error::bad_method).has_value());
}

}  // namespace
}  // namespace mtserve
