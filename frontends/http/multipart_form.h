// multipart/form-data bodies (RFC 7578 over RFC 2046's multipart syntax), as browsers and
// LibreTranslate's clients send a file: the boundary from the Content-Type, then each part's
// Content-Disposition (form-data, its name, its filename or RFC 8187 filename*), Content-Type,
// and body bytes exactly as sent (binary-safe: only the CRLF before each delimiter belongs to the
// syntax). Beast has no such parser, and Debian's MIME libraries (GMime, mimetic, vmime) parse
// mail: unbounded trees with mail's decodings and leniencies, so this is a small one.
//
// The body is parsed whole, as the transport has already read it within its body limit; parts
// refer to its bytes (no copy of a file). Bounded: the total size, the number of parts, each part's
// header block; every step is a linear scan, so the work is a small constant per byte. Strict
// where leniency would lose or invent bytes: a body without its closing delimiter (truncated),
// a Content-Transfer-Encoding other than an identity, obsolete header folding, a delimiter line
// followed by anything but whitespace are errors, each naming the part and what was wrong.
#ifndef MTSERVE_FRONTENDS_HTTP_MULTIPART_FORM_H_
#define MTSERVE_FRONTENDS_HTTP_MULTIPART_FORM_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

struct MultipartLimits {
  size_t max_body_bytes = 64 << 20;
  size_t max_parts = 32;
  size_t max_header_bytes = 8 << 10;  // One part's header block, its final CRLF CRLF included.
};

struct FormPart {
  std::string name;                      // Content-Disposition's name.
  std::optional<std::string> file_name;  // filename* (decoded) if given, else filename.
  std::string content_type;              // As sent ("" if none: text/plain by RFC 7578).
  absl::string_view body;                // Bytes of the parsed body.
};

// The boundary of a Content-Type field value "multipart/form-data; boundary=..." (the boundary
// a token or a quoted string, 1 to 70 characters of RFC 2046's set). INVALID_ARGUMENT naming
// what is wrong otherwise: another media type, no boundary, a boundary too long or of other
// characters.
absl::StatusOr<std::string> MultipartBoundary(absl::string_view content_type);

// The parts of `body` delimited by `boundary` (from MultipartBoundary), in order. The preamble
// before the first delimiter and the epilogue after the last are ignored. INVALID_ARGUMENT
// naming `what` (say "the request body"), the part (1-based, and its name once known) and the
// limit or the flaw. The parts' bodies refer to `body`, which must outlive them.
absl::StatusOr<std::vector<FormPart>> ParseMultipartForm(absl::string_view body,
                                                         absl::string_view boundary,
                                                         const MultipartLimits& limits,
                                                         absl::string_view what);

// The first part named `name`, or null.
const FormPart* FindFormPart(const std::vector<FormPart>& parts, absl::string_view name);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_MULTIPART_FORM_H_
