// The sentence cache's interface: translations of sentences by a key of everything that decides
// them (the model's content, the decoding options, the source ids), so a hit answers at once with
// what a fresh translation would give. The same sentence with the same model and options translates
// to the same tokens and text wherever it is decoded (the engine's choices do not depend on what is
// decoded alongside), so replicas may share one cache: LocalSentenceCache keeps it in the
// process; a store shared by replicas implements the same interface.
//
// Implementations are thread-safe.
#ifndef MTSERVE_SERVING_STATE_SENTENCE_CACHE_H_
#define MTSERVE_SERVING_STATE_SENTENCE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/decoding/decoding_options.h"
#include "model/decoding/term_constraints.h"
#include "model/model.h"
#include "model/translator.h"

namespace mtserve {

class SentenceCache {
 public:
  virtual ~SentenceCache() = default;

  // The cached translation for `key` (SentenceCacheKey), if any.
  virtual std::optional<TranslationResult> Lookup(const std::string& key) = 0;
  // Caches `result` under `key`; the store may drop it or older entries to stay within bounds.
  virtual void Insert(const std::string& key, const TranslationResult& result) = 0;

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  virtual Stats stats() const = 0;
};

// The key of a sentence decoded by `model` with `options`, or nullopt if its translation must not
// be cached (sampling without a seed draws anew each time). `model` names what decides the
// model's output, its content rather than its name (ModelCacheIdentity: its files' hash and its
// compute type), so that two names for the same files share entries and a model replaced under
// its name never answers from the old one's. `constraints`: the terms the sentence's decode must
// write (model/decoding/term_constraints.h), null for none.
std::optional<std::string> SentenceCacheKey(const std::string& model,
                                            const DecodingOptions& options,
                                            const std::vector<int>& source_ids,
                                            const TermConstraints* constraints = nullptr);

// What SentenceCacheKey takes for `model`: its content fingerprint and its compute type.
std::string ModelCacheIdentity(const Model& model);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_SENTENCE_CACHE_H_
