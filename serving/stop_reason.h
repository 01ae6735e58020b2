// Why a text must stop before it is translated: its caller went away, or its deadline passed.
#ifndef MTSERVE_SERVING_STOP_REASON_H_
#define MTSERVE_SERVING_STOP_REASON_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace mtserve {

// DEADLINE_EXCEEDED or CANCELLED saying `when` ("while queued"), or OK. A client whose deadline
// passes cancels the call, and that cancellation can arrive before the server's own copy of the
// deadline passes: the server's starts when the request arrives, so it ends later by the
// request's transit time (longer on a loaded machine). A cancellation close to the deadline is
// therefore the deadline's, not the caller's choice.
absl::Status StopReason(bool cancelled, absl::Time deadline, absl::Time now,
                        absl::string_view when);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STOP_REASON_H_
