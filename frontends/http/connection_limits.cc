// The per-address cap and the forwarded address's trust (connection_limits.h).
#include "frontends/http/connection_limits.h"

#include <arpa/inet.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/excerpt.h"

namespace mtserve {
namespace {

// A Forwarded for= value without its quotes, brackets and port: "[2001:db8::1]:4711" ->
// "2001:db8::1", "1.2.3.4:80" -> "1.2.3.4".
absl::string_view ForwardedNode(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  if (absl::ConsumePrefix(&value, "[")) return value.substr(0, value.find(']'));
  // IPv4 with a port: one colon. (An IPv6 address without brackets has several.)
  if (const size_t colon = value.find(':');
      colon != absl::string_view::npos && value.find(':', colon + 1) == absl::string_view::npos) {
    return value.substr(0, colon);
  }
  return value;
}

// The addresses a header names, in order (first: the farthest client).
std::vector<std::string> XForwardedFor(absl::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    out.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return out;
}

std::vector<std::string> ForwardedFor(absl::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view element : absl::StrSplit(value, ',')) {
    for (absl::string_view pair : absl::StrSplit(element, ';')) {
      pair = absl::StripAsciiWhitespace(pair);
      if (pair.size() > 4 && absl::StartsWithIgnoreCase(pair, "for=")) {
        out.emplace_back(ForwardedNode(pair.substr(4)));
      }
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> CanonicalAddress(absl::string_view text) {
  const std::string address(absl::StripAsciiWhitespace(text));
  unsigned char bytes[16];
  char out[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1) {
    return std::string(inet_ntop(AF_INET, bytes, out, sizeof(out)));
  }
  if (inet_pton(AF_INET6, address.c_str(), bytes) != 1) return std::nullopt;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMapped, kMapped + 12, bytes)) {
    return std::string(inet_ntop(AF_INET, bytes + 12, out, sizeof(out)));
  }
  return std::string(inet_ntop(AF_INET6, bytes, out, sizeof(out)));
}

std::string ClientAddress(const std::string& peer, std::optional<absl::string_view> x_forwarded_for,
                          std::optional<absl::string_view> forwarded,
                          const std::set<std::string>& trusted_proxies) {
  if (trusted_proxies.count(peer) == 0) return peer;
  std::vector<std::string> chain;
  if (x_forwarded_for.has_value()) {
    chain = XForwardedFor(*x_forwarded_for);
  } else if (forwarded.has_value()) {
    chain = ForwardedFor(*forwarded);
  }
  // From the nearest hop back: each trusted proxy vouches for the one before it.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const std::optional<std::string> address = CanonicalAddress(*it);
    if (!address.has_value()) return peer;  // A hop that is no address: stop believing.
    if (trusted_proxies.count(*address) == 0) return *address;
  }
  return peer;
}

absl::StatusOr<std::set<std::string>> ConnectionLimits::ParseTrustedProxies(
    const std::vector<std::string>& proxies) {
  std::set<std::string> out;
  for (const std::string& proxy : proxies) {
    if (absl::StripAsciiWhitespace(proxy).empty()) continue;
    const std::optional<std::string> address = CanonicalAddress(proxy);
    if (!address.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http_trusted_proxies: \"", Excerpt(proxy),
                       "\" is not an IP address (give each proxy's address, comma-separated)"));
    }
    out.insert(*address);
  }
  return out;
}

bool ConnectionLimits::TryAcquire(const std::string& address) {
  if (!capped()) return true;
  absl::MutexLock lock(&mutex_);
  int& held = held_[address];
  if (held >= max_per_address_) {
    if (held == 0) held_.erase(address);
    return false;
  }
  ++held;
  return true;
}

void ConnectionLimits::Release(const std::string& address) {
  if (!capped()) return;
  absl::MutexLock lock(&mutex_);
  auto it = held_.find(address);
  if (it == held_.end()) return;
  if (--it->second <= 0) held_.erase(it);
}

int ConnectionLimits::held(const std::string& address) const {
  absl::MutexLock lock(&mutex_);
  auto it = held_.find(address);
  return it == held_.end() ? 0 : it->second;
}

}  // namespace mtserve
