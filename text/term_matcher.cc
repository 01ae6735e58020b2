#include "text/term_matcher.h"

#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "text/case_fold.h"
#include "text/keep_patterns.h"

namespace mtserve {

// Keys (bytes) to the term they stand for: walked from each position of a text.
struct TermMatcher::Trie {
  struct Node {
    absl::flat_hash_map<char, int> next;
    int term = -1;
  };
  std::vector<Node> nodes{1};

  void Insert(absl::string_view key, int term) {
    int node = 0;
    for (const char c : key) {
      auto it = nodes[node].next.find(c);
      if (it == nodes[node].next.end()) {
        nodes.emplace_back();
        it = nodes[node].next.emplace(c, static_cast<int>(nodes.size()) - 1).first;
      }
      node = it->second;
    }
    if (nodes[node].term < 0) nodes[node].term = term;
  }

  // Calls found(end, term) for each key that `text` holds from `begin`, shortest first.
  template <typename Found>
  void Walk(absl::string_view text, size_t begin, const Found& found) const {
    int node = 0;
    for (size_t i = begin; i < text.size(); ++i) {
      auto it = nodes[node].next.find(text[i]);
      if (it == nodes[node].next.end()) return;
      node = it->second;
      if (nodes[node].term >= 0) found(i + 1, nodes[node].term);
    }
  }
};

struct TermMatcher::Occurrence {
  Segment range;
  int term = -1;  // Into terms_; -1: a span kept as written (a pattern's, a format's).
  int rank = 0;   // At one length, the lower wins: a format's, glossary, kept term, pattern.
};

namespace {

// The code point at byte `i` of `s` (-1 if ill-formed) and its length.
UChar32 CodePointAt(absl::string_view s, size_t i, size_t* length = nullptr) {
  int32_t j = static_cast<int32_t>(i);
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), j, static_cast<int32_t>(s.size()), c);
  if (length != nullptr) *length = static_cast<size_t>(j) - i;
  return c;
}

// The code point that ends at byte `i` of `s`, not before `start` (-1 if none).
UChar32 CodePointBefore(absl::string_view s, size_t start, size_t i) {
  if (i <= start) return -1;
  int32_t j = static_cast<int32_t>(i);
  UChar32 c;
  U8_PREV(reinterpret_cast<const uint8_t*>(s.data()), static_cast<int32_t>(start), j, c);
  return c;
}

bool IsMark(UChar32 c) { return c >= 0 && (U_GET_GC_MASK(c) & U_GC_M_MASK) != 0; }

// Whether `c` is a letter or digit of a script written with spaces between words (a term must
// not begin or end next to one).
bool IsWordChar(UChar32 c) {
  if (c < 0 || !u_isalnum(c)) return false;
  UErrorCode status = U_ZERO_ERROR;
  switch (uscript_getScript(c, &status)) {
    case USCRIPT_HAN:
    case USCRIPT_HIRAGANA:
    case USCRIPT_KATAKANA:
    case USCRIPT_THAI:
    case USCRIPT_LAO:
    case USCRIPT_KHMER:
    case USCRIPT_MYANMAR:
    case USCRIPT_TIBETAN:
      return false;
    default:
      return true;
  }
}

// Whether [begin, end) of `text` (within `range`) is a whole word, as Match says.
bool WholeWord(absl::string_view text, Segment range, size_t begin, size_t end) {
  if (begin >= end) return false;
  const UChar32 first = CodePointAt(text, begin);
  if (IsWordChar(first) && IsWordChar(CodePointBefore(text, range.begin, begin))) return false;
  const UChar32 last = CodePointBefore(text, begin, end);
  const UChar32 next = end < range.end ? CodePointAt(text, end) : -1;
  if (IsMark(next)) return false;
  return !(IsWordChar(last) && IsWordChar(next));
}

// `form` with its first letter in title case, or "" if that changes nothing (or it does not
// begin with a lower-case letter).
std::string InitialForm(absl::string_view form) {
  size_t length = 0;
  const UChar32 c = CodePointAt(form, 0, &length);
  if (c < 0 || !u_islower(c)) return "";
  const UChar32 title = u_totitle(c);
  if (title == c) return "";
  char bytes[4];
  int32_t n = 0;
  U8_APPEND_UNSAFE(bytes, n, title);
  return absl::StrCat(absl::string_view(bytes, n), form.substr(length));
}

bool IsSpace(char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); }

}  // namespace

const TermForm* SentenceTerms::Placed(const PlacedTerm& placed) const {
  if (placed.term < 0 || static_cast<size_t>(placed.term) >= terms.size()) return nullptr;
  const std::vector<TermForm>& forms =
      placed.initial ? terms[placed.term].initial_forms : terms[placed.term].forms;
  if (placed.form < 0 || static_cast<size_t>(placed.form) >= forms.size()) return nullptr;
  return &forms[placed.form];
}

bool SpellTargetForm(absl::string_view form, const Tokenizer& tokenizer, std::vector<int>& ids,
                     TermForm& spelled) {
  std::vector<Segment> spans;
  ids = tokenizer.EncodeTargetWithSpans(form, spans);
  if (!ids.empty()) ids.pop_back();  // </s>
  spelled.text = std::string(form);
  spelled.unknown.clear();
  if (ids.size() != spans.size()) return false;  // Never seen: pieces and ids in step.
  // The decoded ids with the unknown ids' bytes put back where each stands.
  const std::string decoded = tokenizer.DecodeTarget(ids);
  std::string read;
  size_t copied = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] != tokenizer.unk_id()) continue;
    Segment span = spans[k];
    while (span.begin < span.end && IsSpace(form[span.begin])) ++span.begin;
    while (span.end > span.begin && IsSpace(form[span.end - 1])) --span.end;
    spelled.unknown.push_back(span);
    const std::string before = tokenizer.DecodeTarget(absl::MakeConstSpan(ids).subspan(0, k));
    size_t at = 0;
    while (at < before.size() && at < decoded.size() && before[at] == decoded[at]) ++at;
    at = std::max(at, copied);
    absl::StrAppend(&read, absl::string_view(decoded).substr(copied, at - copied));
    // The spaces the form had around them, where the decoded text has none (as
    // text/unknown_runs.h puts a source run back).
    if (span.begin > 0 && IsSpace(form[span.begin - 1]) && !read.empty() && !IsSpace(read.back())) {
      read += ' ';
    }
    absl::StrAppend(&read, form.substr(span.begin, span.end - span.begin));
    if (span.end < form.size() && IsSpace(form[span.end]) && at < decoded.size() &&
        !IsSpace(decoded[at])) {
      read += ' ';
    }
    copied = at;
  }
  absl::StrAppend(&read, absl::string_view(decoded).substr(copied));
  if (ids.empty()) ids.push_back(tokenizer.unk_id());  // A constraint is never empty.
  return read == form;
}

TermMatcher::TermMatcher() = default;
TermMatcher::~TermMatcher() = default;

absl::StatusOr<std::shared_ptr<const TermMatcher>> CompileTerminology(
    const Terminology& terminology, const Tokenizer& target_tokenizer, absl::string_view field) {
  std::shared_ptr<TermMatcher> matcher(new TermMatcher());
  matcher->tokenizer_ = &target_tokenizer;
  matcher->patterns_ = terminology.keep_patterns;
  auto as_written = std::make_shared<TermMatcher::Trie>();
  auto folded = std::make_shared<TermMatcher::Trie>();
  // Each source's term (by its key: folded if case is ignored).
  absl::flat_hash_map<std::string, int> by_source;
  auto add_form = [&](TermMatcher::CompiledTerm& term, absl::string_view form, bool initial,
                      absl::string_view name) -> absl::Status {
    std::vector<TermForm>& forms = initial ? term.initial_forms : term.forms;
    for (const TermForm& f : forms) {
      if (f.text == form) return absl::OkStatus();
    }
    std::vector<int> ids;
    TermForm spelled;
    if (!SpellTargetForm(form, target_tokenizer, ids, spelled)) {
      if (initial) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          name, " '", Excerpt(form), "' does not read back the same after the target model's ",
          "tokenizer spells it (it reads '", Excerpt(target_tokenizer.DecodeTarget(ids)),
          "'): write it as the model writes it"));
    }
    (initial ? term.constraint.initial_forms : term.constraint.forms).push_back(std::move(ids));
    forms.push_back(std::move(spelled));
    return absl::OkStatus();
  };
  for (size_t i = 0; i < terminology.glossary.size(); ++i) {
    const GlossaryEntry& entry = terminology.glossary[i];
    const std::string key = SourceKey(entry.source, terminology.ignore_case);
    auto [it, inserted] = by_source.emplace(key, static_cast<int>(matcher->terms_.size()));
    if (inserted) {
      matcher->terms_.emplace_back();
      (terminology.ignore_case ? *folded : *as_written).Insert(key, it->second);
    }
    TermMatcher::CompiledTerm& term = matcher->terms_[it->second];
    for (size_t j = 0; j < entry.targets.size(); ++j) {
      const std::string name = absl::StrCat(field, "glossary[", i, "].targets[", j, "]");
      if (absl::Status s = add_form(term, entry.targets[j], false, name); !s.ok()) return s;
    }
    for (size_t j = 0; j < entry.targets.size(); ++j) {
      const std::string initial = InitialForm(entry.targets[j]);
      if (initial.empty()) continue;
      if (absl::Status s = add_form(term, initial, true, ""); !s.ok()) return s;
    }
  }
  for (size_t i = 0; i < terminology.keep.size(); ++i) {
    const std::string& kept = terminology.keep[i];
    auto [it, inserted] = by_source.emplace(kept, static_cast<int>(matcher->terms_.size()));
    if (!inserted) continue;  // Listed twice (a glossary source too is refused by validation).
    matcher->terms_.emplace_back();
    matcher->terms_.back().kept = true;
    as_written->Insert(kept, it->second);
    const std::string name = absl::StrCat(field, "keep[", i, "]");
    if (absl::Status s = add_form(matcher->terms_.back(), kept, false, name); !s.ok()) return s;
  }
  matcher->as_written_ = std::move(as_written);
  matcher->folded_ = std::move(folded);
  return std::shared_ptr<const TermMatcher>(std::move(matcher));
}

std::vector<TermMatcher::Occurrence> TermMatcher::Occurrences(
    absl::string_view text, Segment range, absl::Span<const Segment> kept) const {
  range.end = std::min(range.end, text.size());
  range.begin = std::min(range.begin, range.end);
  std::vector<Occurrence> chosen;
  // A format's kept spans are always taken; the rest fills what they leave.
  for (const Segment& k : kept) {
    if (k.begin >= range.begin && k.end <= range.end && k.begin < k.end) {
      chosen.push_back({k, -1, 0});
    }
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Occurrence& a, const Occurrence& b) { return a.range.begin < b.range.begin; });
  const std::vector<PatternSpan> patterns = FindKeepPatterns(text, range, patterns_);
  const bool any_folded = folded_->nodes.size() > 1;
  const bool any_written = as_written_->nodes.size() > 1;
  if (!any_folded && !any_written && patterns.empty()) return chosen;
  const absl::string_view sentence = text.substr(range.begin, range.end - range.begin);
  FoldedText folding;
  std::vector<size_t> folded_at;  // For each byte of the sentence: where its folding begins.
  if (any_folded) {
    folding = FoldCase(sentence);
    folded_at.assign(sentence.size() + 1, folding.text.size());
    for (size_t f = folding.origin.size(); f-- > 0;) {
      if (folding.starts[f]) folded_at[folding.origin[f]] = f;
    }
  }
  std::vector<Occurrence> taken;
  size_t next_kept = 0;
  size_t pattern = 0;
  size_t free_from = range.begin;  // Before this, positions are inside a taken occurrence.
  for (size_t p = range.begin; p < range.end;) {
    size_t length = 1;
    CodePointAt(text, p, &length);
    length = std::max<size_t>(length, 1);
    while (next_kept < chosen.size() && chosen[next_kept].range.end <= p) ++next_kept;
    const bool in_kept = next_kept < chosen.size() && chosen[next_kept].range.begin <= p;
    if (p < free_from || in_kept) {
      p += length;
      continue;
    }
    Occurrence best;
    auto consider = [&](Segment r, int term, int rank) {
      if (r.end <= r.begin) return;
      // It must not reach into a format's kept span.
      if (next_kept < chosen.size() && r.end > chosen[next_kept].range.begin) return;
      const size_t best_length = best.range.end - best.range.begin;
      const size_t this_length = r.end - r.begin;
      if (best.rank == 0 || this_length > best_length ||
          (this_length == best_length && rank < best.rank)) {
        best = {r, term, rank};
      }
    };
    if (any_written) {
      as_written_->Walk(sentence, p - range.begin, [&](size_t end, int term) {
        const size_t e = range.begin + end;
        if (WholeWord(text, range, p, e)) consider({p, e}, term, terms_[term].kept ? 2 : 1);
      });
    }
    if (any_folded) {
      folded_->Walk(folding.text, folded_at[p - range.begin], [&](size_t end, int term) {
        if (!folding.starts[end]) return;
        const size_t e = range.begin + folding.origin[end];
        if (WholeWord(text, range, p, e)) consider({p, e}, term, 1);
      });
    }
    while (pattern < patterns.size() && patterns[pattern].range.begin < p) ++pattern;
    for (size_t q = pattern; q < patterns.size() && patterns[q].range.begin == p; ++q) {
      consider(patterns[q].range, -1, 3);
    }
    if (best.rank != 0) {
      taken.push_back(best);
      free_from = best.range.end;
    }
    p += length;
  }
  taken.insert(taken.end(), chosen.begin(), chosen.end());
  std::sort(taken.begin(), taken.end(),
            [](const Occurrence& a, const Occurrence& b) { return a.range.begin < b.range.begin; });
  return taken;
}

namespace {

// Sets `constraint`'s source tokens to the pieces of `pieces` that overlap `bytes` (an empty piece:
// lies inside it); unknown (-1) if none does.
void SetSourcePositions(Segment bytes, absl::Span<const Segment> pieces,
                        TermConstraint& constraint) {
  constraint.source_begin = constraint.source_end = -1;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].begin < bytes.end &&
        (pieces[i].end > bytes.begin ||
         (pieces[i].begin == pieces[i].end && pieces[i].begin >= bytes.begin))) {
      if (constraint.source_begin < 0) constraint.source_begin = static_cast<int>(i);
      constraint.source_end = static_cast<int>(i) + 1;
    }
  }
}

}  // namespace

std::vector<Segment> TermMatcher::Find(absl::string_view text, Segment range,
                                       absl::Span<const Segment> kept) const {
  std::vector<Segment> out;
  for (const Occurrence& o : Occurrences(text, range, kept)) out.push_back(o.range);
  return out;
}

std::shared_ptr<const SentenceTerms> WithSourcePositions(std::shared_ptr<const SentenceTerms> terms,
                                                         absl::Span<const Segment> pieces) {
  if (terms == nullptr) return nullptr;
  auto placed = std::make_shared<SentenceTerms>(*terms);
  for (size_t t = 0; t < placed->terms.size(); ++t) {
    SetSourcePositions(placed->terms[t].source, pieces, placed->constraints.terms[t]);
  }
  return placed;
}

std::shared_ptr<const SentenceTerms> WithTranslatedSourcePositions(
    std::shared_ptr<const SentenceTerms> terms, absl::Span<const int> alignment,
    absl::Span<const Segment> written, absl::Span<const Segment> pieces) {
  if (terms == nullptr) return nullptr;
  auto placed = std::make_shared<SentenceTerms>(*terms);
  std::vector<TermConstraint>& constraints = placed->constraints.terms;
  for (TermConstraint& constraint : constraints) {
    const int begin = constraint.source_begin, end = constraint.source_end;
    constraint.source_begin = constraint.source_end = -1;
    if (begin < 0 || alignment.size() != written.size()) continue;
    // The bytes written by the tokens aligned into its source tokens, from the first's start to
    // the last's end.
    std::optional<Segment> bytes;
    for (size_t k = 0; k < alignment.size(); ++k) {
      if (alignment[k] < begin || alignment[k] >= end || written[k].begin >= written[k].end) {
        continue;
      }
      if (!bytes.has_value()) bytes = written[k];
      bytes->begin = std::min(bytes->begin, written[k].begin);
      bytes->end = std::max(bytes->end, written[k].end);
    }
    if (bytes.has_value()) SetSourcePositions(*bytes, pieces, constraint);
  }
  // Terms whose pieces overlap another's are left unknown: which one the alignment reaches there
  // cannot be told.
  std::vector<bool> shared(constraints.size(), false);
  for (size_t a = 0; a < constraints.size(); ++a) {
    for (size_t b = a + 1; b < constraints.size(); ++b) {
      if (constraints[a].source_begin >= 0 && constraints[b].source_begin >= 0 &&
          constraints[a].source_begin < constraints[b].source_end &&
          constraints[b].source_begin < constraints[a].source_end) {
        shared[a] = shared[b] = true;
      }
    }
  }
  for (size_t t = 0; t < constraints.size(); ++t) {
    if (shared[t]) constraints[t].source_begin = constraints[t].source_end = -1;
  }
  return placed;
}

std::shared_ptr<const SentenceTerms> WithoutSourcePositions(
    std::shared_ptr<const SentenceTerms> terms) {
  if (terms == nullptr) return nullptr;
  auto unplaced = std::make_shared<SentenceTerms>(*terms);
  for (TermConstraint& constraint : unplaced->constraints.terms) {
    constraint.source_begin = constraint.source_end = -1;
  }
  return unplaced;
}

absl::StatusOr<std::shared_ptr<const SentenceTerms>> TermMatcher::Match(
    absl::string_view text, Segment sentence, absl::Span<const Segment> kept) const {
  const std::vector<Occurrence> found = Occurrences(text, sentence, kept);
  if (found.empty()) return nullptr;
  if (found.size() > static_cast<size_t>(kMaxTermConstraints)) {
    return absl::InvalidArgumentError(
        absl::StrCat("holds ", found.size(), " glossary terms and spans kept as written; at most ",
                     kMaxTermConstraints, " in one sentence"));
  }
  auto terms = std::make_shared<SentenceTerms>();
  for (const Occurrence& o : found) {
    SentenceTerms::Term& term = terms->terms.emplace_back();
    term.source = {o.range.begin - sentence.begin, o.range.end - sentence.begin};
    if (o.term >= 0) {
      const CompiledTerm& compiled = terms_[o.term];
      terms->constraints.terms.push_back(compiled.constraint);
      term.kept = compiled.kept;
      term.forms = compiled.forms;
      term.initial_forms = compiled.initial_forms;
      continue;
    }
    // A span kept as written, as the text has it: its bytes are put back whatever its ids
    // decode to, so it need not read back.
    std::vector<int> ids;
    TermForm& form = term.forms.emplace_back();
    SpellTargetForm(text.substr(o.range.begin, o.range.end - o.range.begin), *tokenizer_, ids,
                    form);
    term.kept = true;
    terms->constraints.terms.emplace_back().forms.push_back(std::move(ids));
  }
  return std::shared_ptr<const SentenceTerms>(std::move(terms));
}

}  // namespace mtserve
