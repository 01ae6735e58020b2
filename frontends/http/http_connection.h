// One HTTP/1.1 connection of the transport (http_server.h): its requests read one after the other
// with Beast's parser, each answered in order, under the deadlines the server sets; the handler
// of a request answers through an HttpReply that hands its writes to the connection's I/O
// strand. Internal to the transport.
#ifndef MTSERVE_FRONTENDS_HTTP_HTTP_CONNECTION_H_
#define MTSERVE_FRONTENDS_HTTP_HTTP_CONNECTION_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl/context.hpp"
#include "frontends/http/connection_limits.h"
#include "frontends/http/handler_pool.h"
#include "frontends/http/http_exchange.h"
#include "frontends/http/http_server.h"

namespace mtserve {

// What every connection of one server shares; outlives them.
struct HttpServerContext {
  const HttpServer::Options* options;
  HttpService* service;
  HandlerPool* pool;
  ConnectionLimits* limits;
  // The bytes of the request bodies held (from their arrival until their answer is written),
  // and how many may be: what bodies take in memory is bounded whatever the connections.
  std::atomic<int64_t>* body_bytes;
  int64_t max_body_bytes;
  // Called once by each connection as it ends (it is then forgotten by the server).
  std::function<void(const void* connection)> on_closed;
};

class HttpConnection {
 public:
  virtual ~HttpConnection() = default;
  // On any thread: the connection's work goes to its strand.
  virtual void Start() = 0;
  // Every answer from now on closes it (Connection: close), and no next request is read. An idle
  // keep-alive connection stays open until its idle deadline or CloseIfIdle (a client may be
  // sending its next request on it at this very moment).
  virtual void Drain() = 0;
  // Drain, and close it now if it is between requests (no byte of the next one has arrived) or
  // still reading a request's head.
  virtual void CloseIfIdle() = 0;
  // Closes it now, whatever it is doing.
  virtual void Close() = 0;
};

// A connection on `socket` (whose executor is a strand) from `peer` (its address, canonical),
// over TLS with `tls` unless null. `counted_address`, if not empty, is held in the limits and
// released when the connection ends.
std::shared_ptr<HttpConnection> MakeHttpConnection(const HttpServerContext& context,
                                                   boost::asio::ip::tcp::socket socket,
                                                   boost::asio::ssl::context* tls, std::string peer,
                                                   std::string counted_address);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_HTTP_CONNECTION_H_
