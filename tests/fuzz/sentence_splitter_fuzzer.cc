// A text through sentence splitting (ICU, English rules, as for the embedded model) and the cutting
// of over-long sentences to a token limit, as the core splits every plain text: any bytes give
// sentences and pieces that cover the text's words in order, never crossing a line break.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/cut_to_token_limit.h"
#include "text/sentence_splitter.h"

namespace {

using mtserve::Segment;

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Segments of `text` in order, inside `within`, non-empty, without ASCII whitespace at either
// end, and nothing between them (or before the first, after the last) that is a word character.
void CheckCover(absl::string_view text, Segment within, const std::vector<Segment>& segments) {
  size_t at = within.begin;
  for (const Segment& s : segments) {
    FUZZ_CHECK(s.begin >= at && s.begin < s.end && s.end <= within.end);
    for (size_t i = at; i < s.begin; ++i) FUZZ_CHECK(!IsAsciiAlnum(text[i]));
    FUZZ_CHECK(!IsAsciiSpace(text[s.begin]) && !IsAsciiSpace(text[s.end - 1]));
    at = s.end;
  }
  for (size_t i = at; i < within.end; ++i) FUZZ_CHECK(!IsAsciiAlnum(text[i]));
}

// A stand-in tokenizer: a token per 3 bytes, plus </s>. Monotone in the prefix, as the cutter
// assumes real tokenizers are.
int CountTokens(absl::string_view piece) { return static_cast<int>(piece.size() / 3) + 1; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mtserve::SentenceSplitter* const splitter =
      mtserve::SentenceSplitter::Create("en").value().release();
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<Segment> sentences = splitter->Split(text);
  CheckCover(text, {0, text.size()}, sentences);
  constexpr int kMaxTokens = 8;
  for (const Segment& sentence : sentences) {
    for (size_t i = sentence.begin; i < sentence.end; ++i) FUZZ_CHECK(text[i] != '\n');
    const std::vector<Segment> pieces =
        mtserve::CutToTokenLimit(text, sentence, kMaxTokens, CountTokens);
    FUZZ_CHECK(!pieces.empty());
    FUZZ_CHECK(pieces.front().begin == sentence.begin && pieces.back().end == sentence.end);
    CheckCover(text, sentence, pieces);
    for (const Segment& piece : pieces) {
      FUZZ_CHECK(CountTokens(text.substr(piece.begin, piece.end - piece.begin)) <= kMaxTokens);
    }
  }
  return 0;
}
