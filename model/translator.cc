#include "model/translator.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "model/decode_memory.h"
#include "model/decoding/search.h"
#include "model/layers/decoder.h"
#include "model/layers/encoder.h"
#include "model/ops/compute_context.h"
#include "model/ops/shape_buckets.h"
#include "model/shortlist.h"
#include "model/vocab.h"

namespace mtserve {
namespace {

// Whether each piece of `vocab` continues the word before it: no SentencePiece word-start mark
// (U+2581), not a special token, and a letter, digit, hyphen (a compound) or any non-ASCII
// character first.
std::vector<bool> WordContinuations(const Vocab& vocab) {
  std::vector<bool> continues(vocab.size(), false);
  for (int id = 0; id < vocab.size(); ++id) {
    const std::string& piece = vocab.Piece(id);
    if (piece.empty() || absl::StartsWith(piece, "\u2581") || piece.front() == '<') continue;
    const unsigned char first = static_cast<unsigned char>(piece.front());
    continues[id] = first >= 0x80 || absl::ascii_isalnum(first) || first == '-';
  }
  return continues;
}

// The ids an input of `source` ids with `terms` (null: none) may generate by `shortlist`: the
// shortlist's, the source's own (a name or number is copied through), every token of its terms'
// forms, and </s>.
std::vector<int> Candidates(const Shortlist& shortlist, const std::vector<int>& source,
                            const TermConstraints* terms, int eos_id) {
  std::vector<int> ids(source);
  ids.push_back(eos_id);
  if (terms != nullptr) {
    for (const TermConstraint& term : terms->terms) {
      for (const auto* forms : {&term.forms, &term.initial_forms}) {
        for (const std::vector<int>& form : *forms) ids.insert(ids.end(), form.begin(), form.end());
      }
    }
  }
  shortlist.Candidates(source, ids);
  return ids;
}

}  // namespace

// What a translator computes with, and the decode in progress.
class Translator::Impl {
 public:
  Impl(std::shared_ptr<const Model> model, int num_threads)
      : model_(std::move(model)), ctx_(num_threads), encoder_(*model_), decoder_(*model_) {}

  // Validates, pads and encodes `sources`, then adds them to the decoder; returns their ids.
  absl::StatusOr<std::vector<int>> Encode(const std::vector<std::vector<int>>& sources);
  // What the encoder and the decoder keep for the next inputs (Translator::retained_bytes), and
  // freeing it when it is more than kRetainedBatchBytes.
  size_t retained_bytes() const {
    return encoder_.scratch_bytes() + encoder_output_.bytes() + decoder_.retained_bytes();
  }
  void LimitRetained();
  absl::Status CheckNoSession() const {
    if (search_ == nullptr) return absl::OkStatus();
    return absl::FailedPreconditionError("a DecodeSession of this Translator is still open");
  }

  std::shared_ptr<const Model> model_;
  ComputeContext ctx_;
  Encoder encoder_;
  Decoder decoder_;
  FloatBuffer encoder_output_;
  std::unique_ptr<Search> search_;  // While a session is open.
  SearchParams search_params_;      // Those of the session's search, for checking inputs.
  // SearchParams::word_continuations of the model's target vocabulary, made by the first decode.
  std::shared_ptr<const std::vector<bool>> word_continuations_;
};

Translator::Translator(std::shared_ptr<const Model> model, int num_threads)
    : impl_(std::make_unique<Impl>(std::move(model), num_threads)) {}

Translator::~Translator() = default;

const Model& Translator::model() const { return *impl_->model_; }

size_t Translator::retained_bytes() const { return impl_->retained_bytes(); }

absl::StatusOr<std::vector<int>> Translator::Impl::Encode(
    const std::vector<std::vector<int>>& sources) {
  const ModelConfig& config = model_->config();
  std::vector<int> lengths;
  int max_length = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int length = static_cast<int>(sources[i].size());
    if (length == 0 || length > config.max_position_embeddings) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has ", length, " tokens; the model accepts 1 to ",
                       config.max_position_embeddings, " (max_position_embeddings)"));
    }
    for (int id : sources[i]) {
      if (id < 0 || id >= config.vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " has token id ", id,
                                                       " outside the vocabulary [0, ",
                                                       config.vocab_size, ")"));
      }
    }
    lengths.push_back(length);
    max_length = std::max(max_length, length);
  }
  // Padded to a bucketed length: the encoder's shapes are then few (shape_buckets.h).
  max_length = static_cast<int>(BucketLength(max_length));
  std::vector<int> ids(sources.size() * max_length, config.pad_token_id);
  for (size_t b = 0; b < sources.size(); ++b) {
    std::copy(sources[b].begin(), sources[b].end(), ids.begin() + b * max_length);
  }
  encoder_.Forward(ctx_, ids, lengths, max_length, encoder_output_);
  // The decoder keeps what it needs, its own keys and values; the output's buffer stays for
  // the next inputs, as the encoder's scratch does.
  std::vector<int> sentences =
      decoder_.AddSentences(ctx_, encoder_output_.data(), lengths, max_length);
  LimitRetained();
  return sentences;
}

void Translator::Impl::LimitRetained() {
  if (retained_bytes() <= static_cast<size_t>(kRetainedBatchBytes)) return;
  decoder_.ReleaseFreeGroups();
  encoder_.ReleaseScratch();
  encoder_output_.Release();
}

absl::StatusOr<std::unique_ptr<DecodeSession>> Translator::StartDecoding(
    const DecodingOptions& options, CancelledFn cancelled) {
  Impl& impl = *impl_;
  MT_RETURN_IF_ERROR(impl.CheckNoSession());
  const ModelConfig& config = impl.model_->config();
  MT_RETURN_IF_ERROR(ValidateDecodingOptions(options, config));
  impl.ctx_.BindToCallingThread();
  impl.decoder_.Reset();
  SearchParams params = MakeSearchParams(config, options);
  if (impl.word_continuations_ == nullptr) {
    impl.word_continuations_ = std::make_shared<const std::vector<bool>>(
        WordContinuations(impl.model_->tokenizer().vocab()));
  }
  params.word_continuations = impl.word_continuations_;
  impl.search_params_ = params;
  params.cancelled = std::move(cancelled);
  impl.search_ = Search::Create(std::move(params));
  return std::unique_ptr<DecodeSession>(new DecodeSession(impl_.get()));
}

DecodeSession::~DecodeSession() {
  translator_->search_.reset();
  translator_->decoder_.Reset();
  translator_->LimitRetained();
}

absl::StatusOr<std::vector<int>> DecodeSession::AddInputs(
    const std::vector<std::vector<int>>& sources,
    const std::vector<std::shared_ptr<const TermConstraints>>& constraints) {
  if (!constraints.empty() && constraints.size() != sources.size()) {
    return absl::InvalidArgumentError(absl::StrCat("AddInputs has ", sources.size(),
                                                   " sources but ", constraints.size(),
                                                   " term constraints; give none or one each"));
  }
  if (sources.empty()) return std::vector<int>();
  const SearchParams& params = translator_->search_params_;
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (constraints[i] == nullptr) continue;
    const absl::Status valid =
        ValidateTermConstraints(*constraints[i], translator_->model_->config(), params.options,
                                static_cast<int>(sources[i].size()));
    if (valid.ok()) continue;
    // One input is the caller's to name; of several, the message says which.
    if (sources.size() == 1) return valid;
    return absl::InvalidArgumentError(absl::StrCat("input ", i, ": ", valid.message()));
  }
  MT_ASSIGN_OR_RETURN(std::vector<int> sentences, translator_->Encode(sources));
  const Shortlist* shortlist =
      params.options.shortlist ? translator_->model_->shortlist() : nullptr;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const TermConstraints* terms = constraints.empty() ? nullptr : constraints[i].get();
    translator_->search_->Add(
        translator_->decoder_, sentences[i], static_cast<int>(sources[i].size()),
        constraints.empty() ? nullptr : constraints[i],
        shortlist != nullptr ? Candidates(*shortlist, sources[i], terms, params.eos_id)
                             : std::vector<int>());
  }
  return sentences;
}

void DecodeSession::Step(std::vector<FinishedSentence>& finished) {
  translator_->search_->Step(translator_->ctx_, translator_->decoder_, finished);
  translator_->LimitRetained();  // Sentences that finished gave up their keys and values.
}

int DecodeSession::inputs() const { return translator_->search_->sentences(); }

size_t DecodeSession::memory_bytes() const {
  return translator_->decoder_.memory_bytes() - translator_->decoder_.retained_bytes() +
         translator_->search_->memory_bytes();
}

size_t DecodeSession::encoding_peak_bytes() const { return translator_->encoder_.peak_bytes(); }

absl::StatusOr<std::vector<std::vector<Hypothesis>>> Translator::TranslateIds(
    const std::vector<std::vector<int>>& sources, const DecodingOptions& options,
    const CancelledFn& cancelled,
    const std::vector<std::shared_ptr<const TermConstraints>>& constraints) {
  std::vector<int> index_of;  // By sentence id.
  CancelledFn sentence_cancelled;
  if (cancelled) sentence_cancelled = [&](int sentence) { return cancelled(index_of[sentence]); };
  MT_ASSIGN_OR_RETURN(const std::unique_ptr<DecodeSession> session,
                      StartDecoding(options, std::move(sentence_cancelled)));
  MT_ASSIGN_OR_RETURN(const std::vector<int> sentences, session->AddInputs(sources, constraints));
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (static_cast<size_t>(sentences[i]) >= index_of.size()) index_of.resize(sentences[i] + 1);
    index_of[sentences[i]] = static_cast<int>(i);
  }
  std::vector<std::vector<Hypothesis>> results(sources.size());
  std::vector<FinishedSentence> finished;
  while (session->inputs() > 0) {
    finished.clear();
    session->Step(finished);
    for (FinishedSentence& f : finished) results[index_of[f.sentence]] = std::move(f.hypotheses);
  }
  return results;
}

absl::StatusOr<std::vector<TranslationResult>> Translator::Translate(
    const std::vector<std::string>& texts, const DecodingOptions& options,
    const CancelledFn& cancelled) {
  const Tokenizer& tokenizer = model().tokenizer();
  std::vector<TranslationResult> results(texts.size());
  std::vector<std::vector<int>> sources;
  std::vector<size_t> positions;  // Where each non-empty text's result goes.
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) {
      results[i].hypotheses.resize(1);
      continue;
    }
    sources.push_back(tokenizer.EncodeSource(texts[i]));
    results[i].source_tokens = static_cast<int>(sources.back().size());
    positions.push_back(i);
  }
  CancelledFn source_cancelled;
  if (cancelled)
    source_cancelled = [&](int j) { return cancelled(static_cast<int>(positions[j])); };
  MT_ASSIGN_OR_RETURN(std::vector<std::vector<Hypothesis>> hypotheses,
                      TranslateIds(sources, options, source_cancelled));
  for (size_t j = 0; j < positions.size(); ++j) {
    for (Hypothesis& h : hypotheses[j]) h.text = tokenizer.DecodeTarget(h.ids);
    results[positions[j]].hypotheses = std::move(hypotheses[j]);
  }
  return results;
}

absl::StatusOr<std::vector<std::vector<float>>> Translator::Score(
    const std::vector<std::vector<int>>& sources, const std::vector<std::vector<int>>& targets) {
  Impl& impl = *impl_;
  MT_RETURN_IF_ERROR(impl.CheckNoSession());
  const ModelConfig& config = impl.model_->config();
  if (sources.size() != targets.size()) {
    return absl::InvalidArgumentError("Score needs one target per source");
  }
  std::vector<std::vector<float>> scores(sources.size());
  if (sources.empty()) return scores;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].size() > static_cast<size_t>(config.max_position_embeddings)) {
      return absl::InvalidArgumentError(absl::StrCat("target ", i, " has ", targets[i].size(),
                                                     " tokens; the model accepts at most ",
                                                     config.max_position_embeddings));
    }
    for (int id : targets[i]) {
      if (id < 0 || id >= config.vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat("target ", i, " has token id ", id,
                                                       " outside the vocabulary [0, ",
                                                       config.vocab_size, ")"));
      }
    }
  }
  impl.ctx_.BindToCallingThread();
  impl.decoder_.Reset();
  MT_ASSIGN_OR_RETURN(const std::vector<int> sentences, impl.Encode(sources));
  const LogitsProcessor processor{config.never_generated_ids, config.eos_token_id, 0};

  // Row i feeds the start token, then the target tokens one by one; rows leave when their
  // target is consumed.
  std::vector<int> row_input;
  std::vector<int> row_sentence;
  std::vector<int> ids;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (targets[i].empty()) continue;
    row_input.push_back(static_cast<int>(i));
    row_sentence.push_back(sentences[i]);
    ids.push_back(config.decoder_start_token_id);
  }
  impl.decoder_.AddRows(static_cast<int>(ids.size()));
  FloatBuffer log_probs;
  std::vector<int> kept;
  for (int step = 0; !ids.empty(); ++step) {
    const int rows = static_cast<int>(ids.size());
    impl.decoder_.Step(impl.ctx_, ids, row_sentence, log_probs);
    processor.Apply(impl.ctx_, log_probs.data(), rows, OutputColumns{config.vocab_size},
                    std::vector<int>(rows, step));
    kept.clear();
    for (int r = 0; r < rows; ++r) {
      const std::vector<int>& target = targets[row_input[r]];
      const int token = target[step];
      scores[row_input[r]].push_back(
          log_probs.data()[static_cast<size_t>(r) * config.vocab_size + token]);
      if (step + 1 < static_cast<int>(target.size())) {
        kept.push_back(r);
        ids[r] = token;
      }
    }
    KeepRows(ids, kept);
    KeepRows(row_input, kept);
    KeepRows(row_sentence, kept);
    impl.decoder_.Reorder(kept);
  }
  impl.decoder_.Reset();
  return scores;
}

}  // namespace mtserve
