// Splits a text into sentences for translation: the model translates one sentence at a time, and
// a paragraph fed whole degrades its output (and may pass its token limit).
#ifndef MTSERVE_TEXT_SENTENCE_SPLITTER_H_
#define MTSERVE_TEXT_SENTENCE_SPLITTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/segment.h"

namespace mtserve {

class SentenceSplitter {
 public:
  // ICU sentence rules for `language` (a BCP-47/ICU code such as "en", "de", "fr"; "" or an
  // unknown language: ICU's root rules), with the locale's abbreviation suppressions (CLDR's,
  // which "@ss=standard" loads) extended by our own short per-language list of non-breaking
  // prefixes (modelled on Moses' nonbreaking_prefix lists), so that "Dr. Smith" is not cut. An
  // abbreviation suppresses a break only as a whole word ("Dr." but not "HerDr.").
  // InvalidArgument for a malformed language code, Internal when ICU's data cannot be loaded.
  static absl::StatusOr<std::unique_ptr<SentenceSplitter>> Create(absl::string_view language);
  ~SentenceSplitter();

  SentenceSplitter(const SentenceSplitter&) = delete;
  SentenceSplitter& operator=(const SentenceSplitter&) = delete;

  // The sentences of UTF-8 `text`, in order: byte ranges that neither start nor end with
  // whitespace (Unicode White_Space) and are never empty. Everything outside them is whitespace
  // only (so the layout can be kept). Line breaks (\n, \r\n, \r, U+2028, U+2029) are hard
  // boundaries: no sentence spans one. A text of only whitespace has no sentences.
  // Thread-safe: each call works on its own clone of the ICU iterator (see the .cc).
  // Invalid UTF-8 never crashes: each ill-formed sequence reads as U+FFFD and stays inside the
  // sentence around it.
  std::vector<Segment> Split(absl::string_view text) const;

 private:
  struct Impl;
  explicit SentenceSplitter(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_SENTENCE_SPLITTER_H_
