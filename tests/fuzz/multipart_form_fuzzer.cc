// A multipart/form-data request as the HTTP front end will read it (frontends/http/
// multipart_form.h), on the stack of the server's request threads: the input's first line is the
// Content-Type field's value, the rest the body. Any bytes give parts or an INVALID_ARGUMENT,
// never a crash; parts stay within the limits and the body, in order; and the parts written
// out again as a form (names quoted, file names as filename*) parse back to the same parts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "frontends/http/multipart_form.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"

namespace {

constexpr mtserve::MultipartLimits kLimits = {
    .max_body_bytes = 1 << 16, .max_parts = 8, .max_header_bytes = 512};

std::string Quoted(absl::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string PercentEncoded(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

// `parts` as a form delimited by `boundary`.
std::string Write(const std::vector<mtserve::FormPart>& parts, absl::string_view boundary) {
  std::string body;
  for (const mtserve::FormPart& part : parts) {
    absl::StrAppend(&body, "--", boundary,
                    "\r\nContent-Disposition: form-data; name=", Quoted(part.name));
    if (part.file_name.has_value()) {
      absl::StrAppend(&body, "; filename*=UTF-8''", PercentEncoded(*part.file_name));
    }
    absl::StrAppend(&body, "\r\n");
    if (!part.content_type.empty())
      absl::StrAppend(&body, "Content-Type: ", part.content_type, "\r\n");
    absl::StrAppend(&body, "\r\n", part.body, "\r\n");
  }
  absl::StrAppend(&body, "--", boundary, "--\r\n");
  return body;
}

void Check(absl::string_view input) {
  const size_t newline = input.find('\n');
  if (newline == absl::string_view::npos) return;
  const absl::string_view content_type = input.substr(0, newline);
  const absl::string_view body = input.substr(newline + 1);
  const absl::StatusOr<std::string> boundary = mtserve::MultipartBoundary(content_type);
  if (!boundary.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(boundary.status()));
    return;
  }
  FUZZ_CHECK(!boundary->empty() && boundary->size() <= 70);
  const absl::StatusOr<std::vector<mtserve::FormPart>> parts =
      mtserve::ParseMultipartForm(body, *boundary, kLimits, "the request body");
  if (!parts.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(parts.status()));
    return;
  }
  FUZZ_CHECK(!parts->empty() && parts->size() <= kLimits.max_parts);
  const std::string delimiter = absl::StrCat("\r\n--", *boundary);
  const char* previous_end = body.data();
  for (const mtserve::FormPart& part : *parts) {
    // Within the body, in order, each followed by a delimiter, and none holding one.
    FUZZ_CHECK(part.body.data() >= previous_end &&
               part.body.data() + part.body.size() <= body.data() + body.size());
    previous_end = part.body.data() + part.body.size();
    const absl::string_view after(previous_end, body.data() + body.size() - previous_end);
    FUZZ_CHECK(after.substr(0, delimiter.size()) == delimiter);
    FUZZ_CHECK(part.body.find(delimiter) == absl::string_view::npos);
  }
  const std::string written = Write(*parts, *boundary);
  mtserve::MultipartLimits roomy = kLimits;
  roomy.max_body_bytes = written.size();
  roomy.max_header_bytes = 64 * 1024;
  const absl::StatusOr<std::vector<mtserve::FormPart>> again =
      mtserve::ParseMultipartForm(written, *boundary, roomy, "the written form");
  FUZZ_CHECK(again.ok() && again->size() == parts->size());
  for (size_t i = 0; i < parts->size(); ++i) {
    FUZZ_CHECK((*again)[i].name == (*parts)[i].name);
    FUZZ_CHECK((*again)[i].file_name == (*parts)[i].file_name);
    FUZZ_CHECK((*again)[i].content_type == (*parts)[i].content_type);
    FUZZ_CHECK((*again)[i].body == (*parts)[i].body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  // On the stack the server parses it on (an HTTP request thread's, the smallest).
  mtserve::RunOnRequestThreadStack([input] { Check(input); });
  return 0;
}
