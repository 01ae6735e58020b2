// How an HTTP/1.1 request's body is framed, from its header fields, refusing every framing that
// two readers could take differently (RFC 9112 §6): a proxy in front that reads a request's end
// elsewhere than the server does could be made to forward a hidden request. Pure, over the
// fields as the HTTP server parsed them, so it is tested without a server.
//
// What civetweb 1.15 refuses itself before a handler runs is not checked again by the server:
// a Transfer-Encoding other than chunked or identity (400), and a Content-Length that does not
// start with a number or is negative (411). What it lets through is refused here.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

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

// The framing of a request with `fields`, parsed by a server that keeps at most `max_fields`
// fields (civetweb's MG_MAX_HEADERS, 64) and drops the others silently: a request that filled
// them may have had more, a Content-Length among them, so it is refused (the limit is
// max_fields - 1). INVALID_ARGUMENT, naming the header and the rule, for: that; two
// Content-Length fields with different values; a Content-Length that is not a number of bytes
// (digits only); Transfer-Encoding with Content-Length; Transfer-Encoding other than exactly
// "chunked", or given more than once.
absl::StatusOr<BodyFraming> RequestBodyFraming(absl::Span<const HeaderField> fields,
                                               int max_fields);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_FRAMING_H_
