#include "frontends/http/http_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mtserve/v1/translation.pb.h"
#include "nlohmann/json.hpp"
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

TEST(HttpJsonTest, TextsAreJsonStringsAndOptionsUseTheProtoNames) {
  v1::TranslateRequest request;
  ASSERT_TRUE(ParseJson(R"({"model": "en-de", "texts": ["A man.", "Zwei Männer \"hier\"."],
                            "options": {"beam_size": 4, "returnScores": true,
                                        "seed": "18446744073709551615",
                                        "format": "TEXT_FORMAT_HTML"}})",
                        "the body", kBounds, request)
                  .ok());
  EXPECT_EQ(request.model(), "en-de");
  ASSERT_EQ(request.texts_size(), 2);
  EXPECT_EQ(request.texts(0), "A man.");
  EXPECT_EQ(request.texts(1), "Zwei Männer \"hier\".");
  EXPECT_EQ(request.options().beam_size(), 4u);
  EXPECT_TRUE(request.options().return_scores());
  EXPECT_EQ(request.options().seed(), 18446744073709551615ull);
  EXPECT_EQ(request.options().format(), v1::TEXT_FORMAT_HTML);
}

TEST(HttpJsonTest, AStreamLinesTextIsAJsonString) {
  v1::TranslateStreamRequest request;
  ASSERT_TRUE(ParseJson(R"({"id": "a", "text": "QSBtYW4="})", "line 1", kBounds, request).ok());
  EXPECT_EQ(request.text(), "QSBtYW4=");  // Taken as it is, not as base64.
}

// A null in a list is refused, naming where: protobuf's JSON parser dropped it, so three texts
// with a null among them got two translations. A null field stays its default, as proto3's JSON
// mapping has it.
TEST(HttpJsonTest, ANullInAListIsRefusedNamingIt) {
  v1::TranslateRequest request;
  absl::Status status =
      ParseJson(R"({"texts": ["a", null, "b"]})", "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("the request body: texts[1] is null"));
  status = ParseJson(R"({"texts": [null]})", "the request body", kBounds, request);
  EXPECT_THAT(status.message(), HasSubstr("the request body: texts[0] is null"));
  status = ParseJson(R"({"options": {"beam_size": [[1, null]]}})", "line 3", kBounds, request);
  EXPECT_THAT(status.message(), HasSubstr("line 3: options.beam_size[0][1] is null"));
  request.Clear();
  EXPECT_TRUE(
      ParseJson(R"({"texts": ["a"], "model": null})", "the request body", kBounds, request).ok());
  EXPECT_EQ(request.texts_size(), 1);
}

TEST(HttpJsonTest, RefusalsNameWhatAndWhy) {
  v1::TranslateRequest request;
  absl::Status status = ParseJson(R"({"texts": ["a"],)", "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("the request body is not JSON"));

  status = ParseJson(R"({"texts": ["a"], "options": {"beam_sise": 4}})", "the request body",
                     kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("the request body is not a valid mtserve.v1.TranslateRequest"));
  EXPECT_THAT(status.message(), HasSubstr("beam_sise"));

  status = ParseJson(R"({"texts": [1]})", "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);

  status = ParseJson("{\"texts\": [\"\xff\"]}", "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not JSON"));
}

TEST(HttpJsonTest, ABoolFieldTakesOnlyTrueFalseOrNull) {
  // Protobuf's JSON mapping reads "true" and "false" as booleans; here a string, a number, a list
  // or an object is refused, naming the field as the client wrote it.
  for (const char* value : {R"("no")", R"("true")", R"("false")", "1", "0", "[true]", "{}"}) {
    v1::TranslateRequest request;
    const absl::Status status =
        ParseJson(absl::StrCat(R"({"texts": ["a"], "options": {"shortlist": )", value, "}}"),
                  "the request body", kBounds, request);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_THAT(status.message(),
                HasSubstr("the request body: options.shortlist must be a boolean (true or "
                          "false), not "))
        << value;
    EXPECT_THAT(status.message(), HasSubstr(value));
  }
  v1::TranslateRequest request;
  absl::Status status =
      ParseJson(R"({"options": {"returnScores": "yes"}})", "line 2", kBounds, request);
  EXPECT_EQ(status.message(),
            R"(line 2: options.returnScores must be a boolean (true or false), not "yes")");
  // Every message's bool fields, in lists of messages too.
  v1::ListModelsResponse models;
  status = ParseJson(R"({"models": [{"is_default": true}, {"is_default": "false"}]})", "the body",
                     kBounds, models);
  EXPECT_EQ(status.message(),
            R"(the body: models[1].is_default must be a boolean (true or false), not "false")");

  ASSERT_TRUE(ParseJson(R"({"texts": ["a"], "options": {"shortlist": false, "return_scores": true,
                            "split_sentences": null}})",
                        "the request body", kBounds, request)
                  .ok());
  EXPECT_TRUE(request.options().has_shortlist());
  EXPECT_FALSE(request.options().shortlist());
  EXPECT_TRUE(request.options().return_scores());
  EXPECT_FALSE(request.options().has_split_sentences());
}

TEST(HttpJsonTest, DeepNestingIsRefusedWhileParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  v1::TranslateRequest request;
  const absl::Status status = ParseJson(deep, "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("nested deeper than 64 levels"));
}

TEST(HttpJsonTest, ValuesAreCountedBeforeAnythingIsBuilt) {
  // 320 values: the object, the array and its 318 texts.
  std::string body = R"({"texts": ["")";
  for (int i = 1; i < 318; ++i) body += R"(,"")";
  body += "]}";
  v1::TranslateRequest request;
  EXPECT_TRUE(ParseJson(body, "the request body", kBounds, request).ok());
  EXPECT_EQ(request.texts_size(), 318);
  body.insert(body.size() - 2, R"(,"")");
  const absl::Status status = ParseJson(body, "the request body", kBounds, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("the request body is JSON of more than 320 values, the limit (the "
                        "server's --max_texts_per_request (256), plus --max_request_terms (0) "
                        "times 11, plus 64)"));
  // Commas and brackets inside strings are text, not values.
  const std::string text(10000, ',');
  EXPECT_TRUE(
      ParseJson(R"({"texts": [")" + text + R"(["]})", "the request body", kBounds, request).ok());
  EXPECT_EQ(request.texts(0), text + "[");
}

TEST(HttpJsonTest, AnswersUseTheProtoNamesAndHaveEveryField) {
  v1::ListModelsResponse response;
  v1::ModelInfo* info = response.add_models();
  info->set_name("en-de");
  info->set_is_default(true);
  info->set_max_input_tokens(512);
  absl::StatusOr<std::string> json = ToJson(response);
  ASSERT_TRUE(json.ok());
  const nlohmann::json model = nlohmann::json::parse(*json)["models"][0];
  EXPECT_EQ(model["name"], "en-de");
  EXPECT_EQ(model["is_default"], true);
  EXPECT_EQ(model["max_input_tokens"], 512);
  EXPECT_EQ(model["vocab_size"], 0);  // At its default, there all the same.
  EXPECT_EQ(model["path"], "");
}

}  // namespace
}  // namespace mtserve
