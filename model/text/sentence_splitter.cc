#include "model/text/sentence_splitter.h"

#include <unicode/brkiter.h>
#include <unicode/filteredbrk.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

// Abbreviations after which a full stop does not end a sentence, beyond ICU's own list for the
// language: the common ones of Moses' non-breaking prefix lists (ICU 72's English list has "Mr."
// but not "Dr.", "Prof." or "St.").
const std::vector<const char*>& NonBreakingPrefixes(const std::string& language) {
  static const std::vector<const char*> kEnglish = {
      "Dr.",   "Mr.",  "Mrs.",  "Ms.",  "Prof.",   "St.",   "Jr.",   "Sr.",  "vs.",  "etc.",
      "e.g.",  "i.e.", "No.",   "Fig.", "Inc.",    "Ltd.",  "Co.",   "Mt.",  "Gen.", "Col.",
      "Lt.",   "Sgt.", "Capt.", "Rev.", "Gov.",    "Sen.",  "Rep.",  "Jan.", "Feb.", "Aug.",
      "Sept.", "Oct.", "Nov.",  "Dec.", "approx.", "Dept.", "Univ.", "Ave."};
  static const std::vector<const char*> kGerman = {
      "z.B.", "z. B.", "u.a.",  "usw.", "bzw.",  "ca.",  "Dr.",  "Nr.",  "Prof.", "Hr.",  "Fr.",
      "Str.", "vgl.",  "evtl.", "ggf.", "inkl.", "d.h.", "s.o.", "s.u.", "Jh.",   "Tel.", "Abs."};
  static const std::vector<const char*> kFrench = {"M.",    "Mme.", "Mlle.", "Dr.", "Pr.", "etc.",
                                                   "p.ex.", "cf.",  "av.",   "bd.", "St.", "Ste."};
  static const std::vector<const char*> kNone;
  if (language == "en") return kEnglish;
  if (language == "de") return kGerman;
  if (language == "fr") return kFrench;
  return kNone;
}

bool IsLineBreak(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 ||
         c == 0x2029;
}

// Decodes one UTF-8 character at `i`: its code point and length, or length 0 if invalid.
std::pair<char32_t, size_t> DecodeUtf8(absl::string_view s, size_t i) {
  const unsigned char b0 = s[i];
  if (b0 < 0x80) return {b0, 1};
  size_t length;
  char32_t c;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, c = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, c = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, c = b0 & 0x07;
  } else {
    return {0, 0};
  }
  if (i + length > s.size()) return {0, 0};
  for (size_t k = 1; k < length; ++k) {
    const unsigned char b = s[i + k];
    if ((b & 0xC0) != 0x80) return {0, 0};
    c = (c << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[length] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return {0, 0};
  return {c, length};
}

}  // namespace

struct SentenceSplitter::Impl {
  std::unique_ptr<icu::BreakIterator> prototype;

  // Appends the sentences of one line (no line breaks inside), `line` starting at byte `base`.
  void SplitLine(absl::string_view line, size_t base, std::vector<Segment>& out) const;
};

absl::StatusOr<std::unique_ptr<SentenceSplitter>> SentenceSplitter::Create(
    absl::string_view language) {
  const std::string code(language);
  const icu::Locale locale = code.empty() ? icu::Locale::getRoot() : icu::Locale(code.c_str());
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> base(
      icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status) || base == nullptr) {
    return absl::InternalError(
        absl::StrCat("ICU has no sentence rules (for \"", code, "\"): ", u_errorName(status)));
  }
  // The locale's own suppressions ("@ss=standard" data), then ours.
  std::unique_ptr<icu::FilteredBreakIteratorBuilder> builder(
      icu::FilteredBreakIteratorBuilder::createInstance(locale, status));
  if (U_FAILURE(status) || builder == nullptr) {
    status = U_ZERO_ERROR;
    builder.reset(icu::FilteredBreakIteratorBuilder::createEmptyInstance(status));
  }
  auto impl = std::make_unique<Impl>();
  if (U_FAILURE(status) || builder == nullptr) {
    impl->prototype = std::move(base);
  } else {
    std::string primary = absl::AsciiStrToLower(locale.getLanguage());
    for (const char* prefix : NonBreakingPrefixes(primary)) {
      UErrorCode ignored = U_ZERO_ERROR;  // "already present" is not an error for us.
      builder->suppressBreakAfter(icu::UnicodeString::fromUTF8(prefix), ignored);
    }
    impl->prototype.reset(builder->build(base.release(), status));
    if (U_FAILURE(status) || impl->prototype == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot build ICU's sentence iterator: ", u_errorName(status)));
    }
  }
  return std::unique_ptr<SentenceSplitter>(new SentenceSplitter(std::move(impl)));
}

SentenceSplitter::SentenceSplitter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentenceSplitter::~SentenceSplitter() = default;

void SentenceSplitter::Impl::SplitLine(absl::string_view line, size_t base,
                                       std::vector<Segment>& out) const {
  // UTF-16 for ICU, and the byte offset of each UTF-16 unit (plus the end) to map back.
  icu::UnicodeString units;
  std::vector<size_t> bytes;
  for (size_t i = 0; i < line.size();) {
    const auto [c, length] = DecodeUtf8(line, i);
    if (length == 0) {  // Not UTF-8: the whole line is one sentence, trimmed of ASCII space.
      size_t b = 0, e = line.size();
      while (b < e && absl::ascii_isspace(line[b])) ++b;
      while (e > b && absl::ascii_isspace(line[e - 1])) --e;
      if (b < e) out.push_back({base + b, base + e});
      return;
    }
    units.append(static_cast<UChar32>(c));
    bytes.push_back(i);
    if (c > 0xFFFF) bytes.push_back(i);
    i += length;
  }
  bytes.push_back(line.size());

  std::unique_ptr<icu::BreakIterator> it(prototype->clone());
  it->setText(units);
  int32_t start = it->first();
  for (int32_t end = it->next(); end != icu::BreakIterator::DONE; start = end, end = it->next()) {
    int32_t b = start, e = end;
    while (b < e && u_isUWhiteSpace(units.char32At(b))) b = units.moveIndex32(b, 1);
    while (e > b) {
      const int32_t previous = units.moveIndex32(e, -1);
      if (!u_isUWhiteSpace(units.char32At(previous))) break;
      e = previous;
    }
    if (b < e) out.push_back({base + bytes[b], base + bytes[e]});
  }
}

std::vector<Segment> SentenceSplitter::Split(absl::string_view text) const {
  std::vector<Segment> sentences;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size();) {
    const auto [c, length] = DecodeUtf8(text, i);
    const size_t step = length == 0 ? 1 : length;
    if (length != 0 && IsLineBreak(c)) {
      impl_->SplitLine(text.substr(line_start, i - line_start), line_start, sentences);
      line_start = i + step;
    }
    i += step;
  }
  impl_->SplitLine(text.substr(line_start), line_start, sentences);
  return sentences;
}

}  // namespace mtserve
