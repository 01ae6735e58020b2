// XML mixed content (an OpenDocument paragraph's, an XHTML one's) as runs of text with inline
// spans (text/inline_spans.h), and rendered back around the runs' translations. Generic: a schema
// says which elements are paragraphs (each one run), which are inline spans kept around their
// text, which are objects kept between words, which expand to text, which are kept untranslated
// (their text reported), and how whitespace is written; everything else inside a paragraph is
// fixed (its text translated with the sentence for the words around it, its XML kept as written:
// fields such as a date or a page number).
//
// A paragraph's run is its text nodes' text (whitespace collapsed if the schema says so; C0
// control characters, which XML 1.0 cannot hold, left out), spans
// (text:span, text:a) as InlineSpans whose open/close are their start and end tags, objects
// (text:tab, draw:frame, text:note, bookmarks) as empty ranges, fixed elements as fixed spans
// over their text. Paragraphs inside an object (a frame's text box, a footnote's body) are runs
// of their own, after the paragraph that holds them, in document order. A paragraph whose text
// outside fixed spans is only whitespace is no run (its objects' paragraphs still are).
//
// Rendering replaces each paragraph's children by its translation written with
// text/inline_spans.h WriteSpans (crossing spans split and nested), the spans' start tags as they
// were, and the objects' and fixed elements' own nodes moved into place, never re-serialised;
// paragraphs inside objects are rendered first, so an object carries its translated text.
// Walks are iterative: nesting costs no stack.
#ifndef MTSERVE_TEXT_OFFICE_XML_INLINE_RUNS_H_
#define MTSERVE_TEXT_OFFICE_XML_INLINE_RUNS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "pugixml.hpp"
#include "text/inline_spans.h"

namespace mtserve {

struct XmlInlineSchema {
  enum class Kind {
    kParagraph,  // One run. Inside another paragraph: a run of its own, kept there as an object.
    kSpan,       // Kept around its text; its content walked.
    kObject,     // Kept between words; paragraphs inside it are runs of their own.
    kSeparator,  // Kept between words, which it separates (ODF's text:tab): read as a space,
                 // written with no space beside it.
    kExpand,     // Replaced by text (`expand`): ODF's text:s (spaces), text:line-break ("\n").
    kFixed,      // Its text translated with the sentence, its XML kept as written.
    kKept,       // Kept as written, paragraphs inside it untranslated, its text reported (comments,
                 // tracked deletions); between words inside a paragraph.
  };
  // Elements by qualified name ("text:p"), then by prefix ("draw:" for any draw:*).
  absl::flat_hash_map<std::string, Kind> elements;
  absl::flat_hash_map<std::string, Kind> prefixes;
  // Elements that are none of the above inside a paragraph (outside paragraphs they are structure,
  // walked for paragraphs).
  Kind other = Kind::kFixed;
  // The text of a kExpand element; an error refuses the part.
  std::function<absl::StatusOr<std::string>(const pugi::xml_node&)> expand;

  // Whitespace in text nodes collapsed (XML's runs of spaces, tabs and line feeds are one space;
  // none at a paragraph's start), as ODF reads it.
  bool collapse_whitespace = false;
  // How a translation's whitespace is written: a space that collapsing would lose (a paragraph's
  // first, or one after another) as `space_element` with `space_count` holding how many ("text:s",
  // "text:c"); a tab as the empty element `tab_element`, a line feed as `line_break_element`.
  // Empty: written as the character.
  std::string space_element, space_count, tab_element, line_break_element;
  // Spaces one `space_element` holds at most (more are written as several); 0: no limit.
  size_t max_space_count = 0;

  // `element`'s kind by `elements` and `prefixes`; KindOf: or `other`.
  std::optional<Kind> Listed(const pugi::xml_node& element) const;
  Kind KindOf(const pugi::xml_node& element) const;
};

// The paragraphs of a parsed part, as runs, and the nodes they came from.
class XmlInlineRuns {
 public:
  struct Run {
    std::string text;
    std::vector<InlineSpan> inlines;  // Outer ones before those they enclose.
  };

  // The runs of the tree under `root` (the part's document), in document order (a paragraph
  // before those inside its objects). INVALID_ARGUMENT (naming the part `name`) where the schema's
  // `expand` refuses an element.
  static absl::StatusOr<XmlInlineRuns> Collect(absl::string_view name, const pugi::xml_node& root,
                                               const XmlInlineSchema& schema);

  const std::vector<Run>& runs() const { return runs_; }
  // Text found in kKept elements, each element's collapsed text (none for one without text).
  const std::vector<std::string>& kept() const { return kept_; }

  // Replaces each run's paragraph children by translations[r] (one per run, in order), in the
  // tree Collect read (which must be unchanged since, and is changed in place). A paragraph whose
  // translation does not parse back (never expected: it is our own XML) is left as it was;
  // returns how many were.
  size_t Render(absl::Span<const TranslatedRun> translations, const XmlInlineSchema& schema) const;

 private:
  struct Paragraph {
    pugi::xml_node node;
    std::vector<pugi::xml_node> nodes;  // Per inline: its element (or comment).
  };
  bool RenderParagraph(const Paragraph& paragraph, const Run& run, const TranslatedRun& t,
                       const XmlInlineSchema& schema) const;

  std::vector<Run> runs_;
  std::vector<Paragraph> paragraphs_;  // Per run.
  std::vector<std::string> kept_;
};

// The XML escaping of `text` as character data (&, <, >), C0 controls other than tab, line feed
// and carriage return left out (XML 1.0 cannot hold them).
void AppendXmlText(absl::string_view text, std::string& out);

}  // namespace mtserve

#endif  // MTSERVE_TEXT_OFFICE_XML_INLINE_RUNS_H_
