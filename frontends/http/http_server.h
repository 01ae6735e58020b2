// The HTTP/1.1 transport under the API's routes and /metrics: Boost.Beast's request parser on
// Boost.Asio, event-driven. One or two I/O threads run every connection (accepting, TLS
// handshakes, reading, writing, deadlines), so a slow or silent client holds a socket and a few
// kilobytes, never a thread; request handlers, which block on a translation, run on their own
// bounded pool (handler_pool.h), so a translation in flight never holds up other connections.
//
// Why Beast: it parses on Asio, whose TLS is OpenSSL (asio::ssl), so HTTPS keeps the
// ServerTls certificate rotation (a callback on the SSL_CTX) that gRPC and HTTP share; it is a
// Debian package (libboost-dev, header-only); and it leaves the socket's timing to the caller.
// libmicrohttpd's TLS is GnuTLS (the rotation would have to be written twice), civetweb, which
// this replaces, holds a thread per connection (a body sent a byte at a time held one without
// limit), and cpp-httplib's timeouts are per read.
//
// Each connection is a sequence of requests (keep-alive; pipelined requests are read one after
// the other and answered in order), each with its deadlines:
//   - a new connection's TLS handshake: handshake_timeout (no request is read before it ends);
//   - between requests, before the first byte of the next: idle_timeout (a new connection's first
//     request: header_timeout);
//   - a request's head, from its first byte: header_timeout (then the connection closes);
//   - its body, from the end of its head, checked while bytes arrive: body_timeout (then 408);
//   - each write of an answer (a whole answer, or a chunk of a streamed one): write_timeout (then
//     the connection closes, and the request's handler is told the client is gone).
// No deadline runs while a handler works: a translation has its own (X-Request-Timeout).
// A client that disconnects while its request is handled is told to the handler
// (HttpReply::OnClientGone), which cancels what it started. Requests the handlers' queue cannot
// take get 503 at once, and so does a body that would take the bytes of all bodies held (arriving,
// waiting or handled) past (handler_threads + max_queued_requests) x max_body_bytes (or
// max_file_body_bytes, should one file's body be larger): what bodies take in memory is bounded,
// however many connections send them. A body holds what has arrived
// (growing_string_body.h), so slow bodies hold little.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_SERVER_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "frontends/http/connection_limits.h"
#include "frontends/http/http_exchange.h"
#include "frontends/tls/server_tls.h"
#include "serving/drain_gate.h"

namespace mtserve {

struct HttpTimeouts {
  absl::Duration handshake = absl::Seconds(10);
  absl::Duration header = absl::Seconds(10);
  absl::Duration body = absl::Seconds(10);
  absl::Duration write = absl::Seconds(10);
  absl::Duration idle = absl::Seconds(10);
};

class HttpServer {
 public:
  struct Options {
    std::string listen;  // HOST:PORT, HOST an IP address; port 0: the kernel chooses.
    std::string listen_flag = "--http_listen";  // Named in the errors.
    int io_threads = 1;
    int handler_threads = 16;
    int max_queued_requests = 16;  // Requests waiting for a handler thread; more get 503.
    std::string handler_threads_flag = "--http_threads";  // Named in the 503.
    std::string max_queued_flag = "--http_max_queued";
    HttpTimeouts timeouts;
    int64_t max_body_bytes = 4 << 20;  // Bigger bodies get 413.
    std::string max_body_flag = "--max_message_bytes";
    // The bodies of requests that carry a file (HttpService::TakesFileBody); bigger ones get
    // 413 naming max_file_body_flag. 0: as max_body_bytes.
    int64_t max_file_body_bytes = 0;
    std::string max_file_body_flag = "--max_file_bytes";
    ConnectionLimits::Options connection_limits;  // Off by default.
    ServerTls* tls = nullptr;                     // HTTPS with these files; null: HTTP.
    // Counts each request that Route leaves to Handle, from its head until its answer is written
    // (or its client is gone), so that draining waits for requests whose body is still arriving.
    // Null: none.
    DrainGate* drain = nullptr;
  };

  // Listens and serves at once; `service` outlives the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const Options& options,
                                                           HttpService* service);
  ~HttpServer();  // Stop().

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;

  // Every answer from now on closes its connection (Connection: close): a request read from now
  // on is answered, then its connection closes. Idle keep-alive connections stay until their
  // idle deadline or Stop (closing one now would race a client reusing it). New connections are
  // still accepted.
  void Drain();
  // Stops accepting, drains, waits for the handlers to answer what they have (the caller makes
  // them end soon: cancelled translations), closes the idle connections, lets the answers be
  // written (each within write_timeout), then closes every connection and joins the threads.
  void Stop();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_SERVER_H_
