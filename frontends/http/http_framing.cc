#include "frontends/http/http_framing.h"

#include <optional>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "boost/beast/http/error.hpp"

namespace mtserve {

absl::StatusOr<BodyFraming> RequestBodyFraming(absl::Span<const HeaderField> fields) {
  std::optional<absl::string_view> length;
  std::optional<absl::string_view> encoding;
  for (const HeaderField& field : fields) {
    const absl::string_view value = absl::StripAsciiWhitespace(field.value);
    if (absl::EqualsIgnoreCase(field.name, "Content-Length")) {
      if (value.empty() || !absl::c_all_of(value, absl::ascii_isdigit)) {
        return absl::InvalidArgumentError(
            absl::StrCat("header Content-Length is \"", Excerpt(value),
                         "\": it must be a number of bytes, digits only (RFC 9112 §6.3)"));
      }
      if (length.has_value() && *length != value) {
        return absl::InvalidArgumentError(
            absl::StrCat("header Content-Length is given twice, \"", Excerpt(*length), "\" and \"",
                         Excerpt(value), "\": a request has one length (RFC 9112 §6.3)"));
      }
      length = value;
    } else if (absl::EqualsIgnoreCase(field.name, "Transfer-Encoding")) {
      if (encoding.has_value()) {
        return absl::InvalidArgumentError(
            "header Transfer-Encoding is given twice: the only transfer coding accepted is "
            "chunked, once");
      }
      if (!absl::EqualsIgnoreCase(value, "chunked")) {
        return absl::InvalidArgumentError(
            absl::StrCat("header Transfer-Encoding is \"", Excerpt(value),
                         "\": the only transfer coding accepted is chunked"));
      }
      encoding = value;
    }
  }
  if (length.has_value() && encoding.has_value()) {
    return absl::InvalidArgumentError(
        "headers Content-Length and Transfer-Encoding are both given: a request is framed by one "
        "of them (RFC 9112 §6.3)");
  }
  BodyFraming framing;
  framing.chunked = encoding.has_value();
  if (length.has_value() && !absl::SimpleAtoi(*length, &framing.content_length)) {
    return absl::InvalidArgumentError(absl::StrCat("header Content-Length is \"", Excerpt(*length),
                                                   "\": more bytes than any body may have"));
  }
  return framing;
}

std::optional<absl::Status> ParserFramingError(const boost::system::error_code& error) {
  namespace http = boost::beast::http;
  if (error == http::error::multiple_content_length) {
    return absl::InvalidArgumentError(
        "header Content-Length is given twice with different values: a request has one length "
        "(RFC 9112 §6.3)");
  }
  if (error == http::error::bad_content_length) {
    return absl::InvalidArgumentError(
        "header Content-Length is not a number of bytes (digits only), or comes after "
        "Transfer-Encoding: a request is framed by one of them (RFC 9112 §6.3)");
  }
  if (error == http::error::bad_transfer_encoding) {
    return absl::InvalidArgumentError(
        "headers Content-Length and Transfer-Encoding are both given, or Transfer-Encoding is "
        "given twice: a request is framed by one of them, and the only transfer coding accepted "
        "is chunked, once (RFC 9112 §6.3)");
  }
  return std::nullopt;
}

}  // namespace mtserve
