#include "serving/repository/cold_load_limit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace mtserve {

absl::Status ColdLoadLimit::Take(const std::string& caller, absl::Time now) {
  if (per_minute_ <= 0) return absl::OkStatus();
  auto [it, added] = buckets_.try_emplace(caller);
  Bucket& bucket = it->second;
  if (added) {
    bucket.loads = per_minute_;
  } else {
    const double minutes = std::max(0.0, absl::ToDoubleMinutes(now - bucket.updated));
    bucket.loads = std::min<double>(per_minute_, bucket.loads + minutes * per_minute_);
  }
  bucket.updated = now;
  if (bucket.loads >= 1) {
    bucket.loads -= 1;
    return absl::OkStatus();
  }
  const double seconds = std::ceil((1 - bucket.loads) * 60.0 / per_minute_);
  return absl::ResourceExhaustedError(
      absl::StrCat("this request needs a model that is not loaded, and its caller has started ",
                   per_minute_, " model loads in the last minute (--max_cold_loads_per_minute ",
                   per_minute_, "); retry in ", seconds, " s"));
}

}  // namespace mtserve
