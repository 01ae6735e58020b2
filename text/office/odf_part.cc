#include "text/office/odf_part.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "text/office/xml_part.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

using SchemaKind = XmlInlineSchema::Kind;

// ODF's namespaces under their usual prefixes, as every producer writes them.
constexpr std::pair<const char*, const char*> kNamespaces[] = {
    {"office", "urn:oasis:names:tc:opendocument:xmlns:office:1.0"},
    {"style", "urn:oasis:names:tc:opendocument:xmlns:style:1.0"},
    {"text", "urn:oasis:names:tc:opendocument:xmlns:text:1.0"},
    {"table", "urn:oasis:names:tc:opendocument:xmlns:table:1.0"},
    {"draw", "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"},
    {"fo", "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"},
    {"meta", "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"},
    {"presentation", "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"},
    {"dr3d", "urn:oasis:names:tc:opendocument:xmlns:dr3d:1.0"},
    {"dc", "http://purl.org/dc/elements/1.1/"},
};

absl::Status PartError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("part ", name, ": ", what));
}

// The root's namespace declarations against kNamespaces: element names are matched by prefix.
absl::Status CheckNamespaces(absl::string_view name, const pugi::xml_node& root) {
  for (const pugi::xml_attribute& a : root.attributes()) {
    const absl::string_view attribute = a.name(), uri = a.value();
    if (attribute != "xmlns" && !absl::StartsWith(attribute, "xmlns:")) continue;
    const absl::string_view prefix =
        attribute == "xmlns" ? absl::string_view() : attribute.substr(6);
    for (const auto& [usual, usual_uri] : kNamespaces) {
      if ((prefix == usual) != (uri == usual_uri)) {
        return PartError(name, absl::StrCat("namespace prefix \"", prefix, "\" is bound to \"", uri,
                                            "\": OpenDocument's namespaces are read under their "
                                            "usual prefixes only (",
                                            usual, ": ", usual_uri, ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExpandOdf(const pugi::xml_node& element) {
  const absl::string_view name = element.name();
  if (name == "text:line-break") return std::string("\n");
  // text:s: text:c spaces (1 if absent or not a count).
  int count = 1;
  if (const pugi::xml_attribute c = element.attribute("text:c")) {
    if (!absl::SimpleAtoi(c.value(), &count) || count < 0) count = 1;
  }
  if (count > OdfPart::kMaxSpaces) {
    return absl::InvalidArgumentError(absl::StrCat("a text:s of ", count, " spaces is over the ",
                                                   OdfPart::kMaxSpaces, " accepted"));
  }
  return std::string(count, ' ');
}

const XmlInlineSchema& BodySchema() {
  static const XmlInlineSchema* const schema = [] {
    auto* s = new XmlInlineSchema;
    // A presentation's header and footer texts are declared once (presentation:footer-decl) and
    // shown on the slides that name them.
    for (const char* p :
         {"text:p", "text:h", "presentation:header-decl", "presentation:footer-decl"}) {
      s->elements[p] = SchemaKind::kParagraph;
    }
    for (const char* p : {"text:span", "text:a", "text:meta"}) s->elements[p] = SchemaKind::kSpan;
    for (const char* p : {"text:s", "text:line-break"}) s->elements[p] = SchemaKind::kExpand;
    for (const char* p : {"text:soft-page-break",
                          "text:bookmark",
                          "text:bookmark-start",
                          "text:bookmark-end",
                          "text:reference-mark",
                          "text:reference-mark-start",
                          "text:reference-mark-end",
                          "text:toc-mark",
                          "text:toc-mark-start",
                          "text:toc-mark-end",
                          "text:alphabetical-index-mark",
                          "text:alphabetical-index-mark-start",
                          "text:alphabetical-index-mark-end",
                          "text:user-index-mark",
                          "text:user-index-mark-start",
                          "text:user-index-mark-end",
                          "text:change",
                          "text:change-start",
                          "text:change-end",
                          "text:note",
                          "office:annotation-end",
                          "presentation:header",
                          "presentation:footer",
                          "presentation:date-time"}) {
      s->elements[p] = SchemaKind::kObject;
    }
    s->elements["text:tab"] = SchemaKind::kSeparator;
    for (const char* p : {"office:annotation", "text:tracked-changes"}) {
      s->elements[p] = SchemaKind::kKept;
    }
    for (const char* p : {"draw:", "dr3d:", "table:"}) s->prefixes[p] = SchemaKind::kObject;
    s->other = SchemaKind::kFixed;
    s->expand = ExpandOdf;
    s->collapse_whitespace = true;
    s->space_element = "text:s";
    s->space_count = "text:c";
    s->tab_element = "text:tab";
    s->line_break_element = "text:line-break";
    s->max_space_count = OdfPart::kMaxSpaces;
    return s;
  }();
  return *schema;
}

const XmlInlineSchema& MetaSchema() {
  static const XmlInlineSchema* const schema = [] {
    auto* s = new XmlInlineSchema;
    s->elements["dc:title"] = SchemaKind::kParagraph;
    s->other = SchemaKind::kFixed;
    return s;
  }();
  return *schema;
}

const XmlInlineSchema& SchemaOf(OdfPart::Kind kind) {
  return kind == OdfPart::Kind::kMeta ? MetaSchema() : BodySchema();
}

// The root element of a parsed part.
pugi::xml_node RootElement(const pugi::xml_document& document) {
  return document.find_child(
      [](const pugi::xml_node& n) { return n.type() == pugi::node_element; });
}

void Declare(pugi::xml_node root, const char* prefix) {
  const std::string attribute = absl::StrCat("xmlns:", prefix);
  if (root.attribute(attribute.c_str())) return;
  for (const auto& [usual, uri] : kNamespaces) {
    if (absl::string_view(usual) == prefix) root.append_attribute(attribute.c_str()) = uri;
  }
}

void SetAttribute(pugi::xml_node element, const char* name, const std::string& value) {
  pugi::xml_attribute a = element.attribute(name);
  if (!a) a = element.append_attribute(name);
  a.set_value(value.c_str());
}

// A style:text-properties's language attributes set to `language`, if it has a language (one of
// "none", say, no language, is left so) or `add`.
void SetTextProperties(pugi::xml_node properties, const OdfLanguage& language,
                       absl::string_view tag, bool add) {
  const pugi::xml_attribute current = properties.attribute("fo:language");
  if (!current && !add) return;
  if (current && (absl::string_view(current.value()) == "none" ||
                  absl::string_view(current.value()) == "zxx")) {
    return;
  }
  SetAttribute(properties, "fo:language", language.language);
  if (!language.country.empty()) {
    SetAttribute(properties, "fo:country", language.country);
  } else if (properties.attribute("fo:country")) {
    SetAttribute(properties, "fo:country", "none");
  }
  if (!language.script.empty()) {
    SetAttribute(properties, "fo:script", language.script);
  } else {
    properties.remove_attribute("fo:script");
  }
  if (properties.attribute("style:rfc-language-tag")) {
    SetAttribute(properties, "style:rfc-language-tag", std::string(tag));
  }
}

void SetStyleLanguages(pugi::xml_node root, OdfPart::Kind kind, const OdfLanguage& language,
                       absl::string_view tag) {
  bool any = false;
  for (pugi::xml_node node = root; node;) {
    if (node.type() == pugi::node_element) {
      const absl::string_view name = node.name();
      if (name == "style:text-properties") {
        any = true;
        SetTextProperties(node, language, tag, false);
      } else if (kind == OdfPart::Kind::kStyles && name == "style:default-style" &&
                 absl::string_view(node.attribute("style:family").value()) == "paragraph") {
        pugi::xml_node properties = node.child("style:text-properties");
        if (!properties) properties = node.append_child("style:text-properties");
        any = true;
        SetTextProperties(properties, language, tag, true);
      }
    }
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && node != root && !node.next_sibling()) node = node.parent();
    if (!node || node == root) break;
    node = node.next_sibling();
  }
  if (any) Declare(root, "fo");
}

void SetMetaLanguage(pugi::xml_node root, absl::string_view tag) {
  pugi::xml_node meta = root.child("office:meta");
  if (!meta) return;
  pugi::xml_node language = meta.child("dc:language");
  if (!language) {
    language = meta.append_child("dc:language");
    Declare(root, "dc");
  }
  while (language.first_child()) language.remove_child(language.first_child());
  language.append_child(pugi::node_pcdata).set_value(std::string(tag).c_str());
}

}  // namespace

OdfLanguage SplitLanguageTag(absl::string_view tag) {
  OdfLanguage out;
  const std::vector<absl::string_view> subtags = absl::StrSplit(tag, absl::ByAnyChar("-_"));
  auto alpha = [](absl::string_view s) {
    for (char c : s) {
      if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  auto digits = [](absl::string_view s) {
    for (char c : s) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  if (subtags.empty() || subtags[0].size() < 2 || subtags[0].size() > 8 || !alpha(subtags[0])) {
    return out;
  }
  out.language = absl::AsciiStrToLower(subtags[0]);
  size_t i = 1;
  if (i < subtags.size() && subtags[i].size() == 4 && alpha(subtags[i])) {
    out.script = absl::AsciiStrToLower(subtags[i]);
    out.script[0] = absl::ascii_toupper(static_cast<unsigned char>(out.script[0]));
    ++i;
  }
  if (i < subtags.size() && ((subtags[i].size() == 2 && alpha(subtags[i])) ||
                             (subtags[i].size() == 3 && digits(subtags[i])))) {
    out.country = absl::AsciiStrToUpper(subtags[i]);
  }
  return out;
}

absl::StatusOr<OdfPart> OdfPart::TakeApart(std::string name, std::string bytes, Kind kind,
                                           std::string target_language) {
  // Every later step (sentence splitting, tokenising, placing spans on character boundaries)
  // takes text to be UTF-8; pugixml does not check it.
  if (!IsValidUtf8(bytes)) return PartError(name, "not valid UTF-8");
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document = ParseXmlPart(name, bytes);
  if (!document.ok()) return document.status();
  if (absl::Status checked = CheckNamespaces(name, RootElement(**document)); !checked.ok()) {
    return checked;
  }
  absl::StatusOr<XmlInlineRuns> runs = XmlInlineRuns::Collect(name, **document, SchemaOf(kind));
  if (!runs.ok()) return runs.status();
  OdfPart part;
  part.name_ = std::move(name);
  part.bytes_ = std::move(bytes);
  part.kind_ = kind;
  part.target_language_ = std::move(target_language);
  part.runs_ = runs->runs();
  part.kept_ = runs->kept();
  return part;
}

std::string OdfPart::Render(absl::Span<const TranslatedRun> translations) const {
  // Parsed and collected again as TakeApart did (the same bytes: the same runs).
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document = ParseXmlPart(name_, bytes_);
  if (!document.ok()) return bytes_;
  absl::StatusOr<XmlInlineRuns> runs = XmlInlineRuns::Collect(name_, **document, SchemaOf(kind_));
  if (!runs.ok()) return bytes_;
  runs->Render(translations, SchemaOf(kind_));
  const OdfLanguage language = SplitLanguageTag(target_language_);
  if (!language.language.empty()) {
    const pugi::xml_node root = RootElement(**document);
    if (kind_ == Kind::kMeta) {
      SetMetaLanguage(root, target_language_);
    } else {
      SetStyleLanguages(root, kind_, language, target_language_);
    }
  }
  return WriteXmlPart(**document);
}

}  // namespace mtserve
