#include "tools/shortlist_derivation.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "model/translator.h"

namespace mtserve {

absl::StatusOr<ShortlistCounting> ParseShortlistCounting(absl::string_view name) {
  if (name == "aligned") return ShortlistCounting::kAligned;
  if (name == "neighbours") return ShortlistCounting::kNeighbours;
  if (name == "sentence") return ShortlistCounting::kSentence;
  return absl::InvalidArgumentError(
      absl::StrCat("--counting is '", name, "'; it must be aligned, neighbours or sentence"));
}

absl::Status ValidateShortlistOptions(const ShortlistOptions& options) {
  if (options.frequent < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--frequent is ", options.frequent, "; it must be 0 or more"));
  }
  if (options.per_source < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--per_source is ", options.per_source, "; it must be 0 or more"));
  }
  if (options.min_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--min_count is ", options.min_count, "; it must be 1 or more"));
  }
  return absl::OkStatus();
}

void ShortlistCounts::Add(absl::Span<const int> source, absl::Span<const Hypothesis> hypotheses) {
  ++translations_;
  // The source's pieces, its </s> left out.
  const int pieces = static_cast<int>(source.size()) - 1;
  for (const Hypothesis& hypothesis : hypotheses) {
    for (int t : hypothesis.ids) {
      ++target_counts_[t];
      ++target_tokens_;
    }
  }
  if (pieces <= 0) return;
  if (counting_ == ShortlistCounting::kSentence) {
    const absl::flat_hash_set<int> sources(source.begin(), source.begin() + pieces);
    for (const Hypothesis& hypothesis : hypotheses) {
      const absl::flat_hash_set<int> targets(hypothesis.ids.begin(), hypothesis.ids.end());
      for (int s : sources) {
        absl::flat_hash_map<int, int64_t>& links = links_[s];
        for (int t : targets) ++links[t];
      }
    }
    for (int s : sources) ++source_counts_[s];
    return;
  }
  for (int i = 0; i < pieces; ++i) ++source_counts_[source[i]];
  const int radius = counting_ == ShortlistCounting::kNeighbours ? 1 : 0;
  for (const Hypothesis& hypothesis : hypotheses) {
    const std::vector<int>& target = hypothesis.ids;
    const std::vector<int>& alignment = hypothesis.alignment;
    for (size_t j = 0; j < target.size() && j < alignment.size(); ++j) {
      const int at = std::clamp(alignment[j], 0, pieces - 1);
      for (int i = std::max(0, at - radius); i <= std::min(pieces - 1, at + radius); ++i) {
        ++links_[source[i]][target[j]];
      }
    }
  }
}

namespace {

// A piece as a vmap line can hold it: no tab, space or line break.
bool Writable(const std::string& piece) {
  return !piece.empty() && piece.find_first_of(" \t\r\n") == std::string::npos;
}

}  // namespace

ShortlistCounts::Written ShortlistCounts::VocabularyMap(const ShortlistOptions& options,
                                                        const Vocab& vocab, int eos_id,
                                                        int pad_id) const {
  auto writable = [&](int id) { return id != pad_id && Writable(vocab.Piece(id)); };
  // Most generated first, ties in id order.
  std::vector<std::pair<int64_t, int>> frequent;
  for (const auto& [id, n] : target_counts_) {
    if (id != eos_id && writable(id)) frequent.push_back({-n, id});
  }
  std::sort(frequent.begin(), frequent.end());
  if (static_cast<int>(frequent.size()) > options.frequent) frequent.resize(options.frequent);
  Written written;
  absl::flat_hash_set<int> always = {eos_id};
  std::vector<std::string> pieces = {vocab.Piece(eos_id)};
  written.always_ids = {eos_id};
  for (const auto& [n, id] : frequent) {
    always.insert(id);
    pieces.push_back(vocab.Piece(id));
    written.always_ids.push_back(id);
  }
  written.always = static_cast<int>(pieces.size());
  absl::StrAppend(&written.text, "\t", absl::StrJoin(pieces, " "), "\n");

  std::vector<int> sources;
  for (const auto& [s, links] : links_) {
    if (writable(s) && s != eos_id) sources.push_back(s);
  }
  std::sort(sources.begin(), sources.end());
  for (int s : sources) {
    // p(target | s) = links / occurrences of s: with one denominator per piece, the order of its
    // counts.
    std::vector<std::pair<int64_t, int>> best;
    for (const auto& [t, n] : links_.at(s)) {
      if (n >= options.min_count && !always.contains(t) && writable(t)) best.push_back({-n, t});
    }
    std::sort(best.begin(), best.end());
    if (static_cast<int>(best.size()) > options.per_source) best.resize(options.per_source);
    if (best.empty()) continue;
    pieces.clear();
    std::vector<int>& ids = written.rule_ids[s];
    for (const auto& [n, t] : best) {
      pieces.push_back(vocab.Piece(t));
      ids.push_back(t);
    }
    absl::StrAppend(&written.text, vocab.Piece(s), "\t", absl::StrJoin(pieces, " "), "\n");
    ++written.rules;
    written.rule_targets += static_cast<int64_t>(pieces.size());
  }
  return written;
}

absl::StatusOr<std::vector<SentenceTranslation>> TranslateLines(
    std::shared_ptr<const Model> model, const std::vector<std::string>& lines,
    DecodingOptions options, int threads, int batch_size, std::vector<std::string>& skipped) {
  if (threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads is ", threads, "; it must be 1 or more"));
  }
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size is ", batch_size, "; it must be 1 or more"));
  }
  options.return_alignment = true;
  options.shortlist = false;  // The model's own choices, not those of a list it may have already.
  if (absl::Status valid = ValidateDecodingOptions(options, model->config(), "--"); !valid.ok()) {
    return valid;
  }
  const int max_tokens = model->config().max_position_embeddings;
  std::vector<std::vector<int>> sources;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::vector<int> ids = model->tokenizer().EncodeSource(lines[i]);
    if (static_cast<int>(ids.size()) > max_tokens) {
      skipped.push_back(absl::StrCat("line ", i + 1, ": ", ids.size(),
                                     " source tokens; the limit is ", max_tokens,
                                     " (the model's max_position_embeddings)"));
      continue;
    }
    sources.push_back(std::move(ids));
  }
  // Sorted by length, so that a batch's sentences pad little.
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  const size_t batches = (order.size() + batch_size - 1) / batch_size;
  std::vector<std::vector<Hypothesis>> hypotheses(sources.size());
  std::atomic<size_t> next{0};
  absl::Mutex mutex;
  absl::Status error;
  auto work = [&] {
    Translator translator(model, /*num_threads=*/1);
    for (size_t b = next++; b < batches; b = next++) {
      const size_t first = b * batch_size;
      const size_t last = std::min(order.size(), first + batch_size);
      std::vector<std::vector<int>> batch;
      for (size_t i = first; i < last; ++i) batch.push_back(sources[order[i]]);
      absl::StatusOr<std::vector<std::vector<Hypothesis>>> out =
          translator.TranslateIds(batch, options);
      if (!out.ok()) {
        absl::MutexLock lock(&mutex);
        error.Update(out.status());
        return;
      }
      for (size_t i = first; i < last; ++i) hypotheses[order[i]] = std::move((*out)[i - first]);
    }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (!error.ok()) return error;
  std::vector<SentenceTranslation> translations(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    translations[i] = {std::move(sources[i]), std::move(hypotheses[i])};
  }
  return translations;
}

absl::Status CountTranslations(std::shared_ptr<const Model> model,
                               const std::vector<std::string>& lines, DecodingOptions options,
                               int threads, int batch_size, ShortlistCounts& counts,
                               std::vector<std::string>& skipped) {
  absl::StatusOr<std::vector<SentenceTranslation>> translations =
      TranslateLines(std::move(model), lines, options, threads, batch_size, skipped);
  if (!translations.ok()) return translations.status();
  // Counted in input order, in one thread: the same counts whatever the threads.
  for (const SentenceTranslation& t : *translations) counts.Add(t.source, t.hypotheses);
  return absl::OkStatus();
}

ShortlistCoverage Coverage(const ShortlistCounts::Written& list,
                           const std::vector<SentenceTranslation>& translations) {
  ShortlistCoverage coverage;
  int64_t candidates = 0;
  for (const SentenceTranslation& t : translations) {
    // The list's, and the sentence's own pieces, which decoding always allows (copied through).
    absl::flat_hash_set<int> reachable(list.always_ids.begin(), list.always_ids.end());
    reachable.insert(t.source.begin(), t.source.end());
    for (int s : t.source) {
      if (auto rule = list.rule_ids.find(s); rule != list.rule_ids.end()) {
        reachable.insert(rule->second.begin(), rule->second.end());
      }
    }
    ++coverage.sentences;
    candidates += static_cast<int64_t>(reachable.size());
    const std::vector<int> none;
    const std::vector<int>& best = t.hypotheses.empty() ? none : t.hypotheses.front().ids;
    coverage.covered +=
        std::all_of(best.begin(), best.end(), [&](int id) { return reachable.contains(id); });
  }
  if (coverage.sentences > 0) {
    coverage.mean_candidates = static_cast<double>(candidates) / coverage.sentences;
  }
  return coverage;
}

}  // namespace mtserve
