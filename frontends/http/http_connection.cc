// One connection of the HTTP transport (http_connection.h): a state machine on the connection's
// strand. It always keeps one read going (to parse the request being read, to hold the bytes of a
// pipelined next one, and to see a client leave while its request is handled), writes answers in
// order, one at a time, and keeps one deadline at a time, the one of its phase.
#include "frontends/http/http_connection.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <array>
#include <chrono>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "boost/asio/buffer.hpp"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/ssl/stream.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/status.hpp"
#include "frontends/http/http_framing.h"
#include "frontends/http/http_status.h"

namespace mtserve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A request's head (request line and fields) may have this many bytes; more get 431.
constexpr size_t kHeaderLimit = 16 * 1024;
// Bytes asked for by each read, and read ahead at most while a request is handled (a pipelined
// next request waits in them).
constexpr size_t kReadSize = 16 * 1024;
constexpr size_t kReadAheadLimit = 64 * 1024;

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(d));
}

// The parts of an answer a handler hands over.
enum class Part { kWhole, kChunkedHead, kChunk, kLastChunk };

// What a handler's HttpReply needs from its connection.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // Formats `answer` as `part` and writes it after what is queued; `done(written)` runs on the
  // strand once it is written or cannot be.
  virtual void PostAnswer(HttpAnswer answer, Part part, std::function<void(bool)> done) = 0;
  virtual void PostCancel(std::function<void()> cancel) = 0;
};

// A handler's HttpReply: hands each part to the connection; chunks wait until written.
class Reply final : public HttpReply {
 public:
  explicit Reply(std::shared_ptr<ReplySink> sink) : sink_(std::move(sink)) {}

  void Send(HttpAnswer answer) override {
    if (state_ != State::kNone) return;
    state_ = State::kDone;
    sink_->PostAnswer(std::move(answer), Part::kWhole, nullptr);
  }
  bool StartChunks(HttpAnswer head) override {
    if (state_ != State::kNone) return false;
    state_ = State::kChunks;
    return Write(std::move(head), Part::kChunkedHead);
  }
  bool SendChunk(std::string data) override {
    if (state_ != State::kChunks || gone_) return false;
    if (data.empty()) return true;  // An empty chunk would end the answer.
    HttpAnswer chunk;
    chunk.body = std::move(data);
    return Write(std::move(chunk), Part::kChunk);
  }
  void EndChunks() override {
    if (state_ != State::kChunks) return;
    state_ = State::kDone;
    sink_->PostAnswer({}, Part::kLastChunk, nullptr);
  }
  void OnClientGone(std::function<void()> cancel) override { sink_->PostCancel(std::move(cancel)); }

  // After the handler returns: an answer it did not give is a 500; a stream it did not end ends.
  void Finish() {
    if (state_ == State::kChunks) EndChunks();
    if (state_ != State::kNone) return;
    const absl::Status status = absl::InternalError("the request's handler gave no answer");
    HttpAnswer answer;
    answer.status = 500;
    answer.content_type = "application/json";
    answer.body = ErrorJson(status);
    Send(std::move(answer));
  }

 private:
  enum class State { kNone, kChunks, kDone };

  bool Write(HttpAnswer answer, Part part) {
    struct Done {
      absl::Notification notification;
      bool written = false;
    };
    auto done = std::make_shared<Done>();
    sink_->PostAnswer(std::move(answer), part, [done](bool written) {
      done->written = written;
      done->notification.Notify();
    });
    done->notification.WaitForNotification();
    if (!done->written) gone_ = true;
    return done->written;
  }

  const std::shared_ptr<ReplySink> sink_;
  State state_ = State::kNone;  // The handler's thread only.
  bool gone_ = false;
};

template <class Stream>
constexpr bool kIsTls = !std::is_same_v<Stream, tcp::socket>;

template <class Stream>
class Connection final : public HttpConnection,
                         public ReplySink,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(const HttpServerContext& context, tcp::socket socket, asio::ssl::context* tls,
             std::string peer, std::string counted_address)
      : context_(context),
        options_(*context.options),
        stream_(MakeStream(std::move(socket), tls)),
        timer_(stream_.get_executor()),
        peer_(std::move(peer)),
        counted_address_(std::move(counted_address)) {}

  ~Connection() override {
    if (!counted_address_.empty()) context_.limits->Release(counted_address_);
    ReleaseRequestCount();
    ReleaseBody();
    LeaveDrain();
    context_.on_closed(static_cast<const HttpConnection*>(this));
  }

  void Start() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kIsTls<Stream>) {
        self->phase_ = Phase::kHandshake;
        self->Arm(self->options_.timeouts.handshake);
        self->stream_.async_handshake(asio::ssl::stream_base::server,
                                      [self](const boost::system::error_code& error) {
                                        if (self->phase_ != Phase::kHandshake) return;
                                        if (error) return self->CloseNow();
                                        self->NextRequest();
                                      });
      } else {
        self->NextRequest();
      }
    });
  }

  void Drain() override {
    asio::post(stream_.get_executor(),
               [self = this->shared_from_this()] { self->draining_ = true; });
  }

  void CloseIfIdle() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->draining_ = true;
      // Between requests (no byte of the next one has arrived), or before any: nothing to
      // answer. Bytes waiting unread are a request: it is read and answered.
      boost::system::error_code error;
      const bool arriving = self->Socket().available(error) > 0 && !error;
      // A head still arriving is no request yet, and the process is stopping.
      if ((self->phase_ == Phase::kWaiting && !arriving) || self->phase_ == Phase::kHandshake ||
          self->phase_ == Phase::kHeader) {
        self->CloseNow();
      }
    });
  }

  void Close() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->CloseNow(); });
  }

  void PostAnswer(HttpAnswer answer, Part part, std::function<void(bool)> done) override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this(), answer = std::move(answer),
                                        part, done = std::move(done)]() mutable {
      if (self->phase_ == Phase::kClosed) {
        if (done) done(false);
        return;
      }
      const bool last = part == Part::kWhole || part == Part::kLastChunk;
      self->Queue(self->Format(answer, part), last, std::move(done));
    });
  }

  void PostCancel(std::function<void()> cancel) override {
    asio::post(stream_.get_executor(),
               [self = this->shared_from_this(), cancel = std::move(cancel)]() mutable {
                 if (self->phase_ == Phase::kClosed) return cancel();
                 self->cancel_ = std::move(cancel);
               });
  }

 private:
  enum class Phase {
    kHandshake,  // TLS.
    kWaiting,    // For the first byte of a request.
    kHeader,     // Reading a request's head.
    kBody,       // Reading its body.
    kAnswering,  // It is read: handled, or its answer written.
    kClosing,    // Sent what it had; reading what is left until the client closes.
    kClosed,
  };

  static Stream MakeStream(tcp::socket socket, asio::ssl::context* tls) {
    if constexpr (kIsTls<Stream>) {
      return Stream(std::move(socket), *tls);
    } else {
      (void)tls;
      return socket;
    }
  }

  tcp::socket& Socket() {
    if constexpr (kIsTls<Stream>) {
      return stream_.next_layer();
    } else {
      return stream_;
    }
  }

  // Bytes written that the client has not taken yet (in the kernel's send queue).
  int Unsent() {
    int bytes = 0;
    if (ioctl(Socket().native_handle(), SIOCOUTQ, &bytes) != 0) return 0;
    return bytes;
  }

  // One deadline at a time: a later Arm or a Disarm makes an earlier one void.
  void Arm(absl::Duration timeout) {
    ++deadline_;
    timer_.expires_after(ToChrono(timeout));
    timer_.async_wait([self = this->shared_from_this(),
                       deadline = deadline_](const boost::system::error_code& error) {
      if (error || deadline != self->deadline_ || self->phase_ == Phase::kClosed) return;
      self->OnDeadline();
    });
  }
  void Disarm() {
    ++deadline_;
    timer_.cancel();
  }

  void OnDeadline() {
    if (phase_ == Phase::kBody) {
      // The body did not arrive in time: 408, naming what came.
      const int64_t got = static_cast<int64_t>(parser_->get().body().size());
      absl::Status status;
      if (parser_->chunked()) {
        status = absl::DeadlineExceededError(
            "the chunked request body stopped arriving before its last (zero-size) chunk, "
            "within the server's --http_timeout");
      } else {
        status = absl::DeadlineExceededError(absl::StrCat(
            "the request body did not arrive: ", got, " of its ",
            parser_->content_length().value_or(0), " bytes within the server's --http_timeout"));
      }
      return Refuse(status, 408, /*close=*/true);
    }
    // A handshake, a head or a write past its deadline, a client that stays silent, or one that
    // does not close after the last answer. A client that does not read what is written would
    // hold the rest of it, and the connection's end, in the server's buffers: that is dropped
    // (a reset).
    CloseNow(/*abort=*/writing_ || phase_ == Phase::kClosing || Unsent() > 0);
  }

  // Between requests: a fresh parser, and the next head from what is read ahead, if any.
  void NextRequest() {
    if (draining_) return BeginClose();
    parser_.emplace();
    file_body_ = false;
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(boost::none);  // Set once the head is read: its answer comes first.
    if (buffer_.size() > 0) {
      phase_ = Phase::kHeader;
      Arm(options_.timeouts.header);
      Parse();
    } else {
      phase_ = Phase::kWaiting;
      // The first request of a connection is its head's time; later ones, the idle time.
      Arm(first_request_ ? options_.timeouts.header : options_.timeouts.idle);
    }
    first_request_ = false;
    Read();
  }

  void Read() {
    if (reading_ || phase_ == Phase::kHandshake || phase_ == Phase::kClosed) return;
    if (buffer_.size() >= kReadAheadLimit) return;  // Parse resumes it.
    reading_ = true;
    // Into a buffer of its own: `buffer_` is parsed and consumed while the read is pending, and
    // a flat_buffer emptied by consume starts again at its front, where a region prepared
    // before would no longer be its end.
    stream_.async_read_some(asio::buffer(read_bytes_), [self = this->shared_from_this()](
                                                           const boost::system::error_code& error,
                                                           size_t n) { self->OnRead(error, n); });
  }

  void OnRead(const boost::system::error_code& error, size_t n) {
    reading_ = false;
    if (phase_ == Phase::kClosed) return;
    // The client closed or the connection broke: whatever it was sending or waiting for is over
    // (a request being handled is cancelled).
    if (error) return CloseNow();
    buffer_.commit(asio::buffer_copy(buffer_.prepare(n), asio::buffer(read_bytes_, n)));
    if (phase_ == Phase::kClosing) {
      buffer_.consume(buffer_.size());
    } else if (phase_ == Phase::kWaiting) {
      phase_ = Phase::kHeader;
      Arm(options_.timeouts.header);
    }
    Parse();
    Read();
  }

  // Feeds the parser what is read, as far as the phase allows.
  void Parse() {
    while (phase_ == Phase::kHeader || phase_ == Phase::kBody) {
      if (phase_ == Phase::kBody && parser_->is_done()) return Dispatch();
      if (buffer_.size() == 0) return;
      beast::error_code error;
      const size_t used = parser_->put(buffer_.data(), error);
      buffer_.consume(used);
      if (phase_ == Phase::kBody && !HoldBody()) return Busy();
      if (error == http::error::need_more) {
        if (used == 0) return;
        continue;
      }
      if (error) return phase_ == Phase::kHeader ? HeadError(error) : BodyError(error);
      if (phase_ == Phase::kHeader && parser_->is_header_done()) OnHead();
    }
  }

  void OnHead() {
    phase_ = Phase::kAnswering;
    Disarm();
    request_ = std::make_shared<HttpRequest>();
    request_->message = parser_->get();
    request_->client_address = peer_;
    request_->received = absl::Now();
    keep_alive_ = request_->message.keep_alive();
    const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
    std::vector<HeaderField> fields;
    for (const auto& field : request_->message) {
      fields.push_back({absl::string_view(field.name_string().data(), field.name_string().size()),
                        absl::string_view(field.value().data(), field.value().size())});
    }
    if (absl::StatusOr<BodyFraming> framing = RequestBodyFraming(fields); !framing.ok()) {
      return Refuse(framing.status(), 400, /*close=*/true);
    }
    // Behind a trusted proxy, each request counts for the client the proxy names.
    const ConnectionLimits& limits = *context_.limits;
    if (limits.capped() && limits.trusted(peer_)) {
      request_->client_address =
          ClientAddress(peer_, request_->header("X-Forwarded-For"), request_->header("Forwarded"),
                        limits.trusted_proxies());
      if (!context_.limits->TryAcquire(request_->client_address)) {
        return Refuse(absl::ResourceExhaustedError(absl::StrCat(
                          "client ", request_->client_address, " has ", limits.max_per_address(),
                          " requests open, the limit (the server's "
                          "--http_max_connections_per_address)")),
                      429, /*close=*/has_body);
      }
      request_count_ = request_->client_address;
    }
    if (std::optional<HttpAnswer> answer = context_.service->Route(*request_)) {
      // A body left unread cannot be told from the next request: the connection closes.
      if (has_body) answer->close = true;
      return Queue(Format(*answer, Part::kWhole), /*last=*/true, nullptr);
    }
    // From here the request is answered, however it goes: draining waits for it.
    if (options_.drain != nullptr) {
      options_.drain->Enter();
      in_drain_ = true;
    }
    file_body_ = options_.max_file_body_bytes > 0 && context_.service->TakesFileBody(*request_);
    const int64_t limit = file_body_ ? options_.max_file_body_bytes : options_.max_body_bytes;
    if (parser_->content_length().value_or(0) > static_cast<uint64_t>(limit)) return TooLarge();
    if (!has_body) return Dispatch();
    parser_->body_limit(static_cast<uint64_t>(limit));
    // curl asks for this before bodies over 1 MiB, and waits a second for it otherwise.
    if (const auto expect = request_->header("Expect");
        expect.has_value() && absl::EqualsIgnoreCase(*expect, "100-continue")) {
      Queue("HTTP/1.1 100 Continue\r\n\r\n", /*last=*/false, nullptr);
    }
    phase_ = Phase::kBody;
    Arm(options_.timeouts.body);
  }

  void TooLarge() {
    Refuse(absl::ResourceExhaustedError(absl::StrCat(
               "the request body is over ",
               file_body_ ? options_.max_file_body_bytes : options_.max_body_bytes,
               " bytes, the limit (the server's ",
               file_body_ ? options_.max_file_body_flag : options_.max_body_flag, ")")),
           413, /*close=*/true);
  }

  void HeadError(const beast::error_code& error) {
    // What the head held until then (the method and path if its first line was read): the
    // route's error shape.
    request_ = std::make_shared<HttpRequest>();
    request_->message = parser_->get();
    request_->client_address = peer_;
    request_->received = absl::Now();
    if (error == http::error::header_limit) {
      return Refuse(absl::InvalidArgumentError(absl::StrCat(
                        "the request's head (its first line and header fields) is over ",
                        kHeaderLimit, " bytes, the limit")),
                    431, /*close=*/true);
    }
    if (std::optional<absl::Status> framing = ParserFramingError(error)) {
      return Refuse(*framing, 400, /*close=*/true);
    }
    Refuse(
        absl::InvalidArgumentError(absl::StrCat("the request is not HTTP/1.1: ", error.message())),
        400, /*close=*/true);
  }

  void BodyError(const beast::error_code& error) {
    if (error == http::error::body_limit) return TooLarge();
    Refuse(absl::InvalidArgumentError(
               "the chunked request body is malformed or ends before its last (zero-size) chunk: "
               "each chunk is its size in hexadecimal (chunk extensions, \";name=value\", are "
               "ignored), CRLF, its bytes, CRLF, and the body ends with 0 CRLF CRLF (RFC 9112 "
               "§7.1)"),
           400, /*close=*/true);
  }

  // The transport's own answer to the request being read.
  void Refuse(const absl::Status& status, int http_status, bool close) {
    phase_ = Phase::kAnswering;
    Disarm();
    HttpAnswer answer = context_.service->Refuse(*request_, status, http_status);
    answer.close = answer.close || close;
    Queue(Format(answer, Part::kWhole), /*last=*/true, nullptr);
  }

  // The request is whole: to a handler thread.
  void Dispatch() {
    phase_ = Phase::kAnswering;
    Disarm();
    request_->message.body() = std::move(parser_->get().body());
    auto reply = std::make_shared<Reply>(this->shared_from_this());
    HttpService* service = context_.service;
    if (!context_.pool->TryRun([service, request = request_, reply] {
          service->Handle(*request, *reply);
          reply->Finish();
        })) {
      const HandlerPool& pool = *context_.pool;
      HttpAnswer answer = service->Refuse(
          *request_,
          absl::UnavailableError(absl::StrCat(
              "the server is busy: its ", pool.threads(), " request handlers (",
              options_.handler_threads_flag, ") are working and ", pool.max_queued(),
              " requests wait for them (", options_.max_queued_flag, "); retry shortly")),
          503);
      answer.headers.emplace_back("Retry-After", "1");
      Queue(Format(answer, Part::kWhole), /*last=*/true, nullptr);
    }
  }

  std::string Format(const HttpAnswer& answer, Part part) {
    if (part == Part::kChunk) {
      return absl::StrCat(absl::Hex(answer.body.size()), "\r\n", answer.body, "\r\n");
    }
    if (part == Part::kLastChunk) return "0\r\n\r\n";
    const bool close = answer.close || !keep_alive_ || draining_;
    if (close) close_after_ = true;
    const auto reason = http::obsolete_reason(static_cast<http::status>(answer.status));
    std::string out = absl::StrCat("HTTP/1.1 ", answer.status, " ",
                                   absl::string_view(reason.data(), reason.size()), "\r\n");
    if (!answer.content_type.empty())
      absl::StrAppend(&out, "Content-Type: ", answer.content_type, "\r\n");
    for (const auto& [name, value] : answer.headers)
      absl::StrAppend(&out, name, ": ", value, "\r\n");
    if (part == Part::kChunkedHead) {
      absl::StrAppend(&out, "Transfer-Encoding: chunked\r\n");
    } else {
      absl::StrAppend(&out, "Content-Length: ", answer.body.size(), "\r\n");
    }
    if (close) absl::StrAppend(&out, "Connection: close\r\n");
    absl::StrAppend(&out, "\r\n");
    if (part == Part::kWhole && request_ != nullptr &&
        request_->message.method() != http::verb::head) {
      absl::StrAppend(&out, answer.body);
    }
    return out;
  }

  struct PendingWrite {
    std::string bytes;
    bool last;  // The end of the request's answer.
    std::function<void(bool)> done;
  };

  void Queue(std::string bytes, bool last, std::function<void(bool)> done) {
    writes_.push_back({std::move(bytes), last, std::move(done)});
    Write();
  }

  void Write() {
    if (writing_ || writes_.empty() || phase_ == Phase::kClosed) return;
    writing_ = true;
    if (phase_ == Phase::kAnswering) Arm(options_.timeouts.write);
    asio::async_write(stream_, asio::buffer(writes_.front().bytes),
                      [self = this->shared_from_this()](const boost::system::error_code& error,
                                                        size_t) { self->OnWritten(error); });
  }

  void OnWritten(const boost::system::error_code& error) {
    writing_ = false;
    if (phase_ == Phase::kClosed) return;
    if (phase_ == Phase::kAnswering) Disarm();
    PendingWrite written = std::move(writes_.front());
    writes_.pop_front();
    if (error) {
      if (written.done) written.done(false);
      return CloseNow();
    }
    if (written.done) written.done(true);
    if (written.last) EndRequest();
    Write();
  }

  // The answer is written: the next request, or the end.
  void EndRequest() {
    cancel_ = nullptr;
    request_.reset();
    ReleaseRequestCount();
    ReleaseBody();
    LeaveDrain();
    if (close_after_) return BeginClose();
    NextRequest();
  }

  void LeaveDrain() {
    if (!in_drain_) return;
    in_drain_ = false;
    options_.drain->Leave();
  }

  // Counts the body's bytes received so far in what all bodies hold; false once that is over
  // the bound.
  bool HoldBody() {
    const int64_t size = static_cast<int64_t>(parser_->get().body().size());
    const int64_t added = size - body_bytes_;
    body_bytes_ = size;
    return context_.body_bytes->fetch_add(added) + added <= context_.max_body_bytes;
  }
  void ReleaseBody() {
    context_.body_bytes->fetch_sub(body_bytes_);
    body_bytes_ = 0;
  }

  void Busy() {
    Refuse(
        absl::UnavailableError(absl::StrCat(
            "the server is busy: the request bodies it holds (read, handled or waiting) "
            "reach ",
            context_.max_body_bytes, " bytes, its bound ((", options_.handler_threads_flag, " + ",
            options_.max_queued_flag, ") x ", options_.max_body_flag, "); retry shortly")),
        503, /*close=*/true);
  }

  void ReleaseRequestCount() {
    if (request_count_.empty()) return;
    context_.limits->Release(request_count_);
    request_count_.clear();
  }

  // Everything is sent: says so (FIN) and reads until the client closes, so that bytes it sent
  // and the server did not read (a refused body) do not reset the connection before the client
  // reads the answer.
  void BeginClose() {
    phase_ = Phase::kClosing;
    buffer_.consume(buffer_.size());
    boost::system::error_code ignored;
    Socket().shutdown(tcp::socket::shutdown_send, ignored);
    Arm(options_.timeouts.write);
    Read();
  }

  void CloseNow(bool abort = false) {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    Disarm();
    boost::system::error_code ignored;
    if (abort) Socket().set_option(asio::socket_base::linger(true, 0), ignored);
    Socket().close(ignored);
    if (cancel_) std::exchange(cancel_, nullptr)();
    LeaveDrain();
    std::deque<PendingWrite> writes = std::move(writes_);
    writes_.clear();
    for (PendingWrite& write : writes) {
      if (write.done) write.done(false);
    }
  }

  const HttpServerContext context_;
  const HttpServer::Options& options_;
  Stream stream_;
  asio::steady_timer timer_;
  const std::string peer_;
  const std::string counted_address_;  // Held in the limits for this connection; empty: none.

  Phase phase_ = Phase::kWaiting;
  uint64_t deadline_ = 0;  // Arm's count: a timer that fires for an older one does nothing.
  bool first_request_ = true;
  bool reading_ = false;
  bool writing_ = false;
  bool draining_ = false;
  bool keep_alive_ = true;
  bool close_after_ = false;  // The answer being written says Connection: close.
  bool file_body_ = false;    // The request's body carries a file (its limit is the file's).
  int64_t body_bytes_ = 0;    // Counted in context_.body_bytes.
  bool in_drain_ = false;     // Counted in options_.drain.
  beast::flat_buffer buffer_;               // Read and not yet parsed.
  std::array<char, kReadSize> read_bytes_;  // The pending read's.
  std::optional<http::request_parser<GrowingStringBody>> parser_;
  std::shared_ptr<HttpRequest> request_;
  std::string request_count_;  // The client address the request is counted for; empty: none.
  std::function<void()> cancel_;
  std::deque<PendingWrite> writes_;
};

}  // namespace

std::shared_ptr<HttpConnection> MakeHttpConnection(const HttpServerContext& context,
                                                   tcp::socket socket, asio::ssl::context* tls,
                                                   std::string peer, std::string counted_address) {
  if (tls != nullptr) {
    return std::make_shared<Connection<asio::ssl::stream<tcp::socket>>>(
        context, std::move(socket), tls, std::move(peer), std::move(counted_address));
  }
  return std::make_shared<Connection<tcp::socket>>(context, std::move(socket), nullptr,
                                                   std::move(peer), std::move(counted_address));
}

}  // namespace mtserve
