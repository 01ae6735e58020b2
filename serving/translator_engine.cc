#include "serving/translator_engine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "model/tokenizer.h"

namespace mtserve {
namespace {

class TranslatorDecode : public EngineDecode {
 public:
  TranslatorDecode(std::unique_ptr<DecodeSession> session, const Model& model)
      : session_(std::move(session)),
        tokenizer_(model.tokenizer()),
        eos_id_(model.config().eos_token_id) {}

  absl::StatusOr<std::vector<int>> AddInputs(
      const std::vector<std::vector<int>>& sources,
      const std::vector<std::shared_ptr<const TermConstraints>>& constraints) override {
    return session_->AddInputs(sources, constraints);
  }

  void Step(std::vector<FinishedSentence>& finished) override {
    const size_t first = finished.size();
    session_->Step(finished);
    for (size_t i = first; i < finished.size(); ++i) {
      for (Hypothesis& h : finished[i].hypotheses) h.text = tokenizer_.DecodeTarget(h.ids);
    }
  }

  int TargetTokens(const Hypothesis& hypothesis) const override {
    return ::mtserve::TargetTokens(hypothesis, eos_id_);
  }

 private:
  std::unique_ptr<DecodeSession> session_;
  const Tokenizer& tokenizer_;
  const int eos_id_;
};

}  // namespace

TranslatorEngine::TranslatorEngine(ModelLookup models, int threads)
    : models_(std::move(models)), threads_(threads) {}

absl::StatusOr<std::unique_ptr<EngineDecode>> TranslatorEngine::Start(
    int model, const DecodingOptions& options, std::function<bool(int)> stopped) {
  std::shared_ptr<const Model> loaded = models_(model);
  // Its texts' request holds it loaded (a lease): not seen unless that request already ended.
  if (loaded == nullptr) {
    return absl::UnavailableError(absl::StrCat("model ", model, " was unloaded"));
  }
  std::unique_ptr<Translator>& translator = translators_[model];
  // A model unloaded and loaded again is another Model.
  if (translator == nullptr || &translator->model() != loaded.get()) {
    translator = std::make_unique<Translator>(std::move(loaded), threads_);
  }
  absl::StatusOr<std::unique_ptr<DecodeSession>> session =
      translator->StartDecoding(options, std::move(stopped));
  if (!session.ok()) return session.status();
  return std::make_unique<TranslatorDecode>(std::move(*session), translator->model());
}

}  // namespace mtserve
