// A lexical shortlist: for a model, the target tokens a sentence may generate, from its source
// tokens. Decoding with one computes the vocabulary projection for those tokens only (see
// VocabularySelection) and normalises each sentence's scores over its own list.
//
// Two text formats are read, so that users bring the lists they already have:
// - CTranslate2's vocabulary map (`vmap.txt`): one rule a line, "SOURCE<TAB>TARGET TARGET ...",
//   SOURCE being one or more source pieces separated by spaces (an n-gram matched against
//   consecutive source tokens), or empty for targets every sentence may generate.
// - Marian's text lexical shortlist (`lex.s2t`): "TARGET SOURCE PROBABILITY" a line (fast_align's
//   extract_lex output); NULL pieces are skipped. With `first`, `best` and `threshold` as Marian
//   takes them: the `first` target ids are always candidates, and each source piece brings its
//   `best` most probable targets among those above `threshold`.
//
// Pieces are looked up in the model's vocabulary (a Marian checkpoint's vocabulary is joint:
// source and target ids are the same). Pieces the vocabulary lacks are skipped and counted.
#ifndef MTSERVE_MODEL_SHORTLIST_H_
#define MTSERVE_MODEL_SHORTLIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/vocab.h"

namespace mtserve {

class Shortlist {
 public:
  // The file names a model directory may hold a shortlist under, in the order they are looked for.
  static constexpr absl::string_view kVocabularyMapFile = "vmap.txt";
  static constexpr absl::string_view kLexicalFile = "lex.s2t";

  struct LexicalOptions {
    int first = 100;
    int best = 100;
    float threshold = 0.f;
  };

  // CTranslate2's vocabulary map, from the file's bytes `text` (errors name `path`, and the line).
  static absl::StatusOr<Shortlist> ParseVocabularyMap(absl::string_view text,
                                                      const std::string& path, const Vocab& vocab);
  // Marian's text lexical shortlist, likewise.
  static absl::StatusOr<Shortlist> ParseLexical(absl::string_view text, const std::string& path,
                                                const Vocab& vocab, const LexicalOptions& options);
  // The shortlist a model directory holds (kVocabularyMapFile, else kLexicalFile with the default
  // LexicalOptions), or null when it holds neither. An unreadable or invalid file is an error.
  static absl::StatusOr<std::shared_ptr<const Shortlist>> FindInModelDirectory(
      const std::string& dir, const Vocab& vocab);

  // Adds to `ids` the target ids a sentence of `source` ids may generate by this list: the ones
  // every sentence may, and those of every rule whose source matches. `ids` comes out sorted
  // without duplicates (what it held before is kept).
  void Candidates(absl::Span<const int> source, std::vector<int>& ids) const;

  // The ids every sentence may generate.
  const std::vector<int>& always() const { return always_; }
  // Pieces of the file the vocabulary lacked (rules or targets skipped).
  int64_t skipped_pieces() const { return skipped_pieces_; }
  // The file it was read from.
  const std::string& path() const { return path_; }
  int64_t memory_bytes() const;

 private:
  std::string path_;
  std::vector<int> always_;  // Sorted.
  // Source n-gram (ids) -> target ids, sorted; n-grams of up to max_ngram_ ids.
  absl::flat_hash_map<std::vector<int>, std::vector<int>> rules_;
  int max_ngram_ = 0;
  int64_t skipped_pieces_ = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_SHORTLIST_H_
