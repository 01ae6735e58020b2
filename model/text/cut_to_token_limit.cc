#include "model/text/cut_to_token_limit.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace mtserve {
namespace {

// Bytes of a sentence looked at for one piece: no piece within the limit is longer than this
// many bytes a token, and tokenising all of a sentence of megabytes for every probe would cost
// megabytes a probe.
constexpr size_t kWindowBytesPerToken = 64;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
bool IsSpace(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }
bool IsSentencePunctuation(char c) {
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == ')';
}

}  // namespace

std::vector<Segment> CutToTokenLimit(absl::string_view text, Segment sentence, int max_tokens,
                                     const std::function<int(absl::string_view)>& count_tokens) {
  auto fits = [&](size_t begin, size_t end) {
    return count_tokens(text.substr(begin, end - begin)) <= max_tokens;
  };
  std::vector<Segment> pieces;
  size_t start = sentence.begin;
  while (start < sentence.end) {
    const size_t window = std::min(sentence.end, start + kWindowBytesPerToken * max_tokens);
    if (window == sentence.end && fits(start, sentence.end)) {
      pieces.push_back({start, sentence.end});
      break;
    }
    // The longest prefix that fits, found by bisection over character boundaries (a longer
    // prefix never has fewer tokens, up to the tokenizer merging across the cut).
    size_t low = start, high = window;  // Prefix [start, low) fits; [start, high) may not.
    while (high - low > 1) {
      size_t middle = low + (high - low) / 2;
      while (middle > low && IsContinuationByte(text[middle])) --middle;
      if (middle == low) break;
      if (fits(start, middle)) {
        low = middle;
      } else {
        high = middle;
      }
    }
    if (low == start) {  // Not even one character more fits: take one anyway, never loop.
      low = start + 1;
      while (low < sentence.end && IsContinuationByte(text[low])) ++low;
    }
    // Where to cut in [start, low]: after punctuation and before a space in the second half,
    // else before the last space, else at `low`.
    size_t cut = low;
    size_t last_space = 0;
    for (size_t i = low; i > start; --i) {
      if (i < sentence.end && IsSpace(text[i]) && !IsSpace(text[i - 1])) {
        if (IsSentencePunctuation(text[i - 1]) && i - start >= (low - start) / 2) {
          cut = i;
          last_space = 0;
          break;
        }
        if (last_space == 0) last_space = i;
      }
    }
    if (last_space != 0 && cut == low) cut = last_space;
    // Token counts are not quite monotonic in the prefix: keep the guarantee.
    if (cut != low && !fits(start, cut)) cut = low;
    size_t end = cut;
    while (end > start && IsSpace(text[end - 1])) --end;
    pieces.push_back({start, end});
    start = cut;
    while (start < sentence.end && IsSpace(text[start])) ++start;
  }
  return pieces;
}

}  // namespace mtserve
