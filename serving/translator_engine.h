// The real DecodeEngine: decodes with one Translator per model, made on first use on the worker's
// thread (each owns that thread's compute context), and detokenises finished hypotheses.
#ifndef MTSERVE_SERVING_TRANSLATOR_ENGINE_H_
#define MTSERVE_SERVING_TRANSLATOR_ENGINE_H_

#include <functional>
#include <memory>
#include <vector>

#include "model/model.h"
#include "model/translator.h"
#include "serving/decode_engine.h"

namespace mtserve {

class TranslatorEngine : public DecodeEngine {
 public:
  // `threads`: the compute (OpenMP) threads of each Translator.
  TranslatorEngine(std::vector<std::shared_ptr<const Model>> models, int threads);

  absl::StatusOr<std::unique_ptr<EngineDecode>> Start(int model, const DecodingOptions& options,
                                                      std::function<bool(int)> stopped) override;

 private:
  const std::vector<std::shared_ptr<const Model>> models_;
  const int threads_;
  std::vector<std::unique_ptr<Translator>> translators_;  // By model; null until used.
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_TRANSLATOR_ENGINE_H_
