#include "frontends/proto/proto_bounds.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mtserve/v1/translation.pb.h"
#include "serving/request_limits.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

// 256 texts plus 64 values (no terms: --max_request_terms 0).
const ValueBounds kBounds = RequestValueBounds([] {
  RequestLimits limits;
  limits.terms.max_entries = 0;
  return limits;
}());

absl::Status Check(const google::protobuf::Message& message, const ValueBounds& bounds = kBounds) {
  return CheckProtoBounds(message.SerializeAsString(), *message.GetDescriptor(), bounds,
                          "the request");
}

TEST(ProtoBoundsTest, FieldsAreCountedAtEveryLevel) {
  // 320 values: the message, 315 texts, its model, its options and their 2 fields.
  v1::TranslateRequest request;
  request.set_model("en-de");
  request.mutable_options()->set_beam_size(4);
  request.mutable_options()->set_return_scores(true);
  for (int i = 0; i < 315; ++i) request.add_texts("");
  EXPECT_TRUE(Check(request).ok());
  request.mutable_options()->set_max_length(9);
  const absl::Status status = Check(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("the request has more than 320 fields, the limit (the server's "
                        "--max_texts_per_request (256), plus --max_request_terms (0) times "
                        "11, plus 64)"));
}

TEST(ProtoBoundsTest, UnknownFieldsCountToo) {
  v1::TranslateRequest request;
  request.add_texts("A dog.");
  std::string bytes = request.SerializeAsString();
  for (int i = 0; i < 400; ++i) bytes += std::string("\x78\x01", 2);  // Field 15, varint 1.
  EXPECT_TRUE(request.ParseFromString(bytes));                        // The parser keeps them all.
  const absl::Status status =
      CheckProtoBounds(bytes, *request.GetDescriptor(), kBounds, "the request");
  EXPECT_THAT(status.message(), HasSubstr("more than 320 fields"));
}

TEST(ProtoBoundsTest, DepthIsBounded) {
  v1::TranslateRequest request;
  request.mutable_options()->set_beam_size(4);
  ValueBounds shallow = kBounds;
  shallow.max_depth = 1;
  const absl::Status status = Check(request, shallow);
  EXPECT_THAT(status.message(), HasSubstr("the request nests messages deeper than 1 levels"));
  EXPECT_TRUE(Check(request).ok());
}

TEST(ProtoBoundsTest, BytesThatAreNoMessageAreLeftToTheParser) {
  // A length beyond the end, a truncated varint: the parser refuses them, with its own message.
  for (const std::string& bytes : {std::string("\x12\x7f"
                                               "ab",
                                               4),
                                   std::string("\x08\xff", 2)}) {
    EXPECT_TRUE(
        CheckProtoBounds(bytes, *v1::TranslateRequest::descriptor(), kBounds, "the request").ok());
  }
}

}  // namespace
}  // namespace mtserve
