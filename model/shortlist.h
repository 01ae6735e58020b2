// A lexical shortlist: for a model, the target tokens a sentence may generate, from its source
// tokens. Decoding with one computes the vocabulary projection for those tokens only (see
// VocabularySelection) and normalises each sentence's scores over its own list.
//
// Two text formats are read, so that users bring the lists they already have:
// - CTranslate2's vocabulary map (`vmap.txt`): one rule a line, "SOURCE<TAB>TARGET TARGET ...",
//   SOURCE being one or more source pieces separated by spaces (an n-gram matched against
//   consecutive source tokens, of at most kMaxNgram pieces), or empty for targets every sentence
//   may generate. A source on several lines has all their targets (CTranslate2 keeps the last
//   line's). CTranslate2 adds its unknown, start and end tokens to every list.
// - Marian's text lexical shortlist (`lex.s2t`): "TARGET SOURCE PROBABILITY" a line (fast_align's
//   extract_lex output, probabilities p(target | source) in [0, 1], not logs; fields separated by
//   spaces or tabs); lines with a NULL piece are skipped. With `first`, `best` and `threshold` as
//   Marian takes them: the ids below `first` are always candidates, each source piece brings its
//   `best` most probable targets among those of a probability above `threshold` (ties: the larger
//   id first, as Marian sorts), and a pair on several lines counts with its largest probability.
//   Not taken: Marian's padding of a list to a multiple of 8 (its int8 kernels' need).
//
// What a sentence may generate whatever the list (its end token, its own source ids copied
// through, its terms' tokens) is not the list's: the translator adds it for either format
// (Candidates in translator.cc). Pieces are looked up in the model's vocabulary (a Marian
// checkpoint's vocabulary is joint: source and target ids are the same). Pieces the vocabulary
// lacks are skipped and counted; a file none of whose rules is left (a list made for another
// vocabulary) is an error, as are an empty file, a line that is not UTF-8 or not of its format,
// each naming the path and the line.
#ifndef MTSERVE_MODEL_SHORTLIST_H_
#define MTSERVE_MODEL_SHORTLIST_H_

#include <cstddef>
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

  // What FindInModelDirectory reads of a file: the largest lists (an unpruned lex.s2t of an
  // OPUS-MT vocabulary) hold some hundred megabytes.
  // Parsing one takes up to about twice its size again.
  static constexpr size_t kMaxFileBytes = size_t{512} << 20;
  // The distinct sources of a vocabulary map (about 100 bytes of memory each, with no target).
  static constexpr int kMaxRules = 1 << 22;
  // The longest source n-gram of a vocabulary map rule (CTranslate2's own lists go to 3 or 4):
  // Candidates looks up this many n-grams at each source position.
  static constexpr int kMaxNgram = 16;

  // Marian's --shortlist PATH FIRST BEST THRESHOLD, with its defaults. InvalidArgument for a
  // negative count or a threshold that is not a number.
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
  // every sentence may, and those of every rule whose source matches (each n-gram of `source`, up
  // to the list's longest). `ids` comes out sorted without duplicates (what it held before is
  // kept).
  void Candidates(absl::Span<const int> source, std::vector<int>& ids) const;

  // The ids every sentence may generate.
  const std::vector<int>& always() const { return always_; }
  // Pieces of the file the vocabulary lacked (rules or targets skipped).
  int64_t skipped_pieces() const { return skipped_pieces_; }
  // The file it was read from.
  const std::string& path() const { return path_; }
  // What it holds in memory (its tables and their allocations).
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
