// How many models a caller may have loaded per minute: a request that needs a model that is not
// loaded (nor loading) starts a cold load, which costs seconds of a core and may unload another
// caller's model; without a bound, one client cycling through a directory of models would make
// the server load and unload all day. Each caller (its API key's name; every caller without keys
// shares one allowance) has a bucket of `per_minute` loads that refills at that rate; a cold load
// with an empty bucket is refused RESOURCE_EXHAUSTED naming the flag. Loads of models already
// loaded or loading cost nothing.
//
// Plain data: times are passed in. Not thread-safe (the core calls it under its lock).
#ifndef MTSERVE_SERVING_REPOSITORY_COLD_LOAD_LIMIT_H_
#define MTSERVE_SERVING_REPOSITORY_COLD_LOAD_LIMIT_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace mtserve {

class ColdLoadLimit {
 public:
  // `per_minute` 0: no limit.
  explicit ColdLoadLimit(int per_minute) : per_minute_(per_minute) {}

  // Takes one cold load from `caller`'s allowance at `now`, or RESOURCE_EXHAUSTED saying when
  // the next one is allowed.
  absl::Status Take(const std::string& caller, absl::Time now);

 private:
  struct Bucket {
    double loads = 0;  // Loads left.
    absl::Time updated;
  };
  const int per_minute_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_REPOSITORY_COLD_LOAD_LIMIT_H_
