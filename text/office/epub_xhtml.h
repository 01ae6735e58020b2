// An EPUB's XHTML content documents (its chapters, the EPUB 3 navigation document) taken apart
// into runs through the HTML path (text/html_document.h, gumbo) and rendered as well-formed XML,
// and what the EPUB's other XML parts share with them: parsing with a plain DOCTYPE allowed, and
// language attributes set to the target language.
//
// The HTML parser reads XHTML as HTML, which differs from XML in a few ways; the part is first
// made into bytes both read alike, then every run the HTML parser still reads otherwise is left
// as written and reported (PartRuns::kept), so that the rendering is always well-formed XML:
// - an empty-element tag of an element that is not void in HTML (<span id="a"/>, <title/>,
//   <script src="x"/>: HTML reads a start tag, and the rest of the document as its content) is
//   written out as a start and an end tag (<span id="a"></span>), outside <svg> and <math>,
//   whose foreign content HTML reads as XML;
// - a CDATA section outside <script>, <style>, <svg> and <math> (HTML reads a bogus comment) is
//   written as the escaped text it holds, which is then translated;
// - a UTF-8 byte order mark (HTML reads a character of text, ahead of the XML declaration) is
//   left out;
// - a run whose bytes are not text and whole, balanced tags each written back as one of its
//   inlines (the HTML parser closed an element XML does not: a block inside a <span>, a link in
//   a link; markup inside <title>; text inside what XML reads as a comment) is left as written.
// Those rewritten bytes are the only ones that change besides the runs and the language
// attributes; each is the same XML as before. An XML declaration anywhere but first (pugixml
// would take one at the top level) is refused, as XML refuses it. Entities: the part's are XML's
// five and character references (XML allows no other without a DTD, and DOCTYPEs with an internal
// subset are refused); translations are written with &amp;, &lt; and &gt; (and &quot;, &#39; in
// attributes).
#ifndef MTSERVE_TEXT_OFFICE_EPUB_XHTML_H_
#define MTSERVE_TEXT_OFFICE_EPUB_XHTML_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "text/html_document.h"
#include "text/office/office_document.h"
#include "text/office/xml_scan.h"

namespace mtserve {

// Part `name` parsed as ParseXmlPart does (its errors), except that a DOCTYPE without an internal
// subset (<!DOCTYPE html>, XHTML 1.1's, the NCX's) is accepted: pugixml never reads it. One with
// an internal subset is INVALID_ARGUMENT naming the part (entities are never defined), as are a
// NUL byte (pugixml would stop reading there) and an XML declaration that is malformed or not
// first. Node offsets (offset_debug) are the bytes'.
absl::StatusOr<std::unique_ptr<pugi::xml_document>> ParseEpubXml(absl::string_view name,
                                                                 absl::string_view bytes);

// The edits that set the lang and xml:lang attributes of `pieces` (ScanXml(xml)) to `target`:
// those of the root element always, if `root_too`, and any other whose value is one of
// `sources` (compared ignoring case). None if `target` is empty.
std::vector<XmlEdit> LanguageEdits(absl::string_view xml, const std::vector<XmlPiece>& pieces,
                                   const std::vector<std::string>& sources,
                                   absl::string_view target, bool root_too);

// XHTML part `name` taken apart (see above) by HTML's rules and `options` (what is not
// translated, as HTML's: translate="no", class "notranslate", ignore_tags, and with keep_inline
// such an inline element inside a run kept as written in it, PartRuns::Run::kept); its <html>
// element's language attributes and any other equal to `source_language` or to the <html>
// element's own set to `target_language` ("" leaves them). INVALID_ARGUMENT naming the part for
// XML ParseEpubXml refuses or HTML HtmlDocument::Parse refuses (nesting, attributes).
absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartXhtml(absl::string_view name,
                                                         absl::string_view bytes,
                                                         absl::string_view source_language,
                                                         absl::string_view target_language,
                                                         const HtmlOptions& options = {});

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_EPUB_XHTML_H_
