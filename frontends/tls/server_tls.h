// TLS for the gRPC and HTTP front ends from PEM files (--tls_cert, --tls_key, and
// --tls_client_ca for mutual TLS), re-read while serving when they change or on SIGHUP
// (FileReloader): each new handshake takes the latest good files, connections already open keep
// theirs, and files that do not check out (tls_files.h) leave the previous ones in use, logged.
//
// gRPC (1.51) takes certificates only from its own file watcher, which hands whatever it reads to
// the TLS stack: a half-written or broken file would replace good certificates with ones no
// handshake can use. So gRPC watches private copies instead: memory files (memfd) written only
// with files checked here, each new version written whole and then moved onto the watched
// descriptor at once, so gRPC reads the old version or the new one, never a mix. The key and the
// certificate chain share one such file (PEM readers skip blocks of the other kind), so gRPC
// never pairs a new key with an old certificate. HTTP (OpenSSL through asio::ssl) takes the
// current files at each handshake through a certificate callback on its SSL_CTX.
#ifndef MTSERVE_FRONTENDS_TLS_SERVER_TLS_H_
#define MTSERVE_FRONTENDS_TLS_SERVER_TLS_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/file_reloader.h"
#include "frontends/tls/tls_files.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"

namespace mtserve {

class ServerTls {
 public:
  struct Options {
    std::string certificate_path;  // PEM: the server's certificate, then its intermediates.
    std::string private_key_path;  // PEM, unencrypted.
    std::string client_ca_path;    // PEM CAs of client certificates; empty: none asked for.
    absl::Duration poll_interval = absl::Seconds(10);  // How often the files are checked.
  };

  // Reads and checks the files (InvalidArgument naming the flag if they do not check out).
  static absl::StatusOr<std::unique_ptr<ServerTls>> Start(const Options& options);
  ~ServerTls();

  ServerTls(const ServerTls&) = delete;
  ServerTls& operator=(const ServerTls&) = delete;

  // For the gRPC port: TLS with the current files, requiring a client certificate signed by a
  // client CA when there are client CAs.
  std::shared_ptr<grpc::ServerCredentials> GrpcCredentials() const;
  // For the HTTP transport's SSL_CTX: makes `context` take the current files at each handshake
  // and, with client CAs, require and verify a client certificate.
  absl::Status ConfigureSslContext(SSL_CTX* context);
  // Re-reads the files now (SIGHUP); logs the outcome.
  absl::Status Reload() { return reloader_->Reload(); }

  bool verifies_clients() const { return !options_.client_ca_path.empty(); }

 private:
  explicit ServerTls(const Options& options) : options_(options) {}
  // Makes `files` the current ones for both front ends.
  absl::Status Install(std::shared_ptr<const TlsFiles> files);
  std::shared_ptr<const TlsFiles> current() const;
  // OpenSSL's certificate callback (SSL_CTX_set_cert_cb): 1 when `ssl` has the current files.
  static int UseCurrentFiles(SSL* ssl, void* self);

  const Options options_;
  mutable absl::Mutex mutex_;
  std::shared_ptr<const TlsFiles> current_ ABSL_GUARDED_BY(mutex_);
  // The memory files gRPC watches (/proc/self/fd/N); -1 until the first Install.
  int grpc_identity_fd_ = -1;
  int grpc_client_ca_fd_ = -1;
  std::shared_ptr<grpc::experimental::FileWatcherCertificateProvider> grpc_provider_;
  std::unique_ptr<FileReloader> reloader_;
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_TLS_SERVER_TLS_H_
