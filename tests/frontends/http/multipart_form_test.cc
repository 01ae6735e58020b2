// multipart/form-data bodies (frontends/http/multipart_form.h): the boundary from the
// Content-Type, parts' names, file names and types, bodies byte for byte, and an error naming the
// part and the limit or flaw for each way a body can be wrong.
#include "frontends/http/multipart_form.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;
using std::string_literals::operator""s;

std::string Boundary(absl::string_view content_type) {
  absl::StatusOr<std::string> boundary = MultipartBoundary(content_type);
  EXPECT_TRUE(boundary.ok()) << boundary.status();
  return boundary.value_or("");
}

std::string BoundaryError(absl::string_view content_type) {
  absl::StatusOr<std::string> boundary = MultipartBoundary(content_type);
  EXPECT_EQ(boundary.status().code(), absl::StatusCode::kInvalidArgument) << content_type;
  return std::string(boundary.status().message());
}

std::vector<FormPart> Parse(absl::string_view body, MultipartLimits limits = {}) {
  absl::StatusOr<std::vector<FormPart>> parts =
      ParseMultipartForm(body, "XyZ", limits, "the request body");
  EXPECT_TRUE(parts.ok()) << parts.status();
  return parts.value_or(std::vector<FormPart>());
}

std::string ParseError(absl::string_view body, MultipartLimits limits = {}) {
  absl::StatusOr<std::vector<FormPart>> parts =
      ParseMultipartForm(body, "XyZ", limits, "the request body");
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parts.status().message());
}

TEST(MultipartBoundaryTest, FromTheContentType) {
  // As Chrome and curl write it.
  EXPECT_EQ(Boundary("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW"),
            "----WebKitFormBoundary7MA4YWxkTrZu0gW");
  EXPECT_EQ(Boundary("multipart/form-data; boundary=------------------------d74496d66958873e"),
            "------------------------d74496d66958873e");
  EXPECT_EQ(Boundary("Multipart/Form-Data;BOUNDARY=abc"), "abc");
  EXPECT_EQ(Boundary("multipart/form-data; charset=utf-8; boundary=\"a b:c=d?\""), "a b:c=d?");
  EXPECT_EQ(Boundary("multipart/form-data; boundary=abc;"), "abc");
  EXPECT_EQ(Boundary(absl::StrCat("multipart/form-data; boundary=", std::string(70, 'b'))),
            std::string(70, 'b'));
}

TEST(MultipartBoundaryTest, RefusedNamingWhatIsWrong) {
  EXPECT_THAT(BoundaryError("application/json"), HasSubstr("not multipart/form-data"));
  EXPECT_THAT(BoundaryError("multipart/mixed; boundary=abc"), HasSubstr("not multipart/form-data"));
  EXPECT_THAT(BoundaryError("multipart/form-data"), HasSubstr("no boundary"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary="), HasSubstr("no boundary"));
  EXPECT_THAT(BoundaryError(absl::StrCat("multipart/form-data; boundary=", std::string(71, 'b'))),
              HasSubstr("71 characters, more than 70"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary=a@b"), HasSubstr("characters"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary=\"ab \""), HasSubstr("characters"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary=\"abc"), HasSubstr("closing quote"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary=a; boundary=b"), HasSubstr("twice"));
  EXPECT_THAT(BoundaryError("multipart/form-data; boundary"), HasSubstr("no value"));
}

TEST(MultipartFormTest, ALibreTranslateFileForm) {
  // A file whose bytes hold what looks like syntax: NUL, bare CR and LF, CRLF, "--", and the
  // delimiter's start not followed by the rest of the boundary.
  const std::string file = "line 1\r\nline\0 2\r--X\n\r\n--XyQ\r\n"s;
  const std::string body = absl::StrCat(
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"source\"\r\n"
      "\r\n"
      "en\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"target\"\r\n"
      "\r\n"
      "de\r\n"
      "--XyZ\r\n"
      "content-disposition: form-data; name=\"file\"; filename=\"notes.srt\"\r\n"
      "Content-Type: application/x-subrip\r\n"
      "\r\n",
      file,
      "\r\n"
      "--XyZ--\r\n");
  const std::vector<FormPart> parts = Parse(body);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].name, "source");
  EXPECT_EQ(parts[0].body, "en");
  EXPECT_FALSE(parts[0].file_name.has_value());
  EXPECT_EQ(parts[0].content_type, "");
  EXPECT_EQ(parts[1].name, "target");
  EXPECT_EQ(parts[1].body, "de");
  EXPECT_EQ(parts[2].name, "file");
  EXPECT_EQ(parts[2].file_name, "notes.srt");
  EXPECT_EQ(parts[2].content_type, "application/x-subrip");
  EXPECT_EQ(parts[2].body, file);
  ASSERT_NE(FindFormPart(parts, "target"), nullptr);
  EXPECT_EQ(FindFormPart(parts, "target")->body, "de");
  EXPECT_EQ(FindFormPart(parts, "api_key"), nullptr);
}

// A form as written by a client nobody here wrote (the fuzz target's seeds: its Content-Type
// line, then its body).
struct Written {
  std::string content_type;
  std::string body;
};
Written ReadSeed(const std::string& name) {
  std::ifstream in(absl::StrCat(MTSERVE_TEST_DATA_DIR, "/../fuzz/corpus/multipart_form/", name),
                   std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t newline = bytes.find('\n');
  EXPECT_NE(newline, std::string::npos) << name;
  return {bytes.substr(0, newline), bytes.substr(newline + 1)};
}

TEST(MultipartFormTest, FormsWrittenByCurlAndUrllib3) {
  // curl 7.88 -F file=@notes.srt -F source=en -F target=de -F api_key=k
  const Written curl = ReadSeed("curl_libretranslate");
  const std::string curl_boundary = Boundary(curl.content_type);
  absl::StatusOr<std::vector<FormPart>> parts =
      ParseMultipartForm(curl.body, curl_boundary, {}, "the request body");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ((*parts)[0].name, "file");
  EXPECT_EQ((*parts)[0].file_name, "notes.srt");
  EXPECT_EQ((*parts)[0].content_type, "application/octet-stream");
  EXPECT_EQ((*parts)[0].body,
            "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello there.\r\n\r\n"
            "2\r\n00:00:03,000 --> 00:00:04,000\r\nHow are you?\r\n");
  EXPECT_EQ(FindFormPart(*parts, "source")->body, "en");
  EXPECT_EQ(FindFormPart(*parts, "target")->body, "de");
  EXPECT_EQ(FindFormPart(*parts, "api_key")->body, "k");

  // urllib3 2.7's encode_multipart_formdata, a file name with a quote and non-ASCII letters.
  const Written urllib3 = ReadSeed("urllib3_markdown");
  parts = ParseMultipartForm(urllib3.body, Boundary(urllib3.content_type), {}, "the request body");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  const FormPart* file = FindFormPart(*parts, "file");
  ASSERT_NE(file, nullptr);
  // It writes a quote as %22 (the HTML standard's way), which is left as it is: a file may be
  // named with "%22" as well.
  EXPECT_EQ(file->file_name,
            "b\xC3\xA9"
            "b\xC3\xA9"
            " %22x%22.md");
  EXPECT_EQ(file->content_type, "text/markdown");
  EXPECT_EQ(file->body, "# Title\n\nSome *text* and \0 bytes\r\n--"s);
}

TEST(MultipartFormTest, PreambleEpiloguePaddingAndEmptyBodies) {
  const std::vector<FormPart> parts = Parse(
      "This is the preamble.\r\n--XyZ  \t\r\n"
      "Content-Disposition: form-data; name=empty\r\n"
      "X-Other: ignored\r\n"
      "\r\n"
      "\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"\"\r\n"
      "\r\n"
      "\r\n\r\n"
      "--XyZ--  and the epilogue\r\n--XyZ\r\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "empty");
  EXPECT_EQ(parts[0].body, "");
  EXPECT_EQ(parts[1].name, "");
  EXPECT_EQ(parts[1].body, "\r\n");
}

TEST(MultipartFormTest, FileNames) {
  const std::vector<FormPart> parts = Parse(
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"a\"; filename=\"say \\\"hi\\\".txt\"\r\n"
      "\r\n"
      "1\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"b\"; filename=\"naive.txt\"; "
      "filename*=UTF-8''na%C3%AFve%20file.txt\r\n"
      "\r\n"
      "2\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"c\"; filename=\"\xC3\xA9t\xC3\xA9.md\"\r\n"
      "\r\n"
      "3\r\n"
      "--XyZ--");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].file_name, "say \"hi\".txt");
  EXPECT_EQ(parts[1].file_name, "na\xC3\xAFve file.txt");  // filename* wins.
  EXPECT_EQ(parts[2].file_name, "\xC3\xA9t\xC3\xA9.md");   // Raw UTF-8, as browsers send it.
}

std::string OnePart(absl::string_view header_lines, absl::string_view body = "x") {
  return absl::StrCat("--XyZ\r\n", header_lines, "\r\n", body, "\r\n--XyZ--\r\n");
}

TEST(MultipartFormTest, FlawedHeadersNameThePart) {
  EXPECT_THAT(ParseError(OnePart("Content-Type: text/plain\r\n")),
              HasSubstr("the request body's part 1 has no Content-Disposition"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: attachment; name=\"f\"\r\n")),
              HasSubstr("not form-data"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; filename=\"a.txt\"\r\n")),
              HasSubstr("has no name"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"\r\n"
                                 "Content-Disposition: form-data; name=\"g\"\r\n")),
              HasSubstr("part 1 (\"f\") has two Content-Disposition"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"\r\n"
                                 "Content-Transfer-Encoding: base64\r\n")),
              HasSubstr("part 1 (\"f\")'s Content-Transfer-Encoding \"base64\""));
  EXPECT_EQ(Parse(OnePart("Content-Disposition: form-data; name=\"f\"\r\n"
                          "Content-Transfer-Encoding: binary\r\n"))[0]
                .body,
            "x");
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data;\r\n name=\"f\"\r\n")),
              HasSubstr("folds a line"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition form-data\r\n")),
              HasSubstr("is not NAME: VALUE"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\0\"\r\n"s)),
              HasSubstr("control character 0"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"; "
                                 "filename*=ISO-8859-1''caf%E9.txt\r\n")),
              HasSubstr("only UTF-8"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"; "
                                 "filename*=UTF-8''caf%E9.txt\r\n")),
              HasSubstr("file name is not UTF-8"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"; "
                                 "filename*=UTF-8''caf%4\r\n")),
              HasSubstr("two hex digits"));
  EXPECT_THAT(ParseError(OnePart("Content-Disposition: form-data; name=\"f\"; "
                                 "filename*=UTF-8''a b\r\n")),
              HasSubstr("must be percent-encoded"));
}

TEST(MultipartFormTest, TruncatedOrMalformedBodies) {
  const std::string header = "Content-Disposition: form-data; name=\"file\"\r\n";
  // Cut before the closing delimiter: never a shorter file.
  EXPECT_THAT(ParseError(absl::StrCat("--XyZ\r\n", header, "\r\nhello")),
              HasSubstr("ends in the request body's part 1 (\"file\")'s body"));
  EXPECT_THAT(ParseError(absl::StrCat("--XyZ\r\n", header, "\r\nhello\r\n--XyZ\r\n")),
              HasSubstr("part 2's header (truncated?)"));
  EXPECT_THAT(ParseError(absl::StrCat("--XyZ\r\n", header)), HasSubstr("truncated"));
  EXPECT_THAT(ParseError(absl::StrCat("--XyZ\r\n", header, "\r\nhello\r\n--XyZ")),
              HasSubstr("without the closing \"--XyZ--\""));
  EXPECT_THAT(ParseError("no delimiter at all"), HasSubstr("has no delimiter line"));
  EXPECT_THAT(ParseError("--XyZ--\r\n"), HasSubstr("has no parts"));
  // The boundary inside a part, followed by more than whitespace.
  EXPECT_THAT(ParseError(absl::StrCat("--XyZ\r\n", header, "\r\na\r\n--XyZabc\r\nb\r\n--XyZ--")),
              HasSubstr("the delimiter line before the request body's part 2 is followed by "
                        "\"abc"));
  // Bare LF line ends are not CRLF.
  EXPECT_THAT(ParseError("--XyZ\nContent-Disposition: form-data; name=a\n\nx\n--XyZ--"),
              HasSubstr("not CRLF"));
}

TEST(MultipartFormTest, LimitsAreNamed) {
  std::string three;
  for (const char* name : {"a", "b", "c"}) {
    absl::StrAppend(&three, "--XyZ\r\nContent-Disposition: form-data; name=", name,
                    "\r\n\r\nv\r\n");
  }
  absl::StrAppend(&three, "--XyZ--\r\n");
  MultipartLimits limits;
  limits.max_parts = 3;
  EXPECT_EQ(Parse(three, limits).size(), 3u);
  limits.max_parts = 2;
  EXPECT_THAT(ParseError(three, limits),
              HasSubstr("the request body has more than the limit of 2 parts"));

  limits = {};
  limits.max_body_bytes = three.size();
  EXPECT_EQ(Parse(three, limits).size(), 3u);
  limits.max_body_bytes = three.size() - 1;
  EXPECT_THAT(ParseError(three, limits),
              HasSubstr(absl::StrCat("has ", three.size(), " bytes, more than the limit of ",
                                     three.size() - 1)));

  // One header block of exactly 64 bytes with its blank line, then one longer.
  const std::string fits = "Content-Disposition: form-data; name=\"f\"\r\nX-Pad: 12345678901\r\n";
  ASSERT_EQ(fits.size() + 2, 64u);
  limits = {};
  limits.max_header_bytes = 64;
  EXPECT_EQ(Parse(OnePart(fits), limits).size(), 1u);
  const std::string longer =
      "Content-Disposition: form-data; name=\"f\"\r\nX-Pad: 123456789012\r\n";
  EXPECT_THAT(ParseError(OnePart(longer), limits),
              HasSubstr("part 1's header is longer than the limit of 64 bytes"));
}

}  // namespace
}  // namespace mtserve
