// The Prometheus endpoint (GET /metrics, the text exposition format) on the HTTP transport
// (http_server.h), on its own port (--metrics_listen): the same deadlines and I/O threads as the
// API, so a silent or slow scraper holds a socket, not the endpoint. A scrape is answered on the
// I/O thread (serializing the registry takes no lock for long), so it needs no handler threads.
#ifndef MTSERVE_FRONTENDS_HTTP_METRICS_SERVICE_H_
#define MTSERVE_FRONTENDS_HTTP_METRICS_SERVICE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "frontends/http/http_exchange.h"
#include "frontends/http/http_server.h"

namespace mtserve {

class MetricsService : public HttpService {
 public:
  // Serves `scrape()` on `options.listen`.
  static absl::StatusOr<std::unique_ptr<MetricsService>> Start(HttpServer::Options options,
                                                               std::function<std::string()> scrape);
  ~MetricsService() override;

  int port() const { return server_->port(); }

  std::optional<HttpAnswer> Route(const HttpRequest& head) override;
  HttpAnswer Refuse(const HttpRequest& head, const absl::Status& status, int http_status) override;
  void Handle(const HttpRequest& request, HttpReply& reply) override;

 private:
  explicit MetricsService(std::function<std::string()> scrape) : scrape_(std::move(scrape)) {}

  const std::function<std::string()> scrape_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_METRICS_SERVICE_H_
