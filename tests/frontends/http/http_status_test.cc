#include "frontends/http/http_status.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

TEST(HttpStatusTest, EveryCodeHasTheGatewayStatus) {
  const std::pair<absl::StatusCode, int> expected[] = {
      {absl::StatusCode::kOk, 200},
      {absl::StatusCode::kCancelled, 499},
      {absl::StatusCode::kUnknown, 500},
      {absl::StatusCode::kInvalidArgument, 400},
      {absl::StatusCode::kDeadlineExceeded, 504},
      {absl::StatusCode::kNotFound, 404},
      {absl::StatusCode::kAlreadyExists, 409},
      {absl::StatusCode::kPermissionDenied, 403},
      {absl::StatusCode::kResourceExhausted, 429},
      {absl::StatusCode::kFailedPrecondition, 400},
      {absl::StatusCode::kAborted, 409},
      {absl::StatusCode::kOutOfRange, 400},
      {absl::StatusCode::kUnimplemented, 501},
      {absl::StatusCode::kInternal, 500},
      {absl::StatusCode::kUnavailable, 503},
      {absl::StatusCode::kDataLoss, 500},
      {absl::StatusCode::kUnauthenticated, 401},
  };
  for (const auto& [code, status] : expected) {
    EXPECT_EQ(HttpStatusFor(code), status) << absl::StatusCodeToString(code);
  }
  // A code this build does not know (from a newer peer) is a server error, never a success.
  EXPECT_EQ(HttpStatusFor(static_cast<absl::StatusCode>(99)), 500);
}

TEST(HttpStatusTest, ErrorJsonHasTheCodeNameAndTheMessage) {
  const nlohmann::json body = nlohmann::json::parse(ErrorJson(absl::InvalidArgumentError(
      "options.beam_size is 20; the limit is 16 (the server's --max_beam_size)")));
  EXPECT_EQ(body, nlohmann::json({{"code", "INVALID_ARGUMENT"},
                                  {"message",
                                   "options.beam_size is 20; the limit is 16 (the "
                                   "server's --max_beam_size)"}}));
}

TEST(HttpStatusTest, ErrorJsonEscapesAndStaysValidUtf8) {
  const std::string message = std::string("quote \" backslash \\ newline \n bad \xff byte");
  const nlohmann::json body = nlohmann::json::parse(ErrorJson(absl::NotFoundError(message)));
  EXPECT_EQ(body["code"], "NOT_FOUND");
  EXPECT_THAT(body["message"].get<std::string>(),
              testing::StartsWith("quote \" backslash \\ newline \n bad "));
}

}  // namespace
}  // namespace mtserve
