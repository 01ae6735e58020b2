// A file's form read into a file job's request (frontends/http/file_upload.h), native and
// LibreTranslate's, against forms written out by hand; and the Content-Disposition of a
// translated file's name against RFC 6266 / RFC 8187 encodings written out by hand.
#include "frontends/http/file_upload.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kType[] = "multipart/form-data; boundary=b0undary";
constexpr int64_t kMax = 1 << 20;

ValueBounds Bounds() {
  ValueBounds bounds;
  bounds.max_values = 64;
  bounds.values_limit = "64";
  return bounds;
}

std::string Part(const std::string& name, const std::string& body,
                 const std::string& file_name = "", const std::string& type = "") {
  std::string part = "--b0undary\r\nContent-Disposition: form-data; name=\"" + name + "\"";
  if (!file_name.empty()) part += "; filename=\"" + file_name + "\"";
  part += "\r\n";
  if (!type.empty()) part += "Content-Type: " + type + "\r\n";
  return part + "\r\n" + body + "\r\n";
}
const std::string kEnd = "--b0undary--\r\n";

TEST(FileUploadTest, TheNativeFormGivesTheFileItsClaimsAndTheTranslationsFields) {
  const std::string body = Part("file", "# Title\r\n\r\nText.\n", "notes.md", "text/markdown") +
                           Part("source_language", "en") + Part("target_language", "de") +
                           Part("format", "markdown") + Part("options", R"({"beam_size": 3})") +
                           kEnd;
  const absl::StatusOr<FileRequest> request = ParseFileUpload(body, kType, kMax, Bounds());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->content, "# Title\r\n\r\nText.\n");  // Its bytes as sent, CRLF and all.
  EXPECT_EQ(request->file_name, "notes.md");
  EXPECT_EQ(request->media_type, "text/markdown");
  EXPECT_EQ(request->format, "markdown");
  EXPECT_EQ(request->translation.source_language, "en");
  EXPECT_EQ(request->translation.target_language, "de");
  EXPECT_EQ(request->translation.model, "");
  EXPECT_EQ(request->translation.options.beam_size, 3);
  EXPECT_EQ(request->file_field, "file");
}

TEST(FileUploadTest, AFormWithoutTheFileNamesThePart) {
  const absl::StatusOr<FileRequest> request =
      ParseFileUpload(Part("model", "en-de") + kEnd, kType, kMax, Bounds());
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(), HasSubstr("no part \"file\""));
}

TEST(FileUploadTest, UnknownRepeatedAndMalformedPartsAreRefusedNamingThem) {
  const std::string file = Part("file", "Hello.", "a.txt");
  const absl::StatusOr<FileRequest> unknown =
      ParseFileUpload(file + Part("colour", "blue") + kEnd, kType, kMax, Bounds());
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              AllOf(HasSubstr("\"colour\""), HasSubstr("file, model, source_language")));
  const absl::StatusOr<FileRequest> twice =
      ParseFileUpload(file + Part("model", "a") + Part("model", "b") + kEnd, kType, kMax, Bounds());
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("part \"model\" is given twice"));
  const absl::StatusOr<FileRequest> options =
      ParseFileUpload(file + Part("options", R"({"beam": 2})") + kEnd, kType, kMax, Bounds());
  ASSERT_FALSE(options.ok());
  EXPECT_THAT(options.status().message(), HasSubstr("part \"options\""));
  const absl::StatusOr<FileRequest> json =
      ParseFileUpload(R"({"file": "x"})", "application/json", kMax, Bounds());
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(json.status().message(), HasSubstr("multipart/form-data"));
}

TEST(FileUploadTest, ABodyOverTheLimitIsRefusedNamingIt) {
  const std::string body = Part("file", std::string(2000, 'a'), "a.txt") + kEnd;
  const absl::StatusOr<FileRequest> request = ParseFileUpload(body, kType, 1000, Bounds());
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(), HasSubstr("1000"));
}

TEST(FileUploadTest, LibreTranslatesFormAsLibreTranslateReadsIt) {
  const std::string body = Part("file", "1\n00:00:01,000 --> 00:00:02,000\nHi.\n", "film.srt") +
                           Part("source", "auto") + Part("target", "de") + Part("api_key", "k1") +
                           Part("something_else", "ignored") + kEnd;
  const absl::StatusOr<FileRequest> request = ParseLibreTranslateFileUpload(body, kType, kMax);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->file_name, "film.srt");
  EXPECT_EQ(request->translation.source_language, "auto");
  EXPECT_EQ(request->translation.target_language, "de");
  EXPECT_EQ(request->translation.api_key, "k1");
  EXPECT_EQ(request->translation.source_field, "source");
  // LibreTranslate's words for what is missing.
  const absl::StatusOr<FileRequest> no_file = ParseLibreTranslateFileUpload(
      Part("source", "en") + Part("target", "de") + kEnd, kType, kMax);
  ASSERT_FALSE(no_file.ok());
  EXPECT_EQ(no_file.status().message(), "Invalid request: missing file parameter");
  const absl::StatusOr<FileRequest> no_target = ParseLibreTranslateFileUpload(
      Part("file", "Hello.", "a.txt") + Part("source", "en") + kEnd, kType, kMax);
  ASSERT_FALSE(no_target.ok());
  EXPECT_EQ(no_target.status().message(), "Invalid request: missing target parameter");
}

TEST(FileUploadTest, TheDispositionHasAnAsciiNameAndTheUtf8One) {
  EXPECT_EQ(AttachmentDisposition("notes.md"),
            "attachment; filename=\"notes.md\"; filename*=UTF-8''notes.md");
  // "é" is C3 A9 in UTF-8; a space is %20; a quote is never inside the quoted name.
  EXPECT_EQ(AttachmentDisposition("caf\xC3\xA9 \"1\".srt"),
            "attachment; filename=\"caf__ _1_.srt\"; filename*=UTF-8''caf%C3%A9%20%221%22.srt");
  EXPECT_EQ(AttachmentDisposition("a\\b/c%d;e"),
            "attachment; filename=\"a_b_c_d;e\"; filename*=UTF-8''a%5Cb%2Fc%25d%3Be");
}

}  // namespace
}  // namespace mtserve
