#include "text/unknown_runs.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

bool IsSpace(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }

// Whether `text` (UTF-8) holds a letter or a digit.
bool HasLetterOrDigit(absl::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    if (c >= 0 && u_isalnum(c)) return true;
  }
  return false;
}

// `span` of `sentence` less the ASCII whitespace around it.
Segment Trimmed(absl::string_view sentence, Segment span) {
  while (span.begin < span.end && IsSpace(sentence[span.begin])) ++span.begin;
  while (span.end > span.begin && IsSpace(sentence[span.end - 1])) --span.end;
  return span;
}

}  // namespace

bool HasUnknown(absl::Span<const int> ids, const Tokenizer& tokenizer) {
  return std::find(ids.begin(), ids.end(), tokenizer.unk_id()) != ids.end();
}

UnknownRuns FindUnknownRuns(absl::string_view sentence, absl::Span<const int> ids,
                            absl::Span<const int> alignment, const Tokenizer& source_tokenizer,
                            const Tokenizer& tokenizer) {
  UnknownRuns runs;
  std::vector<Segment> spans;
  const std::vector<int> source = source_tokenizer.EncodeSourceWithSpans(sentence, spans);
  if (source.size() != spans.size() + 1) return runs;  // Never seen: pieces and ids in step.
  std::vector<size_t> unknown;  // Source pieces that are runs of unknown characters.
  bool translatable = false;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Segment span = Trimmed(sentence, spans[i]);
    const absl::string_view bytes = sentence.substr(span.begin, span.end - span.begin);
    if (source[i] != source_tokenizer.unk_id()) {
      translatable = translatable || HasLetterOrDigit(bytes);
    } else if (span.begin < span.end) {
      unknown.push_back(i);
    }
  }
  if (unknown.empty()) return runs;
  if (!translatable) {
    runs.verbatim = true;
    return runs;
  }
  std::vector<bool> used(spans.size(), false);
  if (alignment.size() == ids.size()) {
    const std::string decoded = tokenizer.DecodeTarget(ids);
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] != tokenizer.unk_id()) continue;
      const int s = alignment[k];
      if (s < 0 || static_cast<size_t>(s) >= spans.size()) continue;
      const Segment span = Trimmed(sentence, spans[s]);
      if (span.begin >= span.end) continue;
      // Where the token stands: after what the ids before it decode to (a prefix of the whole;
      // the common part if not).
      const std::string before = tokenizer.DecodeTarget(ids.subspan(0, k));
      size_t at = 0;
      while (at < before.size() && at < decoded.size() && before[at] == decoded[at]) ++at;
      UnknownRuns::Insertion& insertion = runs.insertions.emplace_back();
      insertion.at = at;
      insertion.token = k;
      // The spaces the source had around the run, where the translation has none.
      const bool space_before = span.begin > 0 && IsSpace(sentence[span.begin - 1]) && at > 0 &&
                                !IsSpace(decoded[at - 1]);
      const bool space_after = span.end < sentence.size() && IsSpace(sentence[span.end]) &&
                               at < decoded.size() && !IsSpace(decoded[at]);
      insertion.bytes =
          absl::StrCat(space_before ? " " : "", sentence.substr(span.begin, span.end - span.begin),
                       space_after ? " " : "");
      used[s] = true;
    }
  }
  std::stable_sort(runs.insertions.begin(), runs.insertions.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at; });
  for (size_t i : unknown) {
    if (!used[i]) runs.dropped.push_back(Trimmed(sentence, spans[i]));
  }
  return runs;
}

std::string WithUnknownRuns(absl::string_view decoded, absl::string_view sentence,
                            const UnknownRuns& runs) {
  if (runs.verbatim) return std::string(sentence);
  std::string out;
  size_t copied = 0;
  for (const UnknownRuns::Insertion& insertion : runs.insertions) {
    const size_t at = std::min(insertion.at, decoded.size());
    absl::StrAppend(&out, decoded.substr(copied, at - copied));
    out += insertion.bytes;
    copied = at;
  }
  absl::StrAppend(&out, decoded.substr(copied));
  return out;
}

size_t ShiftedByUnknownRuns(const UnknownRuns& runs, size_t position, bool after_insertion_at) {
  size_t shifted = position;
  for (const UnknownRuns::Insertion& insertion : runs.insertions) {
    if (insertion.at < position || (insertion.at == position && after_insertion_at)) {
      shifted += insertion.bytes.size();
    }
  }
  return shifted;
}

void RestoreUnknownRuns(absl::string_view text, absl::Span<const SourceSentence> sentences,
                        std::vector<TranslationResult>& results, int num_hypotheses,
                        const Tokenizer& source_tokenizer, const Tokenizer& tokenizer,
                        std::vector<std::vector<Segment>>& dropped) {
  dropped.resize(std::max<size_t>(dropped.size(), num_hypotheses));
  for (size_t j = 0; j < sentences.size() && j < results.size(); ++j) {
    if (!sentences[j].unknown) continue;
    const Segment range = sentences[j].range;
    const absl::string_view sentence = text.substr(range.begin, range.end - range.begin);
    std::vector<Hypothesis>& hypotheses = results[j].hypotheses;
    for (size_t k = 0; k < hypotheses.size(); ++k) {
      Hypothesis& h = hypotheses[k];
      const UnknownRuns runs =
          FindUnknownRuns(sentence, h.ids, h.alignment, source_tokenizer, tokenizer);
      h.text = WithUnknownRuns(h.text, sentence, runs);
      if (k >= dropped.size()) continue;
      for (const Segment& run : runs.dropped) {
        dropped[k].push_back({range.begin + run.begin, range.begin + run.end});
      }
    }
  }
}

}  // namespace mtserve
