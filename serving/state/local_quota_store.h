// The quota store in the process (quota_store.h): each key's usage in a map under one mutex.
#ifndef MTSERVE_SERVING_STATE_LOCAL_QUOTA_STORE_H_
#define MTSERVE_SERVING_STATE_LOCAL_QUOTA_STORE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "serving/state/quota_store.h"

namespace mtserve {

class LocalQuotaStore : public QuotaStore {
 public:
  absl::Status Update(const std::string& key,
                      absl::FunctionRef<absl::Status(QuotaUsage&)> change) override;

 private:
  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, QuotaUsage> usage_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_LOCAL_QUOTA_STORE_H_
