// What the scheduler's workers decode through: a running decode that texts join and leave
// between steps. The real one is a Translator (translator_engine.h); tests use a fake, so the
// scheduler's threads and its batching policy are tested without the model.
#ifndef MTSERVE_SERVING_DECODE_ENGINE_H_
#define MTSERVE_SERVING_DECODE_ENGINE_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/hypothesis.h"
#include "model/decoding/term_constraints.h"

namespace mtserve {

// One running decode, as DecodeSession (model/translator.h) defines it.
class EngineDecode {
 public:
  virtual ~EngineDecode() = default;

  // Adds `sources` (each ending with </s>) from the next step on and returns their ids; an invalid
  // source fails the call and adds none. An id is reused once its input has finished.
  // `constraints`: empty, or one per source (null: none), the terms its hypotheses must write.
  virtual absl::StatusOr<std::vector<int>> AddInputs(
      const std::vector<std::vector<int>>& sources,
      const std::vector<std::shared_ptr<const TermConstraints>>& constraints) = 0;
  // One decoding step for every input. Appends the inputs that finished (hypotheses with their
  // text) or were stopped (no hypotheses) to `finished`.
  virtual void Step(std::vector<FinishedSentence>& finished) = 0;
  // The tokens of `hypothesis` as the metrics count them (without </s>).
  virtual int TargetTokens(const Hypothesis& hypothesis) const = 0;
};

// Decodes for one worker thread: not thread-safe, and one decode at a time.
class DecodeEngine {
 public:
  virtual ~DecodeEngine() = default;

  // Starts a decode of model `model` with `options`. `stopped` is called with an input's id once
  // per step while it decodes; when it returns true the input leaves at once without hypotheses.
  // The decode must end before the engine does.
  virtual absl::StatusOr<std::unique_ptr<EngineDecode>> Start(int model,
                                                              const DecodingOptions& options,
                                                              std::function<bool(int)> stopped) = 0;
  // Model `model` was unloaded: drop whatever is kept of it (between decodes).
  virtual void Forget(int model) {}
};

// Makes each worker's engine, on that worker's thread.
using DecodeEngineFactory = std::function<std::unique_ptr<DecodeEngine>()>;

}  // namespace mtserve

#endif  // MTSERVE_SERVING_DECODE_ENGINE_H_
