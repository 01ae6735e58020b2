// What the HTTP transport (http_server.h) and the services on it (the API's routes, /metrics)
// exchange: a request as read, an answer to send, the way a handler answers from its thread, and
// the service interface the transport calls. No sockets here: a service is written and read
// without knowing how bytes move.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_EXCHANGE_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_EXCHANGE_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "boost/beast/http/message.hpp"
#include "frontends/http/growing_string_body.h"

namespace mtserve {

// A request: its head as soon as it is read, its body once it is whole.
struct HttpRequest {
  boost::beast::http::request<GrowingStringBody> message;
  std::string client_address;  // The peer's IP address (or the one a trusted proxy names).
  absl::Time received;         // When its head was read: request deadlines count from here.

  absl::string_view method() const {
    const auto m = message.method_string();
    return {m.data(), m.size()};
  }
  // The target without its query.
  absl::string_view path() const {
    const auto target = message.target();
    const absl::string_view t(target.data(), target.size());
    return t.substr(0, t.find('?'));
  }
  // The target's query, after its "?" ("" if none).
  absl::string_view query() const {
    const auto target = message.target();
    const absl::string_view t(target.data(), target.size());
    const size_t mark = t.find('?');
    return mark == absl::string_view::npos ? absl::string_view() : t.substr(mark + 1);
  }
  // The first field named `name` (case-insensitive), if any.
  std::optional<absl::string_view> header(absl::string_view name) const {
    const auto it = message.find(boost::beast::string_view(name.data(), name.size()));
    if (it == message.end()) return std::nullopt;
    return absl::string_view(it->value().data(), it->value().size());
  }
  const std::string& body() const { return message.body(); }
};

// An answer with its length (or the head of a chunked one).
struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool close = false;  // The connection closes after it.
};

// How a handler answers, from its own thread. Either Send once, or StartChunks, SendChunk as
// often as needed and EndChunks.
class HttpReply {
 public:
  virtual ~HttpReply() = default;
  virtual void Send(HttpAnswer answer) = 0;
  // A chunked answer (Transfer-Encoding: chunked): its head (`head.body` is ignored), then its
  // chunks, each written before SendChunk returns. False once the client is gone or stopped
  // taking the answer (a write past its deadline): nothing more is written.
  virtual bool StartChunks(HttpAnswer head) = 0;
  virtual bool SendChunk(std::string data) = 0;
  virtual void EndChunks() = 0;
  // `cancel` runs once (on an I/O thread) if the client goes away before the answer is written,
  // at once if it is gone already: what the request started should stop.
  virtual void OnClientGone(std::function<void()> cancel) = 0;
};

// What the transport calls for each request on a connection, in order: Route once its head is
// read; then, unless Route answered, Handle on a handler thread once its body is whole.
class HttpService {
 public:
  virtual ~HttpService() = default;
  // On an I/O thread, without blocking: an answer at once (health, files, refusals that need no
  // body), or nullopt to read the body and Handle the request.
  virtual std::optional<HttpAnswer> Route(const HttpRequest& head) = 0;
  // On an I/O thread: the answer to a request the transport refuses with `status` and
  // `http_status` (a body over the limit, too slow or malformed, the handlers' queue full), in
  // the route's shape. The connection closes after it (except for a full queue).
  virtual HttpAnswer Refuse(const HttpRequest& head, const absl::Status& status,
                            int http_status) = 0;
  // On an I/O thread, once Route left `head` to Handle and before its body is read: whether the
  // body carries a file, and may then be as large as the transport's max_file_body_bytes rather
  // than its max_body_bytes.
  virtual bool TakesFileBody(const HttpRequest& head) { return false; }
  // On a handler thread: answers `request` through `reply` before returning.
  virtual void Handle(const HttpRequest& request, HttpReply& reply) = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_EXCHANGE_H_
