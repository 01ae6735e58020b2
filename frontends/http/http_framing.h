// How an HTTP/1.1 request's body is framed, from its header fields, refusing every framing that
// two readers could take differently (RFC 9112 §6): a proxy in front that reads a request's end
// elsewhere than the server does could be made to forward a hidden request. Pure, over the
// fields as the HTTP server parsed them, so it is tested without a server.
//
// Every framing rule of the server is here, in two parts: Beast's request parser refuses some
// framings itself while it reads a head (ParserFramingError words its refusals), and
// RequestBodyFraming refuses, over the whole head, what the parser lets through (a
// Transfer-Encoding other than chunked, which it would take as no coding; a Content-Length
// list such as "5, 5").
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "boost/system/error_code.hpp"

namespace mtserve {

struct HeaderField {
  absl::string_view name;
  absl::string_view value;
};

struct BodyFraming {
  bool chunked = false;        // Transfer-Encoding: chunked.
  int64_t content_length = 0;  // The body's bytes when not chunked (0: no body).

  bool has_body() const { return chunked || content_length > 0; }
};

// The framing of a request with `fields` (every field of its head). INVALID_ARGUMENT, naming the
// header and the rule, for: two Content-Length fields with different values; a Content-Length
// that is not a number of bytes (digits only); Transfer-Encoding with Content-Length;
// Transfer-Encoding other than exactly "chunked", or given more than once.
absl::StatusOr<BodyFraming> RequestBodyFraming(absl::Span<const HeaderField> fields);

// The INVALID_ARGUMENT, worded as RequestBodyFraming words the same rule, for an error of Beast's
// parser that refuses a head's framing (error::bad_content_length, multiple_content_length,
// bad_transfer_encoding); nullopt for any other error.
std::optional<absl::Status> ParserFramingError(const boost::system::error_code& error);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_
