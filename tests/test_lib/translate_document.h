// A text of any format translated by a model as the server does it, for tests: PrepareDocument,
// each sentence decoded alone (with the decoder's alignment where the document needs it, and its
// terms as constraints, with a beam of 4), then JoinDocument.
#ifndef MTSERVE_TESTS_TEST_LIB_TRANSLATE_DOCUMENT_H_
#define MTSERVE_TESTS_TEST_LIB_TRANSLATE_DOCUMENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/decoding/term_constraints.h"
#include "model/translator.h"
#include "text/document.h"
#include "text/term_matcher.h"

namespace mtserve::testing {

// `text` of `format` taken apart by `rules` (whose tokenizer is `model`'s) and translated by
// `model`, best hypothesis only.
inline absl::StatusOr<TextTranslation> TranslateDocument(std::shared_ptr<const Model> model,
                                                         absl::string_view text,
                                                         DocumentFormat format,
                                                         const SentenceRules& rules) {
  absl::StatusOr<std::unique_ptr<Document>> document = PrepareDocument(text, format, rules);
  if (!document.ok()) return document.status();
  const Tokenizer& tokenizer = model->tokenizer();
  Translator translator(model, 1);
  std::vector<TranslationResult> results;
  for (size_t j = 0; j < (*document)->sentences().size(); ++j) {
    const SourceSentence& s = (*document)->sentences()[j];
    DecodingOptions options;
    options.return_alignment = (*document)->NeedsAlignment(j);
    // A sentence's terms (SentenceRules::terms) are its decode's constraints.
    // As the server does, a sentence with terms is decoded with ConstrainedOptions (a beam).
    std::vector<std::shared_ptr<const TermConstraints>> constraints;
    if (s.terms != nullptr) {
      constraints.push_back(ConstraintsOf(s.terms));
      options = ConstrainedOptions(options);
    }
    absl::StatusOr<std::vector<std::vector<Hypothesis>>> out =
        translator.TranslateIds({s.ids}, options, nullptr, constraints);
    if (!out.ok()) return out.status();
    TranslationResult& r = results.emplace_back();
    r.hypotheses = std::move((*out)[0]);
    for (Hypothesis& h : r.hypotheses) h.text = tokenizer.DecodeTarget(h.ids);
    r.source_tokens = static_cast<int>(s.ids.size());
  }
  return JoinDocument(**document, std::move(results), 1, tokenizer);
}

// The same for `text` translated into `target_language` (the tag the format writes in its
// language tags), its sentences split by `splitter` and cut at 256 tokens: the best hypothesis's
// text.
inline absl::StatusOr<std::string> TranslateDocument(std::shared_ptr<const Model> model,
                                                     const SentenceSplitter& splitter,
                                                     absl::string_view text, DocumentFormat format,
                                                     const std::string& target_language = "") {
  const SentenceRules rules{&splitter, &model->tokenizer(), 256, {}, target_language};
  absl::StatusOr<TextTranslation> translation =
      TranslateDocument(std::move(model), text, format, rules);
  if (!translation.ok()) return translation.status();
  return translation->hypotheses[0].text;
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_TRANSLATE_DOCUMENT_H_
