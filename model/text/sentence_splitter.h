// Splits text into sentences with ICU's sentence rules for a language, the rules users of
// LibreTranslate and Bergamot get too, with ICU's abbreviation suppressions for the language
// extended by our own lists (ICU 72's are short: it splits "Dr. | Smith arrived.").
#ifndef MTSERVE_MODEL_TEXT_SENTENCE_SPLITTER_H_
#define MTSERVE_MODEL_TEXT_SENTENCE_SPLITTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/text/segment.h"

namespace mtserve {

class SentenceSplitter {
 public:
  // The rules for `language` (an ICU / BCP-47 code: "en", "de", "pt-BR"); "" or a language ICU
  // has no rules for gets ICU's root rules. Errors only if ICU's data cannot be loaded.
  static absl::StatusOr<std::unique_ptr<SentenceSplitter>> Create(absl::string_view language);
  ~SentenceSplitter();

  // The sentences of UTF-8 `text`, in order: byte ranges that neither start nor end with
  // whitespace and are never empty; every byte outside them is whitespace. A line break ends a
  // sentence, whatever precedes it. A line that is not valid UTF-8 is one sentence.
  // Thread-safe: each call works on its own copy of the ICU iterator (they are not thread-safe,
  // and a copy costs far less than a sentence's translation).
  std::vector<Segment> Split(absl::string_view text) const;

 private:
  struct Impl;
  explicit SentenceSplitter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TEXT_SENTENCE_SPLITTER_H_
