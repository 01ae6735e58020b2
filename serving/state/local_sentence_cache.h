// An LRU cache of sentence translations, bounded in bytes. The same sentence (its source ids)
// with the same model and decoding options translates to the same tokens and text wherever it
// is decoded (the engine's choices do not depend on what is decoded alongside), so a hit is
// answered at once, without queueing, with what a fresh translation would give. Sampling without
// a seed draws anew each time and is never cached.
//
// Thread-safe.
#ifndef MTSERVE_SERVING_TRANSLATION_CACHE_H_
#define MTSERVE_SERVING_TRANSLATION_CACHE_H_

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "model/decoding/decoding_options.h"
#include "model/translator.h"

namespace mtserve {

class TranslationCache {
 public:
  // Holds at most `max_bytes` of keys and results (0: caches nothing).
  explicit TranslationCache(int64_t max_bytes);

  // The key of a sentence, or nullopt if its translation must not be cached.
  static std::optional<std::string> Key(int model, const DecodingOptions& options,
                                        const std::vector<int>& source_ids);

  // The cached translation for `key`, most recently used from now on.
  std::optional<TranslationResult> Lookup(const std::string& key);
  // Caches `result` under `key`, dropping the least recently used entries to stay within the
  // bound (a result larger than the whole bound is not cached).
  void Insert(const std::string& key, const TranslationResult& result);

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  Stats stats() const;

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

#endif  // MTSERVE_SERVING_TRANSLATION_CACHE_H_
