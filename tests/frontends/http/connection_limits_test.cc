// The per-address cap and the trust of forwarded addresses (frontends/http/connection_limits.h),
// against RFC 7239's and X-Forwarded-For's documented forms.
#include "frontends/http/connection_limits.h"

#include <optional>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

TEST(CanonicalAddressTest, OneSpellingPerAddress) {
  EXPECT_EQ(CanonicalAddress("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(CanonicalAddress(" 10.0.0.7 "), "10.0.0.7");
  EXPECT_EQ(CanonicalAddress("::ffff:192.0.2.1"), "192.0.2.1");
  EXPECT_EQ(CanonicalAddress("2001:DB8:0:0::1"), "2001:db8::1");
  EXPECT_EQ(CanonicalAddress("unknown"), std::nullopt);
  EXPECT_EQ(CanonicalAddress("192.0.2.1:80"), std::nullopt);
  EXPECT_EQ(CanonicalAddress(""), std::nullopt);
}

TEST(ClientAddressTest, AnUntrustedPeerIsTheClientWhateverItSays) {
  const std::set<std::string> trusted = {"10.0.0.1"};
  EXPECT_EQ(ClientAddress("192.0.2.9", "203.0.113.5", std::nullopt, trusted), "192.0.2.9");
  EXPECT_EQ(ClientAddress("192.0.2.9", std::nullopt, "for=203.0.113.5", trusted), "192.0.2.9");
}

TEST(ClientAddressTest, ATrustedProxyNamesTheClient) {
  const std::set<std::string> trusted = {"10.0.0.1", "10.0.0.2"};
  EXPECT_EQ(ClientAddress("10.0.0.1", "203.0.113.5", std::nullopt, trusted), "203.0.113.5");
  // The client may prepend anything: the hop before the last trusted proxy is the one believed.
  EXPECT_EQ(ClientAddress("10.0.0.1", "1.1.1.1, 203.0.113.5, 10.0.0.2", std::nullopt, trusted),
            "203.0.113.5");
  // Forwarded (RFC 7239): quoted, bracketed IPv6 with a port, other parameters, several elements.
  EXPECT_EQ(
      ClientAddress("10.0.0.1", std::nullopt, "for=192.0.2.60;proto=http;by=203.0.113.43", trusted),
      "192.0.2.60");
  EXPECT_EQ(ClientAddress("10.0.0.1", std::nullopt, "For=\"[2001:db8:cafe::17]:4711\"", trusted),
            "2001:db8:cafe::17");
  EXPECT_EQ(ClientAddress("10.0.0.1", std::nullopt, "for=192.0.2.43, for=10.0.0.2", trusted),
            "192.0.2.43");
  EXPECT_EQ(ClientAddress("10.0.0.1", std::nullopt, "for=192.0.2.43:8080", trusted), "192.0.2.43");
  // X-Forwarded-For wins over Forwarded.
  EXPECT_EQ(ClientAddress("10.0.0.1", "203.0.113.5", "for=192.0.2.60", trusted), "203.0.113.5");
}

TEST(ClientAddressTest, NothingBelievableLeavesThePeer) {
  const std::set<std::string> trusted = {"10.0.0.1"};
  EXPECT_EQ(ClientAddress("10.0.0.1", std::nullopt, std::nullopt, trusted), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", "not-an-address", std::nullopt, trusted), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", std::nullopt, "for=_hidden", trusted), "10.0.0.1");
  // Only trusted proxies all the way.
  EXPECT_EQ(ClientAddress("10.0.0.1", "10.0.0.1", std::nullopt, trusted), "10.0.0.1");
}

TEST(ConnectionLimitsTest, ParseTrustedProxies) {
  absl::StatusOr<std::set<std::string>> parsed =
      ConnectionLimits::ParseTrustedProxies({"10.0.0.1", "::ffff:10.0.0.2", ""});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, (std::set<std::string>{"10.0.0.1", "10.0.0.2"}));
  parsed = ConnectionLimits::ParseTrustedProxies({"10.0.0.0/8"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("--http_trusted_proxies"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("10.0.0.0/8"));
}

TEST(ConnectionLimitsTest, CapsEachAddressOnItsOwn) {
  ConnectionLimits limits(/*max_per_address=*/2, {});
  EXPECT_TRUE(limits.capped());
  EXPECT_TRUE(limits.TryAcquire("192.0.2.1"));
  EXPECT_TRUE(limits.TryAcquire("192.0.2.1"));
  EXPECT_FALSE(limits.TryAcquire("192.0.2.1"));
  EXPECT_EQ(limits.held("192.0.2.1"), 2);
  EXPECT_TRUE(limits.TryAcquire("192.0.2.2"));
  limits.Release("192.0.2.1");
  EXPECT_TRUE(limits.TryAcquire("192.0.2.1"));
  limits.Release("192.0.2.1");
  limits.Release("192.0.2.1");
  EXPECT_EQ(limits.held("192.0.2.1"), 0);
}

TEST(ConnectionLimitsTest, NoCapTakesEverything) {
  ConnectionLimits limits(/*max_per_address=*/0, {});
  EXPECT_FALSE(limits.capped());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limits.TryAcquire("192.0.2.1"));
}

}  // namespace
}  // namespace mtserve
