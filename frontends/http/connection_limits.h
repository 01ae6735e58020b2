// The optional cap on what one client address may hold open at once over HTTP, and whose word
// is taken for a client's address. Policy only (counts and strings, no sockets, no clocks), so it
// is tested without a server; the transport (http_server.h) applies it:
//   - a connection from an address that holds `max_per_address` connections already is closed
//     as soon as it is accepted;
//   - a connection from a trusted proxy is not counted (it carries many clients): each of its
//     requests counts for the client address the proxy names, from its head until its answer is
//     written, and one over the cap gets 429.
// The forwarded address is believed only from the proxies listed: anyone else could name any
// address in a header.
#ifndef MTSERVE_FRONTENDS_HTTP_CONNECTION_LIMITS_H_
#define MTSERVE_FRONTENDS_HTTP_CONNECTION_LIMITS_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace mtserve {

// An IP address in one spelling: IPv4 as dotted decimal (also when it came as an IPv4-mapped
// IPv6 address, ::ffff:a.b.c.d), IPv6 as inet_ntop writes it; nullopt if `text` is not one.
std::optional<std::string> CanonicalAddress(absl::string_view text);

// The client of a request that came from `peer`. If `peer` is in `trusted_proxies`, the last
// address of X-Forwarded-For (`x_forwarded_for`: "client, proxy1, proxy2") or of Forwarded's
// for= parameters (RFC 7239: `for=1.2.3.4`, `for="[2001:db8::1]:4711"`) that is not itself a
// trusted proxy: the one the first trusted proxy saw. X-Forwarded-For wins when both are given.
// `peer` when it is not trusted, or when the headers name no address that parses.
std::string ClientAddress(const std::string& peer, std::optional<absl::string_view> x_forwarded_for,
                          std::optional<absl::string_view> forwarded,
                          const std::set<std::string>& trusted_proxies);

// Thread-safe.
class ConnectionLimits {
 public:
  struct Options {
    int max_per_address = 0;                   // 0: no cap.
    std::vector<std::string> trusted_proxies;  // IP addresses.
  };

  // INVALID_ARGUMENT naming --http_trusted_proxies for an entry that is not an IP address.
  static absl::StatusOr<std::set<std::string>> ParseTrustedProxies(
      const std::vector<std::string>& proxies);

  // `trusted_proxies` as ParseTrustedProxies gives them.
  ConnectionLimits(int max_per_address, std::set<std::string> trusted_proxies)
      : max_per_address_(max_per_address), trusted_proxies_(std::move(trusted_proxies)) {}

  bool capped() const { return max_per_address_ > 0; }
  int max_per_address() const { return max_per_address_; }
  bool trusted(const std::string& address) const { return trusted_proxies_.count(address) > 0; }
  const std::set<std::string>& trusted_proxies() const { return trusted_proxies_; }

  // Counts one more for `address`; false (nothing counted) if it holds the cap already. Always
  // true without a cap.
  bool TryAcquire(const std::string& address);
  // Ends one that TryAcquire counted.
  void Release(const std::string& address);
  int held(const std::string& address) const;

 private:
  const int max_per_address_;
  const std::set<std::string> trusted_proxies_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<std::string, int> held_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_CONNECTION_LIMITS_H_
