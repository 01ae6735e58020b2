// frontends/deepl/deepl_request: DeepL's bodies (forms, JSON, a document's multipart form) read
// into the core's requests, its language codes and its key header.
#include "frontends/deepl/deepl_request.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serving/request_limits.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

constexpr char kForm[] = "application/x-www-form-urlencoded";
constexpr char kJson[] = "application/json";

absl::Status NoKeyCheck(const std::optional<std::string>&) { return absl::OkStatus(); }

absl::StatusOr<DeepLTranslateRequest> Translate(absl::string_view body,
                                                absl::string_view content_type = kForm) {
  return ParseDeepLTranslate(body, content_type, RequestValueBounds(RequestLimits{}), std::nullopt,
                             NoKeyCheck);
}

// The request's error message, which must be INVALID_ARGUMENT.
std::string Refusal(const absl::StatusOr<DeepLTranslateRequest>& request) {
  EXPECT_TRUE(absl::IsInvalidArgument(request.status())) << request.status();
  return std::string(request.status().message());
}

TEST(DeepLLanguageTest, RegionalVariantsAreTheModelsLanguage) {
  EXPECT_EQ(*ModelLanguageOfDeepL("EN-GB", "target_lang"), "en");
  EXPECT_EQ(*ModelLanguageOfDeepL("en-us", "target_lang"), "en");
  EXPECT_EQ(*ModelLanguageOfDeepL("PT-BR", "target_lang"), "pt");
  EXPECT_EQ(*ModelLanguageOfDeepL("PT-PT", "target_lang"), "pt");
  EXPECT_EQ(*ModelLanguageOfDeepL("ZH-HANS", "target_lang"), "zh");
  EXPECT_EQ(*ModelLanguageOfDeepL("DE", "source_lang"), "de");
  for (const char* bad : {"", "E", "ENGLISH", "EN-", "EN-GB-X", "E1", "EN-G_B", "de de"}) {
    const absl::StatusOr<std::string> refused = ModelLanguageOfDeepL(bad, "target_lang");
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << bad;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "'target_lang'")) << bad;
  }
}

TEST(DeepLAuthKeyTest, TheDeepLSchemeOnly) {
  EXPECT_EQ(DeepLAuthKey("DeepL-Auth-Key abc:fx"), "abc:fx");
  EXPECT_EQ(DeepLAuthKey("deepl-auth-key  abc "), "abc");
  EXPECT_EQ(DeepLAuthKey("Bearer abc"), std::nullopt);
  EXPECT_EQ(DeepLAuthKey("DeepL-Auth-Key "), std::nullopt);
  EXPECT_EQ(DeepLAuthKey(std::nullopt), std::nullopt);
}

TEST(DeepLTranslateTest, AFormsRepeatedTextIsEachText) {
  const absl::StatusOr<DeepLTranslateRequest> request =
      Translate("text=Hello+world%21&text=Second.&target_lang=EN-GB&source_lang=de");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(request->core.texts, ElementsAre("Hello world!", "Second."));
  EXPECT_EQ(request->core.target_language, "en");
  EXPECT_EQ(request->core.source_language, "de");
  EXPECT_EQ(request->source_lang, "DE");
  EXPECT_EQ(request->core.texts_field, "text");
  EXPECT_EQ(request->core.target_field, "target_lang");
  EXPECT_EQ(request->core.options.format, RequestedOptions::kPlainText);
  EXPECT_TRUE(request->core.options.split_sentences);
}

TEST(DeepLTranslateTest, JsonWithItsOptions) {
  const absl::StatusOr<DeepLTranslateRequest> request = Translate(
      R"({"text": "<p>a</p>", "target_lang": "de", "tag_handling": "xml",
          "ignore_tags": ["x", "y,z"], "split_sentences": 0, "preserve_formatting": true,
          "formality": "prefer_less", "show_billed_characters": "1"})",
      kJson);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(request->core.texts, ElementsAre("<p>a</p>"));
  EXPECT_EQ(request->core.source_language, "auto");
  EXPECT_EQ(request->source_lang, "");
  EXPECT_EQ(request->core.options.format, RequestedOptions::kHtml);
  EXPECT_THAT(request->core.options.ignore_tags, ElementsAre("x", "y", "z"));
  EXPECT_FALSE(request->core.options.split_sentences);
  EXPECT_TRUE(request->show_billed_characters);
}

TEST(DeepLTranslateTest, AGlossaryNeedsASourceLanguage) {
  const absl::StatusOr<DeepLTranslateRequest> request =
      Translate("text=a&target_lang=DE&source_lang=EN&glossary_id=g-1");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->core.options.glossary_id, "g-1");
  EXPECT_TRUE(absl::StrContains(Refusal(Translate("text=a&target_lang=DE&glossary_id=g-1")),
                                "'glossary_id' needs 'source_lang'"));
}

TEST(DeepLTranslateTest, BadFieldsAreRefusedNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"target_lang=DE", "'text' not specified"},
      {"text=a", "'target_lang' not specified"},
      {"text=a&target_lang=DE&target_lang=FR", "'target_lang' is given 2 times"},
      {"text=a&target_lang=DE&tag_handling=markdown", "'tag_handling'"},
      {"text=a&target_lang=DE&split_sentences=yes", "'split_sentences'"},
      {"text=a&target_lang=DE&preserve_formatting=2", "'preserve_formatting'"},
      {"text=a&target_lang=DE&formality=more", "formality 'more' is not supported"},
      {"text=a&target_lang=DE&formality=LESS", "formality 'less' is not supported"},
      {"text=a&target_lang=DE&formality=loud", "'formality'"},
      {"text=a&target_lang=DE&ignore_tags=x", "'ignore_tags' needs tag_handling"},
      {"text=a&target_lang=DE&tag_handling=html&ignore_tags=%3Cb%3E", "'ignore_tags' holds"},
  };
  for (const auto& [body, needle] : cases) {
    EXPECT_TRUE(absl::StrContains(Refusal(Translate(body)), needle)) << body;
  }
  EXPECT_TRUE(absl::StrContains(Refusal(Translate(R"({"text": [], "target_lang": "DE"})", kJson)),
                                "'text' is an array of 0 elements"));
  EXPECT_TRUE(absl::StrContains(Refusal(Translate(R"({"text": [1], "target_lang": "DE"})", kJson)),
                                "'text' holds 1"));
  EXPECT_TRUE(absl::StrContains(Refusal(Translate("[1]", kJson)), "not an object"));
  EXPECT_TRUE(absl::StrContains(Refusal(Translate("text=a", "multipart/form-data; boundary=x")),
                                "POST /v2/document only"));
}

TEST(DeepLTranslateTest, TheKeyIsCheckedFirstAuthKeyBeforeTheHeaders) {
  std::vector<std::optional<std::string>> checked;
  auto check = [&](const std::optional<std::string>& key) {
    checked.push_back(key);
    return key == "good" ? absl::OkStatus() : absl::UnauthenticatedError("bad key");
  };
  const ValueBounds bounds = RequestValueBounds(RequestLimits{});
  // A bad key is refused before the missing text is noticed.
  EXPECT_TRUE(absl::IsUnauthenticated(
      ParseDeepLTranslate("target_lang=DE", kForm, bounds, "bad", check).status()));
  const absl::StatusOr<DeepLTranslateRequest> request =
      ParseDeepLTranslate("auth_key=good&text=a&target_lang=DE", kForm, bounds, "header", check);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->core.api_key, "good");
  EXPECT_THAT(checked, ElementsAre("bad", "good"));
}

TEST(DeepLGlossaryRequestTest, FieldsAndFormat) {
  const ValueBounds bounds = RequestValueBounds(RequestLimits{});
  const absl::StatusOr<DeepLGlossaryRequest> request = ParseDeepLGlossary(
      R"({"name": "g", "source_lang": "EN", "target_lang": "de", "entries": "a,b",
          "entries_format": "CSV"})",
      kJson, bounds, std::nullopt, NoKeyCheck);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->source_language, "en");
  EXPECT_EQ(request->target_language, "de");
  EXPECT_TRUE(request->csv);
  EXPECT_TRUE(absl::StrContains(ParseDeepLGlossary("name=g&source_lang=en&target_lang=de", kForm,
                                                   bounds, std::nullopt, NoKeyCheck)
                                    .status()
                                    .message(),
                                "'entries' not specified"));
  EXPECT_TRUE(absl::StrContains(
      ParseDeepLGlossary("name=g&source_lang=en&target_lang=de&entries=a&entries_format=xlsx",
                         kForm, bounds, std::nullopt, NoKeyCheck)
          .status()
          .message(),
      "tsv or csv"));
}

TEST(DeepLDocumentTest, TheKeyFromTheBodyElseTheQuery) {
  const ValueBounds bounds = RequestValueBounds(RequestLimits{});
  EXPECT_EQ(ParseDeepLDocumentKey("document_key=abc", kForm, "document_key=q", bounds, std::nullopt,
                                  NoKeyCheck)
                ->document_key,
            "abc");
  EXPECT_EQ(ParseDeepLDocumentKey("", "", "document_key=q", bounds, std::nullopt, NoKeyCheck)
                ->document_key,
            "q");
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseDeepLDocumentKey("", "", "", bounds, std::nullopt, NoKeyCheck).status()));
}

TEST(DeepLDocumentTest, AnUploadsFileAndFields) {
  const std::string body =
      "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.md\"\r\n"
      "Content-Type: text/markdown\r\n\r\n# Hi\r\n"
      "--x\r\nContent-Disposition: form-data; name=\"target_lang\"\r\n\r\nPT-BR\r\n"
      "--x\r\nContent-Disposition: form-data; name=\"output_format\"\r\n\r\nMD\r\n--x--\r\n";
  const absl::StatusOr<DeepLDocumentUpload> upload = ParseDeepLDocumentUpload(
      body, "multipart/form-data; boundary=x", 1 << 20, std::nullopt, NoKeyCheck);
  ASSERT_TRUE(upload.ok()) << upload.status();
  EXPECT_EQ(upload->content, "# Hi");
  EXPECT_EQ(upload->file_name, "a.md");
  EXPECT_EQ(upload->media_type, "text/markdown");
  EXPECT_EQ(upload->translation.target_language, "pt");
  EXPECT_EQ(upload->translation.source_language, "auto");
  std::string pdf = body;
  pdf.replace(pdf.find("\r\nMD\r\n"), 6, "\r\npdf\r\n");
  const absl::StatusOr<DeepLDocumentUpload> refused = ParseDeepLDocumentUpload(
      pdf, "multipart/form-data; boundary=x", 1 << 20, std::nullopt, NoKeyCheck);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "'output_format' is \"pdf\""))
      << refused.status();
}

}  // namespace
}  // namespace mtserve
