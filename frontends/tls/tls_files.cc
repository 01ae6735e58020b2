#include "frontends/tls/tls_files.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

// OpenSSL's reason for the last failure, clearing its error queue.
std::string OpenSslError() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "no PEM block of that kind";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr MemoryBio(absl::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// A passphrase callback that has none: an encrypted key fails instead of prompting on a terminal.
int NoPassphrase(char*, int, int, void*) { return -1; }

// Every certificate in `pem`, in order; InvalidArgument naming `flag` if there is none, or with
// `refuse_expired` if one has expired (a CA bundle may hold expired CAs that verify nothing).
absl::StatusOr<std::vector<std::unique_ptr<X509, TlsFiles::Deleter>>> ReadCertificates(
    absl::string_view pem, absl::string_view flag, bool refuse_expired) {
  std::vector<std::unique_ptr<X509, TlsFiles::Deleter>> certificates;
  BioPtr bio = MemoryBio(pem);
  ERR_clear_error();
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    certificates.emplace_back(certificate);
  }
  // The loop ends at the end of the text (PEM_R_NO_START_LINE) or at a broken block.
  const unsigned long error = ERR_peek_last_error();
  if (error != 0 && ERR_GET_REASON(error) != PEM_R_NO_START_LINE) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": certificate ", certificates.size() + 1,
                                                   " cannot be read: ", OpenSslError()));
  }
  ERR_clear_error();
  if (certificates.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": no PEM certificate (-----BEGIN CERTIFICATE-----) in the file"));
  }
  for (size_t i = 0; refuse_expired && i < certificates.size(); ++i) {
    if (X509_cmp_current_time(X509_get0_notAfter(certificates[i].get())) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": certificate ", i + 1, " of the file has expired"));
    }
  }
  return certificates;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsFiles>> ParseTlsFiles(
    absl::string_view certificate_pem, absl::string_view private_key_pem,
    std::optional<absl::string_view> client_ca_pem) {
  auto files = std::make_shared<TlsFiles>();
  auto certificates = ReadCertificates(certificate_pem, "--tls_cert", /*refuse_expired=*/true);
  if (!certificates.ok()) return certificates.status();
  files->certificate = std::move((*certificates)[0]);
  files->chain.reset(sk_X509_new_null());
  for (size_t i = 1; i < certificates->size(); ++i) {
    sk_X509_push(files->chain.get(), (*certificates)[i].release());
  }

  BioPtr key_bio = MemoryBio(private_key_pem);
  ERR_clear_error();
  files->private_key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  if (files->private_key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_key: no PEM private key that can be read without a passphrase: ", OpenSslError()));
  }
  if (X509_check_private_key(files->certificate.get(), files->private_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "--tls_key: the private key does not match the first certificate of --tls_cert");
  }

  if (client_ca_pem.has_value()) {
    auto cas = ReadCertificates(*client_ca_pem, "--tls_client_ca", /*refuse_expired=*/false);
    if (!cas.ok()) return cas.status();
    files->client_ca.reset(X509_STORE_new());
    for (const auto& ca : *cas) X509_STORE_add_cert(files->client_ca.get(), ca.get());
  }
  files->certificate_pem = std::string(certificate_pem);
  files->private_key_pem = std::string(private_key_pem);
  files->client_ca_pem = std::string(client_ca_pem.value_or(""));
  return files;
}

}  // namespace mtserve
