#include "text/office/epub_xhtml.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/html_document.h"
#include "text/office/xml_part.h"

namespace mtserve {
namespace {

// HTML's void elements: an empty-element tag of one is what HTML reads too.
bool IsVoid(absl::string_view local) {
  static constexpr absl::string_view kVoid[] = {
      "area", "base",  "basefont", "bgsound", "br",   "col",   "embed",  "frame", "hr",
      "img",  "input", "keygen",   "link",    "meta", "param", "source", "track", "wbr"};
  const std::string lower = absl::AsciiStrToLower(local);
  return std::find(std::begin(kVoid), std::end(kVoid), lower) != std::end(kVoid);
}

// Elements whose content HTML reads as XML (foreign content).
bool IsForeign(absl::string_view local) { return local == "svg" || local == "math"; }

// Elements whose content HTML reads as raw text up to their end tag.
bool IsRawText(absl::string_view local) { return local == "script" || local == "style"; }

// Whether `c` continues a name as pugixml reads one: letters, digits, "_:-." and every byte of a
// multi-byte UTF-8 character.
bool ContinuesXmlName(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return absl::ascii_isalnum(u) || c == '_' || c == ':' || c == '-' || c == '.' || u >= 0x80;
}

// `xml` made into bytes the HTML parser reads as XML does (epub_xhtml.h), language attributes
// set, a byte order mark left out.
std::string PrepareForHtml(absl::string_view xml, absl::string_view source_language,
                           absl::string_view target_language) {
  const std::vector<XmlPiece> pieces = ScanXml(xml);
  std::vector<std::string> sources;
  if (!source_language.empty()) sources.emplace_back(source_language);
  for (const XmlPiece& piece : pieces) {
    if (piece.kind != XmlPiece::kStartTag && piece.kind != XmlPiece::kEmptyTag) continue;
    for (const XmlAttribute& a : TagAttributes(xml, piece)) {
      if (a.name == "lang" || a.name == "xml:lang") {
        sources.emplace_back(xml.substr(a.value.begin, a.value.end - a.value.begin));
      }
    }
    break;  // The root's own.
  }
  std::vector<XmlEdit> edits = LanguageEdits(xml, pieces, sources, target_language, true);
  // A byte order mark is left out: the HTML parser would read it as text to translate, ahead of
  // the XML declaration, which must come first.
  if (absl::StartsWith(xml, "\xEF\xBB\xBF")) edits.push_back({{0, 3}, ""});
  std::vector<absl::string_view> open;  // Local names of the elements open.
  int foreign = 0;                      // How many of them are <svg> or <math>.
  for (const XmlPiece& piece : pieces) {
    switch (piece.kind) {
      case XmlPiece::kStartTag: {
        const absl::string_view local = LocalName(piece.name);
        open.push_back(local);
        if (IsForeign(local)) ++foreign;
        break;
      }
      case XmlPiece::kEndTag:
        if (!open.empty()) {
          if (IsForeign(open.back())) --foreign;
          open.pop_back();
        }
        break;
      case XmlPiece::kEmptyTag: {
        const absl::string_view local = LocalName(piece.name);
        if (foreign == 0 && !IsVoid(local) && !IsForeign(local)) {
          // "/>" made "></name>".
          edits.push_back(
              {{piece.bytes.end - 2, piece.bytes.end}, absl::StrCat("></", piece.name, ">")});
        }
        break;
      }
      case XmlPiece::kCdata:
        if (foreign == 0 && (open.empty() || !IsRawText(open.back())) &&
            piece.bytes.end - piece.bytes.begin >= 12) {
          const absl::string_view text =
              xml.substr(piece.bytes.begin + 9, piece.bytes.end - piece.bytes.begin - 12);
          std::string escaped;
          for (char c : text) {
            if (c == '&') {
              escaped += "&amp;";
            } else if (c == '<') {
              escaped += "&lt;";
            } else if (c == '>') {
              escaped += "&gt;";
            } else {
              escaped += c;
            }
          }
          edits.push_back({piece.bytes, std::move(escaped)});
        }
        break;
      default:
        break;
    }
  }
  return ApplyEdits(xml, std::move(edits));
}

// Whether a run's rendering stays well-formed XML where its bytes stood: they are text and whole
// tags (`pieces` are the document's), the tags balanced, and each start tag among them is one
// of the run's inlines' `open`, whose `close` ends the same element. An attribute's run: its
// bytes are inside one tag.
bool KeepsXmlStructure(absl::string_view xml, const std::vector<XmlPiece>& pieces,
                       const HtmlDocument::Run& run) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), run.source.begin,
                             [](size_t at, const XmlPiece& p) { return at < p.bytes.end; });
  if (run.attribute) {
    return it != pieces.end() &&
           (it->kind == XmlPiece::kStartTag || it->kind == XmlPiece::kEmptyTag) &&
           it->bytes.begin < run.source.begin && run.source.end < it->bytes.end;
  }
  std::vector<absl::string_view> stack, starts;
  for (; it != pieces.end() && it->bytes.begin < run.source.end; ++it) {
    if (it->kind == XmlPiece::kText) continue;
    if (it->bytes.begin < run.source.begin || it->bytes.end > run.source.end) return false;
    if (it->kind == XmlPiece::kStartTag) {
      stack.push_back(it->name);
      starts.push_back(xml.substr(it->bytes.begin, it->bytes.end - it->bytes.begin));
    } else if (it->kind == XmlPiece::kEndTag && !stack.empty() && stack.back() == it->name) {
      stack.pop_back();
    } else {
      return false;
    }
  }
  if (!stack.empty() || starts.size() != run.inlines.size()) return false;
  std::vector<absl::string_view> opens;
  for (const InlineSpan& in : run.inlines) {
    const std::vector<XmlPiece> open = ScanXml(in.open);
    const std::vector<XmlPiece> close = ScanXml(in.close);
    if (open.size() != 1 || open[0].kind != XmlPiece::kStartTag || close.size() != 1 ||
        close[0].kind != XmlPiece::kEndTag || open[0].name != close[0].name ||
        open[0].name.empty()) {
      return false;
    }
    opens.push_back(in.open);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(opens.begin(), opens.end());
  return starts == opens;
}

class XhtmlPart : public PartRuns {
 public:
  XhtmlPart(HtmlDocument document, const std::vector<HtmlDocument::Run>& left)
      : document_(std::move(document)) {
    for (const HtmlDocument::Run& run : document_.runs()) {
      runs_.push_back({run.text, run.inlines, run.kept});
    }
    for (const HtmlDocument::Run& run : left) kept_.push_back(run.text);
  }

  // An outermost inline over all the words of its run goes over all the words of the
  // translation, wherever the alignment put it: a link that is all of a navigation entry
  // (<li> <a>...</a> </li>, where EPUB allows no text outside the link) stays all of it.
  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    std::vector<TranslatedRun> adjusted(translations.begin(), translations.end());
    for (size_t r = 0; r < adjusted.size() && r < runs_.size(); ++r) {
      const Segment words = Words(runs_[r].text);
      const Segment target = Words(adjusted[r].text);
      for (size_t i = 0; i < runs_[r].inlines.size() && i < adjusted[r].inlines.size(); ++i) {
        const InlineSpan& in = runs_[r].inlines[i];
        if (in.parent >= 0 || words.begin == words.end || in.range.begin > words.begin ||
            in.range.end < words.end) {
          continue;
        }
        Segment& placed = adjusted[r].inlines[i];
        placed.begin = std::min(placed.begin, target.begin);
        placed.end = std::max(placed.end, target.end);
      }
    }
    return document_.Render(adjusted);
  }

 private:
  // The bytes of `text` from its first character that is not a space to its last.
  static Segment Words(absl::string_view text) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(text);
    const size_t begin = stripped.empty() ? 0 : stripped.data() - text.data();
    return {begin, begin + stripped.size()};
  }

  HtmlDocument document_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<pugi::xml_document>> ParseEpubXml(absl::string_view name,
                                                                 absl::string_view bytes) {
  // XML has no NUL, and pugixml would stop reading at one and leave the rest unread.
  const size_t nul = bytes.find('\0');
  if (nul != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("part ", name, ": a NUL byte (at byte ", nul, ") is not XML"));
  }
  // An XML declaration (`<?xml`, in any case, as pugixml takes it) is quoted pseudo-attributes up
  // to the first `?>`, and comes first. pugixml reads one whose quotes do not close there
  // (`version="2.0?>...`) as running on to a later quote, and takes a later one at the top level
  // too; over what it reads as a declaration, an HTML parser reads text and tags (`<?` ends at the
  // first `>` there), and the two would disagree on the part's words.
  const std::vector<XmlPiece> pieces = ScanXml(bytes);
  const size_t start = absl::StartsWith(bytes, "\xEF\xBB\xBF") ? 3 : 0;
  for (const XmlPiece& piece : pieces) {
    if (piece.kind != XmlPiece::kProcessingInstruction) continue;
    const absl::string_view pi =
        bytes.substr(piece.bytes.begin, piece.bytes.end - piece.bytes.begin);
    if (pi.size() < 5 || !absl::EqualsIgnoreCase(pi.substr(2, 3), "xml") ||
        (pi.size() > 5 && ContinuesXmlName(pi[5]))) {
      continue;
    }
    if (piece.bytes.begin != start) {
      return absl::InvalidArgumentError(
          absl::StrCat("part ", name, ": an XML declaration at byte ", piece.bytes.begin,
                       ", after the part's start (XML allows one, first)"));
    }
    char quote = 0;
    bool well_formed = absl::EndsWith(pi, "?>");
    for (size_t i = 5; well_formed && i + 2 < pi.size(); ++i) {
      const char c = pi[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '<' || c == '>') {
        well_formed = false;
      }
    }
    if (!well_formed || quote != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "part ", name, ": malformed XML declaration (its quotes or its ?> do not close)"));
    }
  }
  std::string blanked;
  for (const XmlPiece& piece : pieces) {
    if (piece.kind == XmlPiece::kStartTag || piece.kind == XmlPiece::kEmptyTag) break;
    if (piece.kind != XmlPiece::kDoctype) continue;
    const absl::string_view doctype =
        bytes.substr(piece.bytes.begin, piece.bytes.end - piece.bytes.begin);
    if (!absl::StartsWith(doctype, "<!DOCTYPE")) break;  // Malformed: the parser says so.
    // '[' outside quotes opens an internal subset.
    char quote = 0;
    for (char c : doctype) {
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '[') {
        return absl::InvalidArgumentError(absl::StrCat(
            "part ", name,
            ": a DOCTYPE with an internal subset is not accepted: entities are never expanded"));
      }
    }
    blanked = std::string(bytes);
    std::fill(blanked.begin() + piece.bytes.begin, blanked.begin() + piece.bytes.end, ' ');
    break;
  }
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document =
      ParseXmlPart(name, blanked.empty() ? bytes : absl::string_view(blanked));
  if (!document.ok()) return document;
  // The parts are changed in place by their markup as ScanXml finds it: the parser must have
  // read the same elements (it reads some malformed markup otherwise: an XML declaration whose
  // quotes run past its "?>").
  size_t next = 0;
  bool same = true;
  auto next_tag = [&]() -> const XmlPiece* {
    while (next < pieces.size() && pieces[next].kind != XmlPiece::kStartTag &&
           pieces[next].kind != XmlPiece::kEmptyTag) {
      ++next;
    }
    return next < pieces.size() ? &pieces[next++] : nullptr;
  };
  pugi::xml_node node = (*document)->first_child();
  while (node && same) {
    if (node.type() == pugi::node_element) {
      const XmlPiece* tag = next_tag();
      same = tag != nullptr && tag->name == node.name();
    }
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling()) node = node.parent();
    if (node) node = node.next_sibling();
  }
  if (!same || next_tag() != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "part ", name, ": malformed XML: markup the parser reads otherwise than its tags say"));
  }
  return document;
}

std::vector<XmlEdit> LanguageEdits(absl::string_view xml, const std::vector<XmlPiece>& pieces,
                                   const std::vector<std::string>& sources,
                                   absl::string_view target, bool root_too) {
  std::vector<XmlEdit> edits;
  if (target.empty()) return edits;
  bool root = true;
  for (const XmlPiece& piece : pieces) {
    if (piece.kind != XmlPiece::kStartTag && piece.kind != XmlPiece::kEmptyTag) continue;
    for (const XmlAttribute& a : TagAttributes(xml, piece)) {
      if (a.name != "lang" && a.name != "xml:lang") continue;
      const absl::string_view value = xml.substr(a.value.begin, a.value.end - a.value.begin);
      const bool source = std::any_of(sources.begin(), sources.end(), [&](const std::string& s) {
        return absl::EqualsIgnoreCase(s, value);
      });
      if ((root && root_too) || source) edits.push_back({a.value, XmlEscape(target)});
    }
    root = false;
  }
  return edits;
}

absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartXhtml(absl::string_view name,
                                                         absl::string_view bytes,
                                                         absl::string_view source_language,
                                                         absl::string_view target_language,
                                                         const HtmlOptions& options) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> xml = ParseEpubXml(name, bytes);
  if (!xml.ok()) return xml.status();
  std::string prepared = PrepareForHtml(bytes, source_language, target_language);
  const std::vector<XmlPiece> pieces = ScanXml(prepared);
  absl::StatusOr<HtmlDocument> document = HtmlDocument::Parse(prepared, options);
  if (!document.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("part ", name, ": ", document.status().message()));
  }
  const std::vector<HtmlDocument::Run> left = document->LeaveAsWritten(
      [&](const HtmlDocument::Run& run) { return !KeepsXmlStructure(prepared, pieces, run); });
  return std::make_unique<XhtmlPart>(*std::move(document), left);
}

}  // namespace mtserve
