// The real DecodeEngine: decodes with one Translator per model, made on first use on the worker's
// thread (each owns that thread's compute context) and kept until the model is forgotten (or
// replaced by another load of it), and detokenises finished hypotheses.
#ifndef MTSERVE_SERVING_TRANSLATOR_ENGINE_H_
#define MTSERVE_SERVING_TRANSLATOR_ENGINE_H_

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "model/model.h"
#include "model/translator.h"
#include "serving/decode_engine.h"

namespace mtserve {

// Model `model`'s loaded Model, or null when it is not loaded (ModelRepository::Loaded).
using ModelLookup = std::function<std::shared_ptr<const Model>(int model)>;

class TranslatorEngine : public DecodeEngine {
 public:
  // `threads`: the compute (OpenMP) threads of each Translator.
  TranslatorEngine(ModelLookup models, int threads);

  absl::StatusOr<std::unique_ptr<EngineDecode>> Start(int model, const DecodingOptions& options,
                                                      std::function<bool(int)> stopped) override;
  void Forget(int model) override { translators_.erase(model); }

 private:
  const ModelLookup models_;
  const int threads_;
  std::map<int, std::unique_ptr<Translator>> translators_;  // By model, once used.
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_TRANSLATOR_ENGINE_H_
