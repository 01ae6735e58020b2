// The sentence cache in the process (sentence_cache.h): an LRU of translations, bounded in bytes.
//
// Thread-safe.
#ifndef MTSERVE_SERVING_STATE_LOCAL_SENTENCE_CACHE_H_
#define MTSERVE_SERVING_STATE_LOCAL_SENTENCE_CACHE_H_

#include <cstdint>
#include <list>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "model/translator.h"
#include "serving/state/sentence_cache.h"

namespace mtserve {

class LocalSentenceCache : public SentenceCache {
 public:
  // Holds at most `max_bytes` of keys and results (0: caches nothing).
  explicit LocalSentenceCache(int64_t max_bytes);

  // The cached translation for `key`, most recently used from now on.
  std::optional<TranslationResult> Lookup(const std::string& key) override;
  // Caches `result` under `key`, dropping the least recently used entries to stay within the
  // bound (a result larger than the whole bound is not cached).
  void Insert(const std::string& key, const TranslationResult& result) override;

  Stats stats() const override;

 private:
  struct Entry {
    std::string key;
    TranslationResult result;
    int64_t bytes = 0;
  };
  using List = std::list<Entry>;

  const int64_t max_bytes_;
  mutable absl::Mutex mutex_;
  List recency_ ABSL_GUARDED_BY(mutex_);  // Most recently used first.
  absl::flat_hash_map<std::string, List::iterator> entries_ ABSL_GUARDED_BY(mutex_);
  Stats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_LOCAL_SENTENCE_CACHE_H_
