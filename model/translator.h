// The engine's entry point: texts in, translations out.
//
// A Translator is NOT thread-safe: it owns one thread's compute context (oneDNN stream, primitive
// cache, scratch buffers). Create one per worker thread; they can all share one Model, which is
// immutable. Each call decodes its inputs as one batch; every input's result is the same as
// decoding it alone.
#ifndef MTSERVE_MODEL_TRANSLATOR_H_
#define MTSERVE_MODEL_TRANSLATOR_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/decoding/term_constraints.h"
#include "model/model.h"

namespace mtserve {

struct TranslationResult {
  std::vector<Hypothesis> hypotheses;  // Best first; num_hypotheses of them.
  int source_tokens = 0;               // Including </s>.
};

class DecodeSession;

class Translator {
 public:
  // `num_threads`: the OpenMP threads this translator computes with.
  Translator(std::shared_ptr<const Model> model, int num_threads);
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  const Model& model() const;

  // Bytes it keeps of buffers that inputs gave up, for the next inputs: at most
  // kRetainedBatchBytes (decode_memory.h) once a call returns; not part of
  // DecodeSession::memory_bytes.
  size_t retained_bytes() const;

  // Called with an input's id once per decoding step while that input is being decoded; when it
  // returns true the input leaves the batch at once and its result has no hypotheses, while the
  // other inputs go on undisturbed.
  using CancelledFn = std::function<bool(int index)>;

  // Tokenises, translates and detokenises. An empty text gives one empty hypothesis without
  // computing. A text longer than the model's positions is an InvalidArgument naming it.
  absl::StatusOr<std::vector<TranslationResult>> Translate(const std::vector<std::string>& texts,
                                                           const DecodingOptions& options,
                                                           const CancelledFn& cancelled = nullptr);

  // The same from source ids (each ending with </s>); hypotheses carry ids but no text.
  // `constraints`: none, or one per source (null: none), as DecodeSession::AddInputs takes them.
  absl::StatusOr<std::vector<std::vector<Hypothesis>>> TranslateIds(
      const std::vector<std::vector<int>>& sources, const DecodingOptions& options,
      const CancelledFn& cancelled = nullptr,
      const std::vector<std::shared_ptr<const TermConstraints>>& constraints = {});

  // Teacher forcing: the log-probability of each target token given the source and the target
  // tokens before it (targets normally end with </s>).
  absl::StatusOr<std::vector<std::vector<float>>> Score(
      const std::vector<std::vector<int>>& sources, const std::vector<std::vector<int>>& targets);

  // Continuous decoding, for servers: starts a decode with `options` (validated) that inputs
  // join and leave between steps (see DecodeSession). `cancelled` is polled with the ids
  // DecodeSession::AddInputs returns. One session at a time: it computes with this translator,
  // which must outlive it, and no other call may run while it is open (FailedPrecondition).
  absl::StatusOr<std::unique_ptr<DecodeSession>> StartDecoding(const DecodingOptions& options,
                                                               CancelledFn cancelled = nullptr);

 private:
  friend class DecodeSession;
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A running decode. Inputs join between steps and leave as soon as they finish, so the decoder
// always works on as many inputs as are waiting; every input still gets the result TranslateIds
// gives it (the same tokens; log-probabilities equal within rounding). Destroying the session
// ends the decode: its inputs and its `cancelled` function are gone with it, so the function may
// safely refer to the caller's state that the session does not outlive.
class DecodeSession {
 public:
  ~DecodeSession();
  DecodeSession(const DecodeSession&) = delete;
  DecodeSession& operator=(const DecodeSession&) = delete;

  // Encodes `sources` (each ending with </s>) and adds them to the decode from the next step on.
  // Returns their ids, which FinishedSentence::sentence and `cancelled` use; an id is reused once
  // its input has finished. An invalid source fails the call and adds none.
  // `constraints`: none, or one per source (null: none); every hypothesis of a source with
  // constraints meets them all and says where (Hypothesis::terms; see Search::CreateBeam and
  // CreateGreedy for how). Constraints that are invalid, more than kMaxTermConstraints, or
  // need more tokens than the source's length bound allows before its </s>
  // (ValidateTermConstraints) fail the call with an InvalidArgument naming the limit, and the
  // input ("input I: ") when there are several.
  absl::StatusOr<std::vector<int>> AddInputs(
      const std::vector<std::vector<int>>& sources,
      const std::vector<std::shared_ptr<const TermConstraints>>& constraints = {});
  // One decoding step for every input. Appends the inputs that finished (hypotheses with ids but
  // no text) or were cancelled (no hypotheses) to `finished`.
  void Step(std::vector<FinishedSentence>& finished);
  // Inputs still decoding.
  int inputs() const;

  // Bytes the decode holds now (see decode_memory.h for what is counted, and its bound from the
  // model's shape and the options alone), and the most the encoder held while inputs last joined.
  size_t memory_bytes() const;
  size_t encoding_peak_bytes() const;

 private:
  friend class Translator;
  explicit DecodeSession(Translator::Impl* translator) : translator_(translator) {}
  Translator::Impl* const translator_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TRANSLATOR_H_
