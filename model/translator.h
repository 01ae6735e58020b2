// The engine's entry point: texts in, translations out.
//
// A Translator is NOT thread-safe: it owns one thread's compute context (oneDNN stream, primitive
// cache, scratch buffers). Create one per worker thread; they can all share one Model, which is
// immutable. Each call decodes its inputs as one batch; every input's result is the same as
// decoding it alone.
#ifndef MTSERVE_MODEL_TRANSLATOR_H_
#define MTSERVE_MODEL_TRANSLATOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/decoding/search.h"
#include "model/layers/decoder.h"
#include "model/layers/encoder.h"
#include "model/model.h"
#include "model/ops/compute_context.h"

namespace mtserve {

struct TranslationResult {
  std::vector<Hypothesis> hypotheses;  // Best first; num_hypotheses of them.
  int source_tokens = 0;               // Including </s>.
};

class Translator {
 public:
  // `num_threads`: the OpenMP threads this translator computes with.
  Translator(std::shared_ptr<const Model> model, int num_threads);

  const Model& model() const { return *model_; }

  // Called with an input's index once per decoding step while that input is being decoded; when
  // it returns true the input leaves the batch at once and its result has no hypotheses, while
  // the other inputs go on undisturbed.
  using CancelledFn = std::function<bool(int index)>;

  // Tokenises, translates and detokenises. An empty text gives one empty hypothesis without
  // computing. A text longer than the model's positions is an InvalidArgument naming it.
  absl::StatusOr<std::vector<TranslationResult>> Translate(const std::vector<std::string>& texts,
                                                           const DecodingOptions& options,
                                                           const CancelledFn& cancelled = nullptr);

  // The same from source ids (each ending with </s>); hypotheses carry ids but no text.
  absl::StatusOr<std::vector<std::vector<Hypothesis>>> TranslateIds(
      const std::vector<std::vector<int>>& sources, const DecodingOptions& options,
      const CancelledFn& cancelled = nullptr);

  // Teacher forcing: the log-probability of each target token given the source and the target
  // tokens before it (targets normally end with </s>).
  absl::StatusOr<std::vector<std::vector<float>>> Score(
      const std::vector<std::vector<int>>& sources, const std::vector<std::vector<int>>& targets);

  // Continuous decoding, for servers: inputs join a running decode between steps and leave as
  // soon as they finish, so the decoder always works on as many inputs as are waiting. Every
  // input still gets exactly the result TranslateIds gives it.
  //
  // Starts a decode with `options` (validated), dropping any decode in progress. `cancelled` is
  // polled as in TranslateIds, with the ids AddInputs returns.
  absl::Status StartDecoding(const DecodingOptions& options, CancelledFn cancelled = nullptr);
  // Encodes `sources` (each ending with </s>) and adds them to the decode from the next step on.
  // Returns their ids, which FinishedSentence::sentence and `cancelled` use; an id is reused once
  // its input has finished.
  absl::StatusOr<std::vector<int>> AddInputs(const std::vector<std::vector<int>>& sources);
  // One decoding step for every input. Appends the inputs that finished (hypotheses with ids but
  // no text) or were cancelled (no hypotheses) to `finished`.
  void DecodeStep(std::vector<FinishedSentence>& finished);
  // Inputs still decoding.
  int decoding_inputs() const { return search_ == nullptr ? 0 : search_->sentences(); }
  // Bytes the decode holds now (see decode_memory.h for what is counted), and the most the
  // encoder held while the last inputs joined.
  size_t decoding_bytes() const;
  size_t encoding_peak_bytes() const { return encoder_.peak_bytes(); }
  // Ends the decode, dropping its inputs and its `cancelled` function (which may refer to the
  // caller's frame: call this before that ends).
  void EndDecoding();

 private:
  // Validates, pads and encodes `sources`, then adds them to the decoder; returns their ids.
  absl::StatusOr<std::vector<int>> Encode(const std::vector<std::vector<int>>& sources);

  std::shared_ptr<const Model> model_;
  ComputeContext ctx_;
  Encoder encoder_;
  Decoder decoder_;
  FloatBuffer encoder_output_;
  std::unique_ptr<Search> search_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TRANSLATOR_H_
