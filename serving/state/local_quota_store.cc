#include "serving/state/local_quota_store.h"

namespace mtserve {

absl::Status LocalQuotaStore::Update(const std::string& key,
                                     absl::FunctionRef<absl::Status(QuotaUsage&)> change) {
  absl::MutexLock lock(&mutex_);
  auto it = usage_.find(key);
  QuotaUsage usage = it == usage_.end() ? QuotaUsage{} : it->second;
  absl::Status status = change(usage);
  if (status.ok()) usage_.insert_or_assign(key, usage);
  return status;
}

}  // namespace mtserve
