// What civetweb loads as "libssl.so" (and, through a link, "libcrypto.so"): OpenSSL 3 plus the one
// function Debian's civetweb 1.15 still looks up by its OpenSSL 1.1 name. civetweb opens OpenSSL
// at run time (dlopen) and takes each function by name (dlsym); SSL_get_peer_certificate is only a
// macro in OpenSSL 3, so it found nothing and called a null pointer at every HTTPS connection.
// dlsym on this library's handle finds that function here and every other one in the libssl.so.3
// and libcrypto.so.3 it links. mtserve's RPATH leads civetweb's dlopen here
// (frontends/http/CMakeLists.txt).
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate

extern "C" __attribute__((visibility("default"))) X509* SSL_get_peer_certificate(const SSL* ssl) {
  return SSL_get1_peer_certificate(ssl);
}
