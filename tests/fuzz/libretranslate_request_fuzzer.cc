// A LibreTranslate POST /translate body through ParseLibreTranslateFields (and the same bytes as a
// POST /detect body through ParseLibreTranslateDetectFields), as JSON, as a form, as
// multipart and with no Content-Type (the input's first byte chooses: j, f, m, anything else), and
// with or without a header key (second byte). The key check accepts only the key "good". Any
// bytes give a request the core can take, or INVALID_ARGUMENT, or the key check's own error, on
// the stack of an HTTP request thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "frontends/libretranslate/libretranslate_request.h"
#include "serving/request_limits.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"

namespace {

absl::string_view ContentType(char c) {
  switch (c) {
    case 'j':
      return "application/json";
    case 'f':
      return "application/x-www-form-urlencoded; charset=utf-8";
    case 'm':
      return "multipart/form-data; boundary=x";
    default:
      return "";
  }
}

void Check(absl::string_view bytes) {
  const absl::string_view content_type = ContentType(bytes[0]);
  const std::optional<std::string> header_key =
      bytes[1] == 'k' ? std::optional<std::string>("good") : std::nullopt;
  const absl::string_view body = bytes.substr(2);

  bool key_checked = false;
  std::optional<std::string> checked_key;
  const absl::StatusOr<mtserve::LibreTranslateRequest> request = mtserve::ParseLibreTranslateFields(
      body, content_type, mtserve::RequestValueBounds(mtserve::RequestLimits{}), header_key,
      [&](const std::optional<std::string>& key) {
        FUZZ_CHECK(!key_checked);
        key_checked = true;
        checked_key = key;
        return key.has_value() && *key != "good" ? absl::UnauthenticatedError("not the good key")
                                                 : absl::OkStatus();
      });
  if (!request.ok()) {
    const absl::Status& status = request.status();
    FUZZ_CHECK(absl::IsInvalidArgument(status) ||
               (absl::IsUnauthenticated(status) && key_checked && checked_key != "good"));
    return;
  }
  // A request is only made after its key passed, and carries that key to the core.
  FUZZ_CHECK(key_checked && request->core.api_key == checked_key);
  FUZZ_CHECK(!checked_key.has_value() || *checked_key == "good");
  if (!request->core.api_key.has_value()) FUZZ_CHECK(!header_key.has_value());
  // Not routed; every field the core needs is set and within LibreTranslate's bounds.
  FUZZ_CHECK(request->core.model.empty());
  FUZZ_CHECK(request->core.texts_field == "q");
  FUZZ_CHECK(request->q_is_array || request->core.texts.size() == 1);
  FUZZ_CHECK(!request->source.empty() && !request->target.empty());
  FUZZ_CHECK(request->alternatives >= 0 && request->alternatives < 1000);
  const uint32_t hypotheses = static_cast<uint32_t>(request->alternatives) + 1;
  if (request->alternatives > 0) {
    FUZZ_CHECK(request->core.options.beam_size == hypotheses &&
               request->core.options.num_hypotheses == hypotheses);
  }
  // A form's fields are text: q is a string, never an array.
  if (content_type.substr(0, 33) == "application/x-www-form-urlencoded" &&
      absl::StripLeadingAsciiWhitespace(body).substr(0, 1) != "{") {
    FUZZ_CHECK(!request->q_is_array);
  }
  FUZZ_CHECK(content_type.substr(0, 9) != "multipart");
}

// The same bytes as a /detect body: one text, q, with the key checked first, as for /translate.
void CheckDetect(absl::string_view bytes) {
  const absl::string_view content_type = ContentType(bytes[0]);
  const std::optional<std::string> header_key =
      bytes[1] == 'k' ? std::optional<std::string>("good") : std::nullopt;
  bool key_checked = false;
  const absl::StatusOr<mtserve::DetectionRequest> request =
      mtserve::ParseLibreTranslateDetectFields(
          bytes.substr(2), content_type, mtserve::RequestValueBounds(mtserve::RequestLimits{}),
          header_key, [&](const std::optional<std::string>& key) {
            key_checked = true;
            return key.has_value() && *key != "good"
                       ? absl::UnauthenticatedError("not the good key")
                       : absl::OkStatus();
          });
  if (!request.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(request.status()) ||
               (absl::IsUnauthenticated(request.status()) && key_checked));
    return;
  }
  FUZZ_CHECK(key_checked && request->texts.size() == 1 && !request->texts[0].empty());
  FUZZ_CHECK(request->texts_field == "q" && !request->texts_repeated);
  FUZZ_CHECK(!request->api_key.has_value() || *request->api_key == "good");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // On the stack the server parses it on (an HTTP request thread's).
  mtserve::RunOnRequestThreadStack([bytes] {
    Check(bytes);
    CheckDetect(bytes);
  });
  return 0;
}
