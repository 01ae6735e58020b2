// The decoding-option flags that `mtclient translate` and `mtclient bench` share (same names,
// meanings and defaults as mttranslate's), and their conversion to the request message.
#ifndef MTSERVE_CLIENT_DECODING_FLAGS_H_
#define MTSERVE_CLIENT_DECODING_FLAGS_H_

#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "mtserve/v1/translation.pb.h"

ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(int, num_hypotheses);
ABSL_DECLARE_FLAG(bool, with_scores);

namespace mtserve {

// The options the flags ask for; InvalidArgument naming the flag for a value the message cannot
// carry (negative counts, a non-finite float). Limits that depend on the model are the server's
// to check.
absl::StatusOr<v1::DecodingOptions> DecodingOptionsFromFlags();

}  // namespace mtserve

#endif  // MTSERVE_CLIENT_DECODING_FLAGS_H_
