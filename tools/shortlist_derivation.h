// Derives a lexical shortlist (CTranslate2's vocabulary map, model/shortlist.h) for a model from
// its own translations of a source-language text: which target tokens it generates most, and
// which it generates for each source piece (by the decoder's alignment, the aligned piece's
// neighbours, or the whole sentence). For tools/make_shortlist.cc and its test.
#ifndef MTSERVE_TOOLS_SHORTLIST_DERIVATION_H_
#define MTSERVE_TOOLS_SHORTLIST_DERIVATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/model.h"
#include "model/vocab.h"

namespace mtserve {

// What links a generated token to source pieces.
enum class ShortlistCounting {
  kAligned,     // The piece the decoder's alignment gives it.
  kNeighbours,  // That piece and the pieces either side of it.
  kSentence,    // Every piece of its sentence (co-occurrence).
};
absl::StatusOr<ShortlistCounting> ParseShortlistCounting(absl::string_view name);

struct ShortlistOptions {
  // The defaults: what kept BLEU within 0.2 of the whole vocabulary for the Multi30k models
  // (docs/benchmarks.md#lexical-shortlists).
  int frequent = 800;   // Target tokens every sentence may generate (</s> besides).
  int per_source = 10;  // Targets a source piece brings at most, beyond the frequent ones.
  int min_count = 1;    // Times a target must have been linked to a piece to be one of its.
  ShortlistCounting counting = ShortlistCounting::kNeighbours;
};

// InvalidArgument naming the flag ("--frequent", ...) and its limit: the one place they are
// checked.
absl::Status ValidateShortlistOptions(const ShortlistOptions& options);

// Counts over translations: target token frequencies and (source piece, target) links.
class ShortlistCounts {
 public:
  explicit ShortlistCounts(ShortlistCounting counting) : counting_(counting) {}

  // One translation: `source` ids ending with </s> and the `hypotheses` generated for it (their
  // ids and alignment, one source position per id), each counted alike. A token aligned to the
  // source's </s> counts for the piece before it.
  void Add(absl::Span<const int> source, absl::Span<const Hypothesis> hypotheses);

  int64_t translations() const { return translations_; }  // Sources, not hypotheses.
  int64_t target_tokens() const { return target_tokens_; }

  // The vocabulary map's text: a first line with an empty source and the `frequent` most
  // generated targets and </s>, then for each source piece (in id order) its `per_source` most
  // probable other targets by p(target | piece) among those linked to it `min_count` times or
  // more (best first; ties in id order). Pieces as `vocab` spells them.
  struct Written {
    std::string text;
    int rules = 0;             // Source pieces with a line (the always-line not counted).
    int64_t rule_targets = 0;  // Targets on those lines.
    int always = 0;            // Targets on the always-line.
    // The same as ids: the always-line's, and each source piece's targets.
    std::vector<int> always_ids;
    absl::flat_hash_map<int, std::vector<int>> rule_ids;
  };
  Written VocabularyMap(const ShortlistOptions& options, const Vocab& vocab, int eos_id,
                        int pad_id) const;

 private:
  ShortlistCounting counting_;
  int64_t translations_ = 0;
  int64_t target_tokens_ = 0;
  absl::flat_hash_map<int, int64_t> target_counts_;
  absl::flat_hash_map<int, int64_t> source_counts_;  // Occurrences (sentences for kSentence).
  absl::flat_hash_map<int, absl::flat_hash_map<int, int64_t>> links_;  // Source -> target -> n.
};

// A source sentence's ids (ending with </s>) and the model's translations of it, best first
// (options.num_hypotheses of them at most).
struct SentenceTranslation {
  std::vector<int> source;
  std::vector<Hypothesis> hypotheses;
};

// Translates each of `lines` as one sentence with `model` (`options`, with the alignment and the
// whole vocabulary even where the model has a shortlist, in batches of `batch_size` sentences
// sorted by length, on `threads` workers of one compute thread each, sharing the model), in input
// order. Empty lines are skipped; a line longer than the model's positions is skipped and named
// in `skipped` (as "line N: ...").
absl::StatusOr<std::vector<SentenceTranslation>> TranslateLines(
    std::shared_ptr<const Model> model, const std::vector<std::string>& lines,
    DecodingOptions options, int threads, int batch_size, std::vector<std::string>& skipped);

// TranslateLines, counted into `counts`.
absl::Status CountTranslations(std::shared_ptr<const Model> model,
                               const std::vector<std::string>& lines, DecodingOptions options,
                               int threads, int batch_size, ShortlistCounts& counts,
                               std::vector<std::string>& skipped);

// How a shortlist serves translations (of a text it was not derived from): the mean candidates a
// sentence gets (the always-line, its pieces' rules and its pieces themselves, as decoding allows
// them: DecodingOptions::shortlist), and the sentences every token of whose best translation is
// among its candidates (those a decode with the list can translate the same).
struct ShortlistCoverage {
  int64_t sentences = 0;
  int64_t covered = 0;
  double mean_candidates = 0;
};
ShortlistCoverage Coverage(const ShortlistCounts::Written& list,
                           const std::vector<SentenceTranslation>& translations);

}  // namespace mtserve

#endif  // MTSERVE_TOOLS_SHORTLIST_DERIVATION_H_
