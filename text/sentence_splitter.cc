#include "text/sentence_splitter.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ures.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

// Non-breaking prefixes on top of CLDR's (whose English list, for one, lacks "Dr.", "St." and
// "etc."). Written without the final period, as in Moses' nonbreaking_prefix lists; the period is
// added when they are registered. Kept short on purpose: every entry also
// joins two real sentences when a sentence happens to end with it ("... and so on etc. Then ...").
constexpr absl::string_view kEnglishPrefixes[] = {
    "Dr",  "Mr",   "Mrs", "Ms",  "Mx",  "Prof", "St",  "Jr",   "Sr",     "vs",  "etc",
    "e.g", "i.e",  "No",  "Fig", "Inc", "Ltd",  "Co",  "Mt",   "Gen",    "Col", "Lt",
    "Sgt", "Capt", "Rev", "Hon", "Gov", "Sen",  "Rep", "Dept", "approx", "cf",
};
constexpr absl::string_view kGermanPrefixes[] = {
    "z.B", "usw", "bzw", "Dr",  "Nr",   "ca",  "etc",  "d.h", "u.a", "o.ä",  "Prof",
    "Hr",  "Fr",  "Str", "vgl", "evtl", "ggf", "inkl", "Mio", "Mrd", "bzgl", "Abb",
};
constexpr absl::string_view kFrenchPrefixes[] = {
    "M", "MM", "Mme", "Mlle", "Dr", "Pr", "St", "Ste", "etc", "cf", "p.ex", "av", "env", "No",
};

// CLDR entries that are also everyday words ending sentences ("It is OK.", "Ein Test.", "la
// mer."): kept, they would join two sentences far more often than they abbreviate anything.
constexpr absl::string_view kEnglishWords[] = {
    "OK", "Ok", "Is", "In",  "On",  "To",  "Go",  "Up",  "By",  "Or",   "As",
    "Do", "Id", "Ex", "All", "Act", "Hat", "Job", "Joe", "Pro", "Long", "Link",
};
constexpr absl::string_view kGermanWords[] = {"Test", "Art", "Akt", "Port", "Max"};
constexpr absl::string_view kFrenchWords[] = {"mer", "jeu", "sept", "Var"};

struct LanguageLists {
  absl::Span<const absl::string_view> prefixes;  // Non-breaking.
  absl::Span<const absl::string_view> words;     // Breaking after all.
};

LanguageLists ListsFor(absl::string_view language) {
  if (language == "en") return {kEnglishPrefixes, kEnglishWords};
  if (language == "de") return {kGermanPrefixes, kGermanWords};
  if (language == "fr") return {kFrenchPrefixes, kFrenchWords};
  return {};
}

bool IsLineBreak(UChar32 c) {
  // ICU's paragraph separators (rule SB4), of which NEL is the one the contract does not name;
  // ICU breaks after it anyway, so treating it as a hard break changes nothing but clarity.
  return c == '\n' || c == '\r' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

// One line of the text in UTF-16 for ICU, and the byte offset in the UTF-8 text of every UTF-16
// index (including the end), to map ICU's boundaries back to bytes.
struct Line {
  icu::UnicodeString utf16;
  std::vector<size_t> byte_offsets;
};

// `end` moved back over the whitespace that ends [start, end) of `utf16`.
int32_t TrimEnd(const icu::UnicodeString& utf16, int32_t start, int32_t end) {
  while (end > start) {
    // At a trail surrogate, char32At returns the whole supplementary code point.
    const UChar32 c = utf16.char32At(end - 1);
    if (!u_isUWhiteSpace(c)) break;
    end -= U16_LENGTH(c);
  }
  return end;
}

// Appends [start, end) of `line` without its leading and trailing whitespace, if anything is left.
void AppendTrimmed(const Line& line, int32_t start, int32_t end, std::vector<Segment>* out) {
  while (start < end) {
    const UChar32 c = line.utf16.char32At(start);
    if (!u_isUWhiteSpace(c)) break;
    start += U16_LENGTH(c);
  }
  end = TrimEnd(line.utf16, start, end);
  if (start < end) out->push_back({line.byte_offsets[start], line.byte_offsets[end]});
}

// Whether `line` has `abbreviation` as a whole word ending at UTF-16 index `end`: at the start of
// the line or after a character that is neither a letter nor a digit ("(Dr." but not "HerDr.").
bool EndsWithWord(const icu::UnicodeString& line, int32_t end,
                  const icu::UnicodeString& abbreviation) {
  const int32_t start = end - abbreviation.length();
  if (start < 0 || line.compare(start, abbreviation.length(), abbreviation) != 0) return false;
  if (start == 0) return true;
  const UChar32 before = line.char32At(start - 1);
  return !u_hasBinaryProperty(before, UCHAR_ALPHABETIC) && !u_isdigit(before) &&
         !u_hasBinaryProperty(before, UCHAR_DIACRITIC);
}

// CLDR's non-breaking abbreviations for `locale` (what "@ss=standard" loads), none if it has none.
absl::StatusOr<std::vector<icu::UnicodeString>> CldrSuppressions(const icu::Locale& locale) {
  std::vector<icu::UnicodeString> out;
  UErrorCode status = U_ZERO_ERROR;
  icu::LocalUResourceBundlePointer bundle(
      ures_open(U_ICUDATA_NAME "-brkitr", locale.getBaseName(), &status));
  icu::LocalUResourceBundlePointer exceptions(
      ures_getByKey(bundle.getAlias(), "exceptions", nullptr, &status));
  icu::LocalUResourceBundlePointer sentence_break(
      ures_getByKey(exceptions.getAlias(), "SentenceBreak", nullptr, &status));
  if (status == U_MISSING_RESOURCE_ERROR) return out;
  if (U_FAILURE(status)) {
    return absl::InternalError(
        absl::StrCat("Cannot read ICU's sentence break exceptions: ", u_errorName(status)));
  }
  const int32_t size = ures_getSize(sentence_break.getAlias());
  for (int32_t i = 0; i < size && U_SUCCESS(status); ++i) {
    int32_t length = 0;
    const UChar* entry = ures_getStringByIndex(sentence_break.getAlias(), i, &length, &status);
    if (U_SUCCESS(status)) out.emplace_back(entry, length);
  }
  if (U_FAILURE(status)) {
    return absl::InternalError(
        absl::StrCat("Cannot read ICU's sentence break exceptions: ", u_errorName(status)));
  }
  return out;
}

}  // namespace

struct SentenceSplitter::Impl {
  // ICU's plain sentence rules; never used directly, only cloned: see Split.
  std::unique_ptr<icu::BreakIterator> prototype;
  // Abbreviations (with their final period) after which a break of the rules is ignored.
  std::vector<icu::UnicodeString> suppressions;

  bool Suppressed(const icu::UnicodeString& line, int32_t end) const {
    for (const icu::UnicodeString& abbreviation : suppressions) {
      if (EndsWithWord(line, end, abbreviation)) return true;
    }
    return false;
  }
};

SentenceSplitter::SentenceSplitter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentenceSplitter::~SentenceSplitter() = default;

absl::StatusOr<std::unique_ptr<SentenceSplitter>> SentenceSplitter::Create(
    absl::string_view language) {
  // Only language tag characters: keeps ICU keywords ("@ss=none", which would change the rules
  // behind our back) and embedded NULs out of ICU's parser.
  for (char ch : language) {
    if (!absl::ascii_isalnum(ch) && ch != '-' && ch != '_') {
      return absl::InvalidArgumentError(absl::StrCat("Invalid language code \"", language, "\""));
    }
  }
  const std::string code(language);
  UErrorCode status = U_ZERO_ERROR;
  icu::Locale locale = icu::Locale::getRoot();
  if (!code.empty()) {
    locale = icu::Locale::forLanguageTag(code, status);
    if (U_FAILURE(status) || locale.isBogus()) {
      // Not BCP-47 ("de_CH"): an ICU locale id.
      status = U_ZERO_ERROR;
      locale = icu::Locale(code.c_str());
    }
    if (locale.isBogus()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid language code \"", language, "\""));
    }
    // ICU falls back to the machine's default locale for a language it has no data for; the
    // result must not depend on the machine, so such a language gets the root rules.
    icu::LocalUResourceBundlePointer bundle(
        ures_open(U_ICUDATA_NAME "-brkitr", locale.getBaseName(), &status));
    if (status == U_USING_DEFAULT_WARNING) locale = icu::Locale::getRoot();
    status = U_ZERO_ERROR;
  }

  auto impl = std::make_unique<Impl>();
  impl->prototype.reset(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status) || impl->prototype == nullptr) {
    return absl::InternalError(
        absl::StrCat("ICU has no sentence rules for \"", language, "\": ", u_errorName(status)));
  }
  // ICU's FilteredBreakIteratorBuilder (behind "@ss=standard") would apply these lists itself, but
  // ICU 72 also matches an abbreviation at the end of a longer word: CLDR's German "am." then
  // joins "Er kam. Sie ging." (and our "Mr." would join "HerMr. Then"). So the same lists are
  // applied here, to whole words only.
  absl::StatusOr<std::vector<icu::UnicodeString>> cldr = CldrSuppressions(locale);
  if (!cldr.ok()) return cldr.status();
  const LanguageLists lists = ListsFor(locale.getLanguage());
  for (icu::UnicodeString& abbreviation : *cldr) {
    const bool is_word = std::any_of(lists.words.begin(), lists.words.end(), [&](auto word) {
      return abbreviation == icu::UnicodeString::fromUTF8(absl::StrCat(word, "."));
    });
    if (!is_word) impl->suppressions.push_back(std::move(abbreviation));
  }
  for (absl::string_view prefix : lists.prefixes) {
    impl->suppressions.push_back(icu::UnicodeString::fromUTF8(absl::StrCat(prefix, ".")));
  }
  return std::unique_ptr<SentenceSplitter>(new SentenceSplitter(std::move(impl)));
}

std::vector<Segment> SentenceSplitter::Split(absl::string_view text) const {
  std::vector<Segment> sentences;
  if (text.empty()) return sentences;
  // An ICU break iterator holds its text and position, so one instance cannot serve concurrent
  // calls (the suppressions are only read). Cloning the (never used) prototype is a const
  // operation, safe from any number of threads, and costs an allocation or two: cheap beside a
  // translation, and unlike a mutex it never makes server threads wait for each other.
  std::unique_ptr<icu::BreakIterator> iterator(impl_->prototype->clone());

  Line line;
  auto split_line = [&](size_t end_byte) {
    line.byte_offsets.push_back(end_byte);
    // ICU indexes strings with int32_t: lines are far shorter (the server's --max_text_bytes).
    if (line.utf16.length() > 0) {
      // ICU keeps a reference to the string: `line` outlives every use of the iterator below.
      iterator->setText(line.utf16);
      const int32_t length = line.utf16.length();
      int32_t start = iterator->first();
      for (int32_t end = iterator->next(); end != icu::BreakIterator::DONE;
           end = iterator->next()) {
        if (end < length && impl_->Suppressed(line.utf16, TrimEnd(line.utf16, start, end))) {
          continue;  // "Dr. Smith": the sentence goes on.
        }
        AppendTrimmed(line, start, end, &sentences);
        start = end;
      }
    }
    line.utf16.remove();
    line.byte_offsets.clear();
  };

  size_t pos = 0;
  while (pos < text.size()) {
    // Decodes one code point; an ill-formed sequence (its maximal subpart, as the Unicode
    // standard recommends) becomes U+FFFD and keeps its bytes in the offsets.
    const int32_t window = static_cast<int32_t>(std::min<size_t>(text.size() - pos, 4));
    int32_t length = 0;
    UChar32 c;
    U8_NEXT_OR_FFFD(reinterpret_cast<const uint8_t*>(text.data() + pos), length, window, c);
    if (IsLineBreak(c)) {
      split_line(pos);
    } else {
      line.byte_offsets.push_back(pos);
      if (!U_IS_BMP(c)) line.byte_offsets.push_back(pos);  // The trail surrogate's index.
      line.utf16.append(c);
    }
    pos += length;
  }
  split_line(text.size());
  return sentences;
}

}  // namespace mtserve
