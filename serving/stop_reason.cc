#include "serving/stop_reason.h"

#include "absl/strings/str_cat.h"

namespace mtserve {

absl::Status StopReason(bool cancelled, absl::Time deadline, absl::Time now,
                        absl::string_view when) {
  constexpr absl::Duration kDeadlineTransitSlack = absl::Milliseconds(500);
  if (now >= deadline || (cancelled && now >= deadline - kDeadlineTransitSlack)) {
    return absl::DeadlineExceededError(absl::StrCat("the deadline passed ", when));
  }
  if (cancelled) return absl::CancelledError(absl::StrCat("the request was cancelled ", when));
  return absl::OkStatus();
}

}  // namespace mtserve
