// Bytes from a client as the HTTP transport reads them: Beast's request parser (with the
// transport's body) over the whole input (a head, then its body, chunked or not, fed in the pieces
// the first byte chooses), every refusal of the parser worded by ParserFramingError or answered as
// the transport answers it, the framing rules over every field of a head the parser took, and the
// forwarded client address of its X-Forwarded-For and Forwarded fields, and a model's name in a
// route's path. Any bytes give a request, or a refusal, never a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "boost/asio/buffer.hpp"
#include "boost/beast/http/parser.hpp"
#include "frontends/http/connection_limits.h"
#include "frontends/http/growing_string_body.h"
#include "frontends/http/http_framing.h"
#include "frontends/http/route_path.h"
#include "tests/test_lib/fuzz_check.h"

namespace {

namespace http = boost::beast::http;

std::optional<absl::string_view> Field(const http::request<mtserve::GrowingStringBody>& message,
                                       absl::string_view name) {
  const auto it = message.find(boost::beast::string_view(name.data(), name.size()));
  if (it == message.end()) return std::nullopt;
  return absl::string_view(it->value().data(), it->value().size());
}

void Check(absl::string_view bytes) {
  const size_t piece = 1 + static_cast<uint8_t>(bytes[0]) % 64;
  bytes.remove_prefix(1);
  // The transport's body (string_body would reserve an announced Content-Length at once).
  http::request_parser<mtserve::GrowingStringBody> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(boost::none);
  boost::beast::error_code error;
  std::string pending;
  bool head_checked = false;
  while (!bytes.empty() && !parser.is_done()) {
    const size_t n = std::min(piece, bytes.size());
    pending.append(bytes.data(), n);
    bytes.remove_prefix(n);
    const size_t used = parser.put(boost::asio::buffer(pending), error);
    pending.erase(0, used);
    if (error == http::error::need_more) continue;
    if (error) {
      // A refusal the transport words as framing, or answers 400 or 431 with the parser's words.
      const std::optional<absl::Status> framing = mtserve::ParserFramingError(error);
      FUZZ_CHECK(!framing.has_value() || framing->code() == absl::StatusCode::kInvalidArgument);
      FUZZ_CHECK(!error.message().empty());
      return;
    }
    if (parser.is_header_done() && !head_checked) {
      head_checked = true;
      parser.body_limit(1 << 20);
      std::vector<mtserve::HeaderField> fields;
      for (const auto& field : parser.get()) {
        fields.push_back({absl::string_view(field.name_string().data(), field.name_string().size()),
                          absl::string_view(field.value().data(), field.value().size())});
      }
      const absl::StatusOr<mtserve::BodyFraming> framing = mtserve::RequestBodyFraming(fields);
      FUZZ_CHECK(framing.ok() || framing.status().code() == absl::StatusCode::kInvalidArgument);
      const std::string client =
          mtserve::ClientAddress("10.0.0.1", Field(parser.get(), "X-Forwarded-For"),
                                 Field(parser.get(), "Forwarded"), {"10.0.0.1", "10.0.0.2"});
      // The client is the peer or an address the headers named, in its canonical spelling.
      FUZZ_CHECK(client == "10.0.0.1" || mtserve::CanonicalAddress(client) == client);
      // The path, as the front end's routes read it: a model's name or a job's id in a route's
      // path.
      const absl::string_view target(parser.get().target().data(), parser.get().target().size());
      const absl::string_view path = target.substr(0, target.find('?'));
      for (const absl::string_view pattern :
           {"/v1/models/{name}:load", "/v1/models/{name}:unload", "/v1/models"}) {
        if (!mtserve::RoutePathMatches(pattern, path)) continue;
        if (pattern == path) continue;  // No name in it.
        const absl::StatusOr<std::string> name = mtserve::RoutePathName(pattern, path);
        FUZZ_CHECK(name.ok() || name.status().code() == absl::StatusCode::kInvalidArgument);
        if (!name.ok()) continue;
        // Each %XX gives one byte, every other byte itself: never empty, never longer.
        const size_t encoded = path.size() - (pattern.size() - mtserve::kRouteName.size());
        FUZZ_CHECK(!name->empty() && name->size() <= encoded);
        FUZZ_CHECK(path.find('%') != absl::string_view::npos || name->size() == encoded);
      }
      for (const absl::string_view pattern :
           {"/v1/jobs/{id}", "/v1/jobs/{id}/result", "/download_file/{id}/{file}"}) {
        if (!mtserve::RoutePathMatches(pattern, path)) continue;
        for (const absl::string_view hole : {"{id}", "{file}"}) {
          if (pattern.find(hole) == absl::string_view::npos) continue;
          const absl::StatusOr<std::string> value = mtserve::RoutePathName(pattern, path, hole);
          FUZZ_CHECK(value.ok() || value.status().code() == absl::StatusCode::kInvalidArgument);
          // Never empty, never longer than the path.
          if (value.ok()) FUZZ_CHECK(!value->empty() && value->size() < path.size());
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
