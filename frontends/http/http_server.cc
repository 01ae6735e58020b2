// The HTTP transport's listener, threads and lifecycle (http_server.h); each connection's work is
// in http_connection.cc.
#include "frontends/http/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "frontends/http/handler_pool.h"
#include "frontends/http/http_connection.h"

namespace mtserve {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class HttpServer::Impl {
 public:
  Impl(const Options& options, HttpService* service, std::set<std::string> trusted_proxies)
      : options_(options),
        service_(service),
        limits_(options.connection_limits.max_per_address, std::move(trusted_proxies)),
        pool_(options.handler_threads, options.max_queued_requests),
        acceptor_(asio::make_strand(io_)),
        accept_pause_(acceptor_.get_executor()),
        work_(asio::make_work_guard(io_)) {}

  ~Impl() { Stop(); }

  absl::Status Listen() {
    const std::string& listen = options_.listen;
    auto fail = [&](absl::string_view why) {
      return absl::UnavailableError(
          absl::StrCat("cannot serve HTTP on ", listen, " (", options_.listen_flag, "): ", why));
    };
    const size_t colon = listen.rfind(':');
    int port = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
        port < 0 || port > 65535) {
      return fail("not HOST:PORT");
    }
    absl::string_view host = absl::string_view(listen).substr(0, colon);
    if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
    boost::system::error_code error;
    const asio::ip::address address = asio::ip::make_address(std::string(host), error);
    if (error) return fail(absl::StrCat("\"", host, "\" is not an IP address"));
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    if (acceptor_.open(endpoint.protocol(), error) ||
        acceptor_.set_option(tcp::acceptor::reuse_address(true), error) ||
        acceptor_.bind(endpoint, error) ||
        acceptor_.listen(asio::socket_base::max_listen_connections, error)) {
      return fail(error.message());
    }
    port_ = acceptor_.local_endpoint().port();
    if (options_.tls != nullptr) {
      tls_.emplace(asio::ssl::context::tls_server);
      // ServerTls alone sets the context up: each handshake takes the files current then.
      if (absl::Status status = options_.tls->ConfigureSslContext(tls_->native_handle());
          !status.ok()) {
        return fail(status.message());
      }
    }
    context_.options = &options_;
    context_.service = service_;
    context_.pool = &pool_;
    context_.limits = &limits_;
    context_.body_bytes = &body_bytes_;
    // A file's body takes more of the bound than others, but one always fits.
    context_.max_body_bytes =
        std::max(static_cast<int64_t>(options_.handler_threads + options_.max_queued_requests) *
                     options_.max_body_bytes,
                 options_.max_file_body_bytes);
    context_.on_closed = [this](const void* connection) {
      absl::MutexLock lock(&mutex_);
      connections_.erase(connection);
    };
    Accept();
    for (int i = 0; i < options_.io_threads; ++i) threads_.emplace_back([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const { return port_; }

  void Drain() {
    for (const std::shared_ptr<HttpConnection>& connection : Connections()) connection->Drain();
  }

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    absl::Notification closed;
    asio::post(acceptor_.get_executor(), [this, &closed] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      accept_pause_.cancel();
      closed.Notify();
    });
    if (!threads_.empty()) closed.WaitForNotification();
    Drain();
    pool_.Stop();  // Every handler has answered.
    for (const std::shared_ptr<HttpConnection>& connection : Connections()) {
      connection->CloseIfIdle();
    }
    // Their answers are written (each within the write deadline), then the connections close.
    const absl::Duration wait = options_.timeouts.write + absl::Seconds(1);
    {
      absl::MutexLock lock(&mutex_);
      mutex_.AwaitWithTimeout(
          absl::Condition(
              +[](std::map<const void*, std::weak_ptr<HttpConnection>>* c) { return c->empty(); },
              &connections_),
          wait);
    }
    for (const std::shared_ptr<HttpConnection>& connection : Connections()) connection->Close();
    {
      absl::MutexLock lock(&mutex_);
      mutex_.AwaitWithTimeout(
          absl::Condition(
              +[](std::map<const void*, std::weak_ptr<HttpConnection>>* c) { return c->empty(); },
              &connections_),
          absl::Seconds(1));
    }
    work_.reset();
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  std::vector<std::shared_ptr<HttpConnection>> Connections() {
    std::vector<std::shared_ptr<HttpConnection>> out;
    absl::MutexLock lock(&mutex_);
    for (auto& [key, weak] : connections_) {
      if (std::shared_ptr<HttpConnection> connection = weak.lock()) out.push_back(connection);
    }
    return out;
  }

  void Accept() {
    acceptor_.async_accept(asio::make_strand(io_),
                           [this](const boost::system::error_code& error, tcp::socket socket) {
                             if (!acceptor_.is_open()) return;
                             if (error) {
                               // Out of descriptors (or another passing error): accept again a
                               // little later rather than spin; the connections open meanwhile are
                               // served.
                               accept_pause_.expires_after(std::chrono::milliseconds(50));
                               accept_pause_.async_wait([this](const boost::system::error_code& e) {
                                 if (!e && acceptor_.is_open()) Accept();
                               });
                               return;
                             }
                             OnAccepted(std::move(socket));
                             Accept();
                           });
  }

  void OnAccepted(tcp::socket socket) {
    boost::system::error_code error;
    const tcp::endpoint remote = socket.remote_endpoint(error);
    if (error) return;
    socket.set_option(tcp::no_delay(true), error);
    const std::string peer =
        CanonicalAddress(remote.address().to_string()).value_or(remote.address().to_string());
    std::string counted;
    if (limits_.capped() && !limits_.trusted(peer)) {
      // Over the cap: closed at once, before any byte is read or a handshake begins.
      if (!limits_.TryAcquire(peer)) return;
      counted = peer;
    }
    std::shared_ptr<HttpConnection> connection = MakeHttpConnection(
        context_, std::move(socket), tls_.has_value() ? &*tls_ : nullptr, peer, std::move(counted));
    {
      absl::MutexLock lock(&mutex_);
      connections_[connection.get()] = connection;
    }
    connection->Start();
  }

  // Destroyed in reverse: the I/O context (with any connection its pending work still holds)
  // before what connections use as they end.
  const Options options_;
  HttpService* const service_;
  ConnectionLimits limits_;
  HandlerPool pool_;
  HttpServerContext context_;
  std::atomic<int64_t> body_bytes_{0};
  absl::Mutex mutex_;
  std::map<const void*, std::weak_ptr<HttpConnection>> connections_ ABSL_GUARDED_BY(mutex_);
  std::optional<asio::ssl::context> tls_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_pause_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  bool stopped_ = false;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options,
                                                              HttpService* service) {
  absl::StatusOr<std::set<std::string>> trusted =
      ConnectionLimits::ParseTrustedProxies(options.connection_limits.trusted_proxies);
  if (!trusted.ok()) return trusted.status();
  auto impl = std::make_unique<Impl>(options, service, *std::move(trusted));
  if (absl::Status status = impl->Listen(); !status.ok()) return status;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Drain() { impl_->Drain(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace mtserve
