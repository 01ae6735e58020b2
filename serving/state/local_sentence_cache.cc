#include "serving/state/local_sentence_cache.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/compute_type.h"

namespace mtserve {
namespace {

template <typename T>
void Append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// What an entry holds, counted generously: its key twice (the map and the list), its
// hypotheses' texts, ids, log-probabilities and placed terms, and the containers' own overhead.
int64_t EntryBytes(const std::string& key, const TranslationResult& result) {
  constexpr int64_t kOverhead = 160;  // List node, map slot, vectors and strings themselves.
  int64_t bytes = kOverhead + 2 * static_cast<int64_t>(key.size());
  for (const Hypothesis& h : result.hypotheses) {
    bytes += 96 + static_cast<int64_t>(h.text.size() +
                                       (h.ids.size() + h.alignment.size()) * sizeof(int) +
                                       h.token_log_probs.size() * sizeof(float) +
                                       h.terms.size() * sizeof(PlacedTerm));
  }
  return bytes;
}

}  // namespace

LocalSentenceCache::LocalSentenceCache(int64_t max_bytes) : max_bytes_(max_bytes) {}

std::string ModelCacheIdentity(const Model& model) {
  return absl::StrCat(model.content_fingerprint(), "/", ComputeTypeName(model.compute_type()));
}

std::optional<std::string> SentenceCacheKey(const std::string& model,
                                            const DecodingOptions& options,
                                            const std::vector<int>& source_ids,
                                            const TermConstraints* constraints) {
  if (options.sampling_topk > 1 && !options.seed.has_value()) return std::nullopt;
  std::string key;
  key.reserve(48 + source_ids.size() * sizeof(int));
  // Every option that can change the output; return_scores does not (scores are always kept).
  // return_alignment does: a result decoded without alignments has none to give.
  Append(key, model.size());
  key.append(model);
  Append(key, options.beam_size);
  Append(key, options.num_hypotheses);
  Append(key, options.length_penalty);
  Append(key, options.sampling_topk);
  Append(key, options.sampling_topk > 1 ? options.sampling_temperature : 0.0f);
  Append(key, options.sampling_topk > 1 ? options.seed.value_or(0) : uint64_t{0});
  Append(key, options.max_length);
  Append(key, options.min_length);
  Append(key, options.max_length_factor);
  Append(key, options.max_length_offset);
  Append(key, options.return_alignment);
  Append(key, options.shortlist);
  key.append(reinterpret_cast<const char*>(source_ids.data()), source_ids.size() * sizeof(int));
  // The terms the decoder must write (as ids: the bytes a form's unknown ids stand for are put
  // back when the text is joined, from the request's own terms).
  if (constraints != nullptr) {
    for (const TermConstraint& term : constraints->terms) {
      // Where its source is decides where the decoder places it.
      Append(key, term.source_begin);
      Append(key, term.source_end);
      for (const auto* forms : {&term.forms, &term.initial_forms}) {
        Append(key, forms->size());
        for (const std::vector<int>& form : *forms) {
          Append(key, form.size());
          key.append(reinterpret_cast<const char*>(form.data()), form.size() * sizeof(int));
        }
      }
    }
  }
  return key;
}

std::optional<TranslationResult> LocalSentenceCache::Lookup(const std::string& key) {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++stats_.misses;
    return std::nullopt;
  }
  ++stats_.hits;
  recency_.splice(recency_.begin(), recency_, it->second);
  return it->second->result;
}

void LocalSentenceCache::Insert(const std::string& key, const TranslationResult& result) {
  const int64_t bytes = EntryBytes(key, result);
  if (bytes > max_bytes_) return;
  absl::MutexLock lock(&mutex_);
  if (entries_.contains(key)) return;  // Translated twice at once: both are the same.
  while (stats_.bytes + bytes > max_bytes_) {
    const Entry& oldest = recency_.back();
    stats_.bytes -= oldest.bytes;
    entries_.erase(oldest.key);
    recency_.pop_back();
  }
  recency_.push_front({key, result, bytes});
  entries_.emplace(key, recency_.begin());
  stats_.bytes += bytes;
  stats_.entries = static_cast<int64_t>(entries_.size());
}

SentenceCache::Stats LocalSentenceCache::stats() const {
  absl::MutexLock lock(&mutex_);
  Stats stats = stats_;
  stats.entries = static_cast<int64_t>(entries_.size());
  return stats;
}

}  // namespace mtserve
