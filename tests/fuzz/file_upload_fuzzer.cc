// A file's form as the HTTP front end reads it (frontends/http/file_upload.h), native and
// LibreTranslate's, on the stack of the server's request threads: the input's first line is the
// Content-Type field's value, the rest the body. Any bytes give a file request or an
// INVALID_ARGUMENT, never a crash; a request's file is the form's part `file`; and the
// Content-Disposition of its name is printable ASCII whose filename* decodes back to the name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "frontends/http/file_upload.h"
#include "frontends/http/multipart_form.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"

namespace {

constexpr int64_t kMaxBody = 1 << 16;

int Hex(char c) {
  return absl::ascii_isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'A' + 10;
}

void CheckDisposition(const std::string& name) {
  const std::string disposition = mtserve::AttachmentDisposition(name);
  for (const char c : disposition) {
    FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f);
  }
  constexpr char kStar[] = "filename*=UTF-8''";
  const size_t star = disposition.find(kStar);
  FUZZ_CHECK(absl::StartsWith(disposition, "attachment; filename=\"") && star != std::string::npos);
  const absl::string_view encoded = absl::string_view(disposition).substr(star + sizeof(kStar) - 1);
  std::string decoded;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      decoded += encoded[i];
      continue;
    }
    FUZZ_CHECK(i + 2 < encoded.size());
    decoded += static_cast<char>(Hex(encoded[i + 1]) * 16 + Hex(encoded[i + 2]));
    i += 2;
  }
  FUZZ_CHECK(decoded == name);
}

void CheckRequest(const absl::StatusOr<mtserve::FileRequest>& request, absl::string_view body,
                  absl::string_view content_type) {
  if (!request.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(request.status()));
    return;
  }
  // The file is the form's part of that name, as the parser gives it.
  const absl::StatusOr<std::string> boundary = mtserve::MultipartBoundary(content_type);
  FUZZ_CHECK(boundary.ok());
  mtserve::MultipartLimits limits;
  limits.max_body_bytes = kMaxBody;
  const auto parts = mtserve::ParseMultipartForm(body, *boundary, limits, "the request body");
  FUZZ_CHECK(parts.ok());
  const mtserve::FormPart* file = mtserve::FindFormPart(*parts, "file");
  FUZZ_CHECK(file != nullptr && request->content == file->body &&
             request->file_name == file->file_name.value_or(""));
  CheckDisposition(request->file_name);
}

void Check(absl::string_view input) {
  const size_t newline = input.find('\n');
  if (newline == absl::string_view::npos) return;
  const absl::string_view content_type = input.substr(0, newline);
  const absl::string_view body = input.substr(newline + 1);
  mtserve::ValueBounds bounds;
  bounds.max_values = 256;
  CheckRequest(mtserve::ParseFileUpload(body, content_type, kMaxBody, bounds), body, content_type);
  CheckRequest(mtserve::ParseLibreTranslateFileUpload(body, content_type, kMaxBody), body,
               content_type);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  // On the stack the server parses it on (an HTTP request thread's, the smallest).
  mtserve::RunOnRequestThreadStack([input] { Check(input); });
  return 0;
}
