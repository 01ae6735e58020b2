// The quota store's interface: what each API key has used of its limits, by key name, changed
// atomically. The arithmetic (a token bucket of requests, characters per UTC day) is
// serving/auth/api_key_quota.h's; a store only keeps each key's usage and runs a change on it
// atomically, so replicas may share usage: LocalQuotaStore keeps it in the process; a store shared
// by replicas implements the same interface (a read, the change, and a conditional write, retried
// on conflict).
//
// Implementations are thread-safe.
#ifndef MTSERVE_SERVING_STATE_QUOTA_STORE_H_
#define MTSERVE_SERVING_STATE_QUOTA_STORE_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace mtserve {

// What one key has used.
struct QuotaUsage {
  double tokens = 0;  // Requests that may be made now.
  absl::Time refilled = absl::InfinitePast();
  int64_t day = -1;        // Days since the epoch, UTC.
  int64_t characters = 0;  // Used on `day`.
};

class QuotaStore {
 public:
  virtual ~QuotaStore() = default;

  // Runs `change` on the usage of `key` (a new key's is QuotaUsage{}) with no other change to it
  // in between, and keeps what it made of it only when it returns OK; returns what it returns.
  virtual absl::Status Update(const std::string& key,
                              absl::FunctionRef<absl::Status(QuotaUsage&)> change) = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_QUOTA_STORE_H_
