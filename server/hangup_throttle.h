// When SIGHUPs lead to a reload of the files the server re-reads: the first at once, then at most
// one reload per `min_gap`, the signals that arrive in between merged into one reload at the end
// of the gap, which says how many signals it stands for. A burst (a script sending SIGHUP in a
// loop: 2,000 in 5 s) so costs a few reloads and log lines instead of one each, and the last
// signal of a burst still gets a reload after it. The policy only: times are passed in.
#ifndef MTSERVE_SERVER_HANGUP_THROTTLE_H_
#define MTSERVE_SERVER_HANGUP_THROTTLE_H_

#include "absl/time/time.h"

namespace mtserve {

class HangupThrottle {
 public:
  explicit HangupThrottle(absl::Duration min_gap) : min_gap_(min_gap) {}

  // A SIGHUP arrived.
  void Signal() { ++pending_; }
  // When the reload of the signals received so far is due: absl::InfiniteFuture() if none wait.
  absl::Time Due() const;
  // If a reload is due at `now`: the number of signals it stands for (at least 1), counted as
  // done at `now`; else 0.
  int TakeDue(absl::Time now);

 private:
  const absl::Duration min_gap_;
  int pending_ = 0;
  absl::Time last_reload_ = absl::InfinitePast();
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_HANGUP_THROTTLE_H_
