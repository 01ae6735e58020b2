// One XML part of an OpenDocument file (content.xml, styles.xml, meta.xml) taken apart into runs
// (text/office/xml_inline_runs.h, over ODF's text:* vocabulary) and rendered back around their
// translations with its language tags set to the target language. Text documents and
// presentations share it: a slide's text boxes and notes, a document's body, tables, lists,
// frames, footnotes, headers and footers are all text:p and text:h.
//
// Translated: every text:p and text:h (a paragraph inside a frame's text box or a note's body a
// run of its own), a presentation's header and footer declarations; meta.xml's dc:title. In a
// paragraph: text:span, text:a and text:meta are spans carried onto the aligned words; text:s and
// text:line-break are text (spaces, a line break: a line break ends a sentence); tabs, bookmarks,
// reference and index marks, change marks, soft page breaks, notes, frames and other drawing shapes
// stay between words; fields (text:date, text:page-number, text:sequence and any element not named
// here) keep their text as written. Kept untranslated, reported as kept: comments
// (office:annotation) and tracked deletions (text:tracked-changes: the text translated is the
// visible text, as accepted).
//
// Language tags: each style:text-properties's fo:language (and fo:country: the tag's region, or
// "none" where it had one and the tag has none; fo:script likewise, removed where the tag has
// none; style:rfc-language-tag: the tag) is set; styles.xml's default paragraph style gets them if
// it had none; meta.xml's dc:language is set or added. style:language-asian and
// style:language-complex, and number styles' number:language, are left alone.
//
// Element names are matched with ODF's usual prefixes ("text:", "office:", ...); a part that binds
// one of them to another namespace, or ODF's namespaces to other prefixes, is refused.
#ifndef MTSERVE_TEXT_OFFICE_ODF_PART_H_
#define MTSERVE_TEXT_OFFICE_ODF_PART_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "text/inline_spans.h"
#include "text/office/xml_inline_runs.h"

namespace mtserve {

class OdfPart {
 public:
  enum class Kind {
    kContent,  // content.xml: the body.
    kStyles,   // styles.xml: master pages' headers and footers, the default style's language.
    kMeta,     // meta.xml: dc:title, dc:language.
  };

  // Part `name` of `kind` from its bytes, for `target_language` (a BCP 47 tag; "" leaves the
  // language tags). INVALID_ARGUMENT naming the part for bytes that are not UTF-8, XML
  // ParseXmlPart refuses, a namespace
  // bound against ODF's usual prefixes, a text:s of more than kMaxSpaces spaces.
  static absl::StatusOr<OdfPart> TakeApart(std::string name, std::string bytes, Kind kind,
                                           std::string target_language);

  // text:s's count at most (real documents indent with a few dozen).
  static constexpr int kMaxSpaces = 10000;

  const std::string& name() const { return name_; }
  const std::vector<XmlInlineRuns::Run>& runs() const { return runs_; }
  const std::vector<std::string>& kept() const { return kept_; }

  // The part's bytes with runs()[r] replaced by translations[r] and the language tags set.
  std::string Render(absl::Span<const TranslatedRun> translations) const;

 private:
  OdfPart() = default;

  std::string name_;
  std::string bytes_;
  Kind kind_ = Kind::kContent;
  std::string target_language_;
  std::vector<XmlInlineRuns::Run> runs_;
  std::vector<std::string> kept_;
};

// The language tag `tag` split as ODF's attributes hold it: language ("pt"), script ("Latn", or
// empty), country ("BR", or empty). Empty language for what is not a BCP 47 tag.
struct OdfLanguage {
  std::string language, script, country;
};
OdfLanguage SplitLanguageTag(absl::string_view tag);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_ODF_PART_H_
