#include "text/cut_to_token_limit.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>

namespace mtserve {
namespace {

struct CodePoint {
  UChar32 c;
  size_t length;
};

// The code point at byte `pos` of `text`; an ill-formed sequence (its maximal subpart) reads as
// U+FFFD, so cuts never split a valid character and always progress.
CodePoint DecodeAt(absl::string_view text, size_t pos) {
  const int32_t window = static_cast<int32_t>(std::min<size_t>(text.size() - pos, 4));
  int32_t length = 0;
  UChar32 c;
  U8_NEXT_OR_FFFD(reinterpret_cast<const uint8_t*>(text.data() + pos), length, window, c);
  return {c, static_cast<size_t>(length)};
}

bool IsSpace(UChar32 c) { return u_isUWhiteSpace(c); }

// Cut points (byte offsets where a piece may end) in increasing order, produced on demand, so
// that a search near the start of a long list never computes its far end.
class Cuts {
 public:
  virtual ~Cuts() = default;
  // Whether there is an i-th cut point (computing it if needed).
  virtual bool Has(size_t i) = 0;
  // The i-th cut point; Has(i) was true.
  virtual size_t At(size_t i) const = 0;
};

// The cut points of a precomputed list from `first` on.
class ListCuts : public Cuts {
 public:
  ListCuts(const std::vector<size_t>& cuts, size_t first) : cuts_(cuts), first_(first) {}
  bool Has(size_t i) override { return first_ + i < cuts_.size(); }
  size_t At(size_t i) const override { return cuts_[first_ + i]; }

 private:
  const std::vector<size_t>& cuts_;
  size_t first_;
};

// Every character boundary strictly between `begin` and `end`.
class CharCuts : public Cuts {
 public:
  CharCuts(absl::string_view text, size_t begin, size_t end)
      : text_(text), next_(begin), end_(end) {}
  bool Has(size_t i) override {
    while (cuts_.size() <= i && next_ < end_) {
      next_ += DecodeAt(text_, next_).length;
      if (next_ < end_) cuts_.push_back(next_);
    }
    return i < cuts_.size();
  }
  size_t At(size_t i) const override { return cuts_[i]; }

 private:
  absl::string_view text_;
  size_t next_;
  size_t end_;
  std::vector<size_t> cuts_;
};

// The index of the last cut for which `fits` holds, assuming it holds for a prefix of the cuts
// only; nullopt when it holds for none. Galloping search from `hint` (the previous piece's answer:
// pieces of one long run are alike, so it is usually right or close), up or down by doubling
// steps, then binary search between the last fitting and the first failing probe: O(log d) calls
// for an answer d cuts from the hint (two when the hint is right), and no probe far beyond the
// answer (so the strings tokenised stay about as long as the piece).
template <typename Fits>
std::optional<size_t> LastFitting(Cuts& cuts, const Fits& fits, size_t hint) {
  if (!cuts.Has(0)) return std::nullopt;
  while (hint > 0 && !cuts.Has(hint)) hint /= 2;
  size_t good;
  std::optional<size_t> bad;  // The first index known not to fit, or (nullopt) to be past the end.
  if (fits(cuts.At(hint))) {
    good = hint;
    for (size_t step = 1;; step *= 2) {
      const size_t probe = good + step;
      if (!cuts.Has(probe)) break;
      if (!fits(cuts.At(probe))) {
        bad = probe;
        break;
      }
      good = probe;
    }
    if (!bad.has_value()) {
      // Past the end: the search continues up to the last cut.
      size_t last = good;
      while (cuts.Has(last + 1)) ++last;
      bad = last + 1;
    }
  } else {
    bad = hint;
    for (size_t step = 1;; step *= 2) {
      if (*bad == 0) return std::nullopt;
      const size_t probe = step < *bad ? *bad - step : 0;
      if (fits(cuts.At(probe))) {
        good = probe;
        break;
      }
      bad = probe;
    }
  }
  while (*bad - good > 1) {
    const size_t mid = good + (*bad - good) / 2;
    if (fits(cuts.At(mid))) {
      good = mid;
    } else {
      bad = mid;
    }
  }
  return good;
}

}  // namespace

std::vector<Segment> CutToTokenLimit(absl::string_view text, Segment sentence, int max_tokens,
                                     const std::function<int(absl::string_view)>& count_tokens,
                                     const std::function<bool()>& stopped,
                                     absl::Span<const Segment> whole) {
  // A range outside the text is clamped rather than read out of bounds.
  const size_t sentence_end = std::min(sentence.end, text.size());
  const size_t sentence_begin = std::min(sentence.begin, sentence_end);
  auto tokens = [&](size_t begin, size_t end) {
    return count_tokens(text.substr(begin, end - begin));
  };
  if (MayFitTokens(sentence_end - sentence_begin, max_tokens) &&
      tokens(sentence_begin, sentence_end) <= max_tokens) {
    return {Segment{sentence_begin, sentence_end}};
  }

  // One pass over the sentence: where it starts and ends without whitespace, and where a piece
  // may end at whitespace (the end of each word) or after punctuation followed by whitespace
  // (a clause: the best place to cut, since it loses the least context for the translation).
  size_t begin = sentence_end;
  size_t end = sentence_begin;
  std::vector<size_t> space_cuts;
  std::vector<size_t> punct_cuts;
  bool after_word = false;
  bool after_punct = false;
  for (size_t pos = sentence_begin; pos < sentence_end;) {
    const CodePoint cp = DecodeAt(text, pos);
    if (IsSpace(cp.c)) {
      if (after_word) {
        space_cuts.push_back(pos);
        if (after_punct) punct_cuts.push_back(pos);
      }
      after_word = false;
    } else {
      begin = std::min(begin, pos);
      end = pos + cp.length;
      after_word = true;
      after_punct = u_ispunct(cp.c);
    }
    pos += cp.length;
  }
  // Trailing whitespace is no cut: the last piece ends at `end`.
  while (!space_cuts.empty() && space_cuts.back() >= end) space_cuts.pop_back();
  while (!punct_cuts.empty() && punct_cuts.back() >= end) punct_cuts.pop_back();
  // Nor is a place inside a span kept whole.
  if (!whole.empty()) {
    auto inside = [&](size_t cut) {
      auto it = std::partition_point(whole.begin(), whole.end(),
                                     [&](const Segment& w) { return w.end <= cut; });
      return it != whole.end() && it->begin < cut;
    };
    space_cuts.erase(std::remove_if(space_cuts.begin(), space_cuts.end(), inside),
                     space_cuts.end());
    punct_cuts.erase(std::remove_if(punct_cuts.begin(), punct_cuts.end(), inside),
                     punct_cuts.end());
  }

  std::vector<Segment> pieces;
  // The previous piece's answers, where the next search starts: at spaces (its count of space
  // cuts) and within a word (its count of characters).
  size_t space_hint = 0;
  size_t char_hint = 0;
  size_t pos = begin;
  while (pos < end) {
    if (stopped && stopped()) break;
    // A remainder over kMaxBytesPerToken bytes a token is not tokenised whole to see if it fits
    // (that cost the whole remainder per piece: 31 s for a megabyte without a full stop).
    if (MayFitTokens(end - pos, max_tokens) && tokens(pos, end) <= max_tokens) {
      pieces.push_back({pos, end});
      break;
    }
    // No piece is longer than MayFitTokens allows, even where the tokenizer would count fewer
    // tokens: SentencePiece folds a run of characters it cannot spell (CJK in a European model)
    // into one unknown token, at a cost that grows with the square of the run (4 minutes for a
    // megabyte), so such a run is cut into pieces of at most that many bytes, each its own
    // unknown token, put back whole (unknown_runs.h).
    auto fits = [&](size_t cut) {
      return MayFitTokens(cut - pos, max_tokens) && tokens(pos, cut) <= max_tokens;
    };
    size_t cut;
    const size_t first_space =
        std::upper_bound(space_cuts.begin(), space_cuts.end(), pos) - space_cuts.begin();
    ListCuts at_space(space_cuts, first_space);
    if (std::optional<size_t> i = LastFitting(at_space, fits, space_hint)) {
      space_hint = *i;
      cut = at_space.At(*i);
      // Every punctuation cut is also a space cut, so those up to `cut` fit too and the last of
      // them needs no further tokenisation; one in this piece is preferred over a later space.
      auto punct = std::upper_bound(punct_cuts.begin(), punct_cuts.end(), cut);
      if (punct != punct_cuts.begin() && *std::prev(punct) > pos) cut = *std::prev(punct);
    } else {
      // Even the first word is over the limit: cut it at a character boundary.
      const size_t word_end = first_space < space_cuts.size() ? space_cuts[first_space] : end;
      CharCuts in_word(text, pos, word_end);
      if (std::optional<size_t> j = LastFitting(in_word, fits, char_hint)) {
        char_hint = *j;
        cut = in_word.At(*j);
      } else {
        cut = pos + DecodeAt(text, pos).length;  // A single character over the limit: progress.
      }
    }
    pieces.push_back({pos, cut});
    pos = cut;
    while (pos < end) {
      const CodePoint cp = DecodeAt(text, pos);
      if (!IsSpace(cp.c)) break;
      pos += cp.length;
    }
  }
  return pieces;
}

}  // namespace mtserve
