// Plain text as a Document (text/document_formats.h): its sentences as text/sentences.h finds
// them, and its translation joined from theirs in the text's layout, with the runs of characters
// the model cannot spell put back (text/unknown_runs.h).
#include <memory>
#include <utility>

#include "text/document_formats.h"
#include "text/sentences.h"
#include "text/unknown_runs.h"

namespace mtserve {
namespace {

class PlainTextDocument : public Document {
 public:
  PlainTextDocument(absl::string_view text, const SentenceRules& rules,
                    const std::function<bool()>& stopped)
      : text_(text) {
    AddSentences(SplitIntoSentences(text, rules.splitter, *rules.tokenizer, rules.max_tokens,
                                    rules.terms, {}, stopped));
    CountCharacters(text, sentences_);
  }

  TextTranslation Join(std::vector<TranslationResult> results, int num_hypotheses,
                       const Tokenizer& source_tokenizer,
                       const Tokenizer& tokenizer) const override {
    std::vector<std::vector<Segment>> dropped;
    RestoreUnknownRuns(text_, sentences_, results, num_hypotheses, source_tokenizer, tokenizer,
                       dropped);
    TextTranslation joined = JoinSentences(text_, sentences_, std::move(results), num_hypotheses);
    joined.dropped = std::move(dropped);
    return joined;
  }

 protected:
  bool ranges_in_text() const override { return true; }
  bool aligns_markup() const override { return false; }

 private:
  const absl::string_view text_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Document>> PreparePlainText(absl::string_view text,
                                                           const SentenceRules& rules,
                                                           const std::function<bool()>& stopped) {
  return std::make_unique<PlainTextDocument>(text, rules, stopped);
}

}  // namespace mtserve
