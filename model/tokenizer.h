// Text ↔ ids exactly as Hugging Face's MarianTokenizer does it: SentencePiece pieces from
// source.spm / target.spm, mapped to ids through the joint vocab.json.
#ifndef MTSERVE_MODEL_TOKENIZER_H_
#define MTSERVE_MODEL_TOKENIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/segment.h"
#include "model/model_config.h"
#include "model/vocab.h"

namespace mtserve {

class SentencePieceModel;

class Tokenizer {
 public:
  // Loads `dir`/source.spm, target.spm and vocab.json; eos and pad ids come from the config, unk
  // from vocab.json's "<unk>". Errors name the missing or malformed file.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& dir,
                                                         const ModelConfig& config);
  ~Tokenizer();

  // Source text → source.spm pieces → ids (unknown piece → unk id), then eos.
  std::vector<int> EncodeSource(absl::string_view text) const;
  // The same through target.spm (for scoring a given translation).
  std::vector<int> EncodeTarget(absl::string_view text) const;
  // Source pieces without ids (for tests and debugging).
  std::vector<std::string> SourcePieces(absl::string_view text) const;
  // The bytes of `text` each source piece came from, one per piece of EncodeSource (its </s>
  // excluded): how a piece that became the unknown id (SentencePiece folds a run of characters
  // its vocabulary lacks into one) is found in the text again.
  std::vector<Segment> SourcePieceSpans(absl::string_view text) const;
  // EncodeSource with SourcePieceSpans, from one encoding (SentencePiece's time grows with the
  // square of a run of unknown characters).
  std::vector<int> EncodeSourceWithSpans(absl::string_view text, std::vector<Segment>& spans) const;
  // The same through target.spm (how text/term_matcher.h spells a glossary's target forms and
  // finds what the unknown ids among them stand for).
  std::vector<int> EncodeTargetWithSpans(absl::string_view text, std::vector<Segment>& spans) const;
  // Target ids → pieces → target.spm decode; eos, pad and unk are dropped.
  std::string DecodeTarget(absl::Span<const int> ids) const;

  const Vocab& vocab() const { return vocab_; }
  int eos_id() const { return eos_id_; }
  int pad_id() const { return pad_id_; }
  int unk_id() const { return unk_id_; }

 private:
  Tokenizer() = default;
  std::vector<int> Encode(const SentencePieceModel& spm, absl::string_view text) const;
  std::vector<int> EncodeWithSpans(const SentencePieceModel& spm, absl::string_view text,
                                   std::vector<Segment>& spans) const;

  std::unique_ptr<SentencePieceModel> source_;
  std::unique_ptr<SentencePieceModel> target_;
  Vocab vocab_;
  int eos_id_ = 0;
  int pad_id_ = 0;
  int unk_id_ = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TOKENIZER_H_
