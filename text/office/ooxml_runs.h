// Office Open XML's paragraphs of runs as PartRuns (text/office/office_document.h), for Word's
// WordprocessingML (w:p > w:r > w:rPr + w:t, w:tab, w:br: docx_format.cc) and DrawingML's text
// (a:p > a:r > a:rPr + a:t, a:br: pptx_format.cc), which have the same shape: a paragraph of runs,
// each run's formatting in a properties element.
//
// A paragraph is one run of text. Adjacent runs whose properties are equal are one (compared
// canonically: attributes and children in any order, w:lang and DrawingML's lang, altLang, dirty,
// err, smtClean, smtId and bmk left out as not formatting; Word's revision ids are on w:r, not in
// its properties, and its proofing marks w:proofErr and its w:lastRenderedPageBreak are dropped).
// The properties covering most of the paragraph's characters are its base; text of other
// properties is an InlineSpan over it; a w:hyperlink is a span around the spans of its runs, and
// so are Word's other elements around runs (w:dir, w:bdo, w:smartTag, w:customXml), each written
// again around its runs' translation, with its properties (DrawingML's a:hlinkClick is in a:rPr,
// so a link is formatting there). Tabs and line breaks (w:tab, w:br, w:cr; a:br) are spaces in
// the text and objects placed between the translation's words (the space is taken out again
// beside them). C0 control characters, which XML cannot hold, are left out of the text. Everything
// else in a paragraph is kept as written and placed by the alignment: bookmarks, comment marks,
// footnote references, symbols, drawings and images (a text box inside is translated as paragraphs
// of its own) are empty spans; fields (w:fldSimple, a complex field's runs from its begin to its
// end, a:fld), content controls (w:sdt), math and any other element holding text are fixed spans
// (their text is read with the sentence and written back as it was). Tracked changes are taken as
// accepted: the text of insertions and moves' destinations (w:ins, w:moveTo) is translated with the
// paragraph and written back with no revision mark, deletions and moves' sources (w:del,
// w:moveFrom) and the moves' range marks are left out (a tracked change of formatting, w:rPrChange,
// stays in its run's properties; one of a paragraph's mark, in w:pPr, stays). A paragraph with no
// text outside fixed spans is left as it was. Comments' ranges and references stay where they
// stand; the comments themselves are another part. PartRuns::kept is empty: nothing is kept
// untranslated but what the spans above keep.
//
// The part is rendered by parsing it again and walking the same paragraphs: each translated
// paragraph's run content is replaced by runs written around the translation (text outside
// every formatting span with the base properties), its paragraph properties (w:pPr, a:pPr,
// a:endParaRPr) left in place. Every language tag of the part (w:lang's w:val, or
// w:eastAsia for Chinese, Japanese and Korean, or w:bidi for Arabic, Hebrew, Persian, Urdu,
// Yiddish and Pashto, which Word applies to those scripts' characters; lang on a:rPr,
// a:endParaRPr and a:defRPr) is set to the target language, if one is given.
//
// Elements are matched by the prefix the part's root element binds to the namespace (Word's and
// DrawingML's transitional and strict namespaces), as every writer of these files declares it.
#ifndef MTSERVE_TEXT_OFFICE_OOXML_RUNS_H_
#define MTSERVE_TEXT_OFFICE_OOXML_RUNS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "text/office/office_document.h"

namespace mtserve {

enum class OoxmlDialect {
  kWordprocessing,  // w:p, in a DOCX's document, headers, footers, notes and styles.
  kDrawing,         // a:p, in a PPTX's slides and notes.
};

// Part `name`'s `bytes` taken apart into its paragraphs of `dialect`, to be rendered with its
// language tags set to `target_language` ("" to leave them). INVALID_ARGUMENT naming the part for
// bytes that are not UTF-8 and for XML ParseXmlPart refuses (text/office/xml_part.h).
absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartOoxmlPart(absl::string_view name,
                                                             std::string bytes,
                                                             OoxmlDialect dialect,
                                                             absl::string_view target_language);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_OOXML_RUNS_H_
