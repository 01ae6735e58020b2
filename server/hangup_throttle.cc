#include "server/hangup_throttle.h"

namespace mtserve {

absl::Time HangupThrottle::Due() const {
  return pending_ == 0 ? absl::InfiniteFuture() : last_reload_ + min_gap_;
}

int HangupThrottle::TakeDue(absl::Time now) {
  if (pending_ == 0 || now < Due()) return 0;
  const int signals = pending_;
  pending_ = 0;
  last_reload_ = now;
  return signals;
}

}  // namespace mtserve
