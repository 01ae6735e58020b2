#include "frontends/tls/server_tls.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace mtserve {
namespace {

// How often gRPC's watcher reads the memory files: they are in memory and change only when the
// real files were checked, so this only bounds how late gRPC sees a new version.
constexpr unsigned kGrpcRefreshSeconds = 1;

// Sets what /proc/self/fd/`*fd` holds to `text` in one step: a new memory file is written whole,
// then moved onto descriptor `*fd` (dup3), so a reader opening the path gets the old or the new
// text, never part of one. The first call picks the descriptor.
absl::Status ReplaceMemoryFile(int* fd, const std::string& text, const char* name) {
  const int file = memfd_create(name, MFD_CLOEXEC);
  if (file < 0) {
    return absl::InternalError(absl::StrCat("memfd_create: ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(file, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(file);
      return absl::InternalError(absl::StrCat("writing a memory file: ", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (*fd < 0) {
    *fd = file;
    return absl::OkStatus();
  }
  const int moved = dup3(file, *fd, O_CLOEXEC);
  const int error = errno;
  close(file);
  if (moved < 0) return absl::InternalError(absl::StrCat("dup3: ", std::strerror(error)));
  return absl::OkStatus();
}

std::string FdPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

}  // namespace

absl::StatusOr<std::unique_ptr<ServerTls>> ServerTls::Start(const Options& options) {
  if (options.certificate_path.empty() != options.private_key_path.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together: give both or neither");
  }
  if (options.certificate_path.empty()) {
    return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
  }
  std::unique_ptr<ServerTls> tls(new ServerTls(options));
  FileReloader::Options files;
  files.what = "the TLS files";
  files.paths = {options.certificate_path, options.private_key_path};
  if (!options.client_ca_path.empty()) files.paths.push_back(options.client_ca_path);
  files.poll_interval = options.poll_interval;
  absl::StatusOr<std::unique_ptr<FileReloader>> reloader = FileReloader::Start(
      std::move(files), [self = tls.get()](const std::vector<std::string>& contents) {
        absl::StatusOr<std::shared_ptr<const TlsFiles>> parsed = ParseTlsFiles(
            contents[0], contents[1],
            contents.size() > 2 ? std::optional<absl::string_view>(contents[2]) : std::nullopt);
        if (!parsed.ok()) return parsed.status();
        return self->Install(*std::move(parsed));
      });
  if (!reloader.ok()) return reloader.status();
  tls->reloader_ = *std::move(reloader);
  // After the first Install, which made the memory files.
  tls->grpc_provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      FdPath(tls->grpc_identity_fd_), FdPath(tls->grpc_identity_fd_),
      tls->verifies_clients() ? FdPath(tls->grpc_client_ca_fd_) : "", kGrpcRefreshSeconds);
  return tls;
}

ServerTls::~ServerTls() {
  reloader_.reset();  // No more Install.
  grpc_provider_.reset();
  if (grpc_identity_fd_ >= 0) close(grpc_identity_fd_);
  if (grpc_client_ca_fd_ >= 0) close(grpc_client_ca_fd_);
}

absl::Status ServerTls::Install(std::shared_ptr<const TlsFiles> files) {
  // Key first: a reader of a PEM private key skips certificates, and one of certificates skips
  // keys.
  if (absl::Status status = ReplaceMemoryFile(
          &grpc_identity_fd_, absl::StrCat(files->private_key_pem, "\n", files->certificate_pem),
          "mtserve-tls-identity");
      !status.ok()) {
    return status;
  }
  if (verifies_clients()) {
    if (absl::Status status =
            ReplaceMemoryFile(&grpc_client_ca_fd_, files->client_ca_pem, "mtserve-tls-client-ca");
        !status.ok()) {
      return status;
    }
  }
  absl::MutexLock lock(&mutex_);
  current_ = std::move(files);
  return absl::OkStatus();
}

std::shared_ptr<const TlsFiles> ServerTls::current() const {
  absl::MutexLock lock(&mutex_);
  return current_;
}

std::shared_ptr<grpc::ServerCredentials> ServerTls::GrpcCredentials() const {
  grpc::experimental::TlsServerCredentialsOptions options(grpc_provider_);
  options.watch_identity_key_cert_pairs();
  if (verifies_clients()) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

absl::Status ServerTls::ConfigureSslContext(SSL_CTX* context) {
  if (SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1) {
    return absl::InternalError("cannot require TLS 1.2 or later");
  }
  SSL_CTX_set_cert_cb(context, &ServerTls::UseCurrentFiles, this);
  if (verifies_clients()) {
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    // Sessions resumed with a client certificate need an id context.
    static constexpr unsigned char kSessionContext[] = "mtserve";
    SSL_CTX_set_session_id_context(context, kSessionContext, sizeof(kSessionContext) - 1);
  }
  return absl::OkStatus();
}

int ServerTls::UseCurrentFiles(SSL* ssl, void* self) {
  const std::shared_ptr<const TlsFiles> files = static_cast<ServerTls*>(self)->current();
  // Each takes its own references: the files may be replaced while the connection lives.
  if (SSL_use_cert_and_key(ssl, files->certificate.get(), files->private_key.get(),
                           files->chain.get(), /*override=*/1) != 1) {
    return 0;
  }
  if (files->client_ca != nullptr && SSL_set1_verify_cert_store(ssl, files->client_ca.get()) != 1) {
    return 0;
  }
  return 1;
}

}  // namespace mtserve
