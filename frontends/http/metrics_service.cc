// GET /metrics on the HTTP transport (metrics_service.h).
#include "frontends/http/metrics_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "frontends/http/http_status.h"

namespace mtserve {
namespace {

HttpAnswer Text(int status, std::string body) {
  HttpAnswer answer;
  answer.status = status;
  answer.content_type = "text/plain; version=0.0.4; charset=utf-8";
  answer.body = std::move(body);
  return answer;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsService>> MetricsService::Start(
    HttpServer::Options options, std::function<std::string()> scrape) {
  std::unique_ptr<MetricsService> service(new MetricsService(std::move(scrape)));
  // Scrapes are answered on the I/O thread: one handler thread is never used.
  options.handler_threads = 1;
  options.max_queued_requests = 1;
  absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(options, service.get());
  if (!server.ok()) return server.status();
  service->server_ = *std::move(server);
  return service;
}

MetricsService::~MetricsService() {
  if (server_ != nullptr) server_->Stop();
}

std::optional<HttpAnswer> MetricsService::Route(const HttpRequest& head) {
  if (head.path() != "/metrics") {
    return Text(404,
                absl::StrCat("no ", Excerpt(head.path()), " here; the metrics are /metrics\n"));
  }
  if (head.method() != "GET" && head.method() != "HEAD") {
    HttpAnswer answer = Text(405, "/metrics takes GET, HEAD\n");
    answer.headers.emplace_back("Allow", "GET, HEAD");
    return answer;
  }
  return Text(200, scrape_());
}

HttpAnswer MetricsService::Refuse(const HttpRequest&, const absl::Status& status, int http_status) {
  return Text(http_status, absl::StrCat(status.message(), "\n"));
}

void MetricsService::Handle(const HttpRequest&, HttpReply& reply) {
  reply.Send(Text(404, "the metrics are GET /metrics\n"));
}

}  // namespace mtserve
