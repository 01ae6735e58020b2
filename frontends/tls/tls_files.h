// The PEM files of the server's TLS (--tls_cert, --tls_key, --tls_client_ca), parsed and checked
// with OpenSSL before anything uses them: a certificate chain, the private key that matches its
// first certificate, and optionally the CAs that sign client certificates. Whatever fails here
// (no PEM block, an encrypted or mismatched key, an expired certificate) fails start-up, or keeps
// the previous files in use when they are replaced while serving.
#ifndef MTSERVE_FRONTENDS_TLS_TLS_FILES_H_
#define MTSERVE_FRONTENDS_TLS_TLS_FILES_H_

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

struct TlsFiles {
  struct Deleter {
    void operator()(X509* x) const { X509_free(x); }
    void operator()(EVP_PKEY* x) const { EVP_PKEY_free(x); }
    void operator()(STACK_OF(X509) * x) const { sk_X509_pop_free(x, X509_free); }
    void operator()(X509_STORE* x) const { X509_STORE_free(x); }
  };

  std::unique_ptr<X509, Deleter> certificate;      // The server's own.
  std::unique_ptr<STACK_OF(X509), Deleter> chain;  // The intermediates after it.
  std::unique_ptr<EVP_PKEY, Deleter> private_key;  // Matches `certificate`.
  std::unique_ptr<X509_STORE, Deleter> client_ca;  // Null: no client certificates.
  // The files' text as checked, for gRPC, which takes PEM.
  std::string certificate_pem;
  std::string private_key_pem;
  std::string client_ca_pem;  // Empty without client CAs.
};

// The files' contents parsed and checked; no `client_ca_pem`: no client certificates.
// InvalidArgument naming the flag and what is wrong. Never prompts for a passphrase.
absl::StatusOr<std::shared_ptr<const TlsFiles>> ParseTlsFiles(
    absl::string_view certificate_pem, absl::string_view private_key_pem,
    std::optional<absl::string_view> client_ca_pem);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_TLS_TLS_FILES_H_
