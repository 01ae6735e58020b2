#include "text/office/epub_package.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "text/office/epub_xhtml.h"
#include "text/office/xml_scan.h"

namespace mtserve {
namespace {

absl::Status PartError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("part ", name, ": ", what));
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The elements under `root` in document order, walked without recursion.
template <typename Fn>
void ForEachElement(const pugi::xml_node& root, Fn&& fn) {
  pugi::xml_node node = root.first_child();
  while (node) {
    if (node.type() == pugi::node_element) fn(node);
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling() && node != root) node = node.parent();
    if (!node || node == root) break;
    node = node.next_sibling();
  }
}

absl::string_view Local(const pugi::xml_node& node) { return LocalName(node.name()); }

// The bytes of a text or CDATA node of a document parsed from `bytes`, if pugixml says where it
// is.
std::optional<Segment> NodeBytes(absl::string_view bytes, const pugi::xml_node& node) {
  const ptrdiff_t offset = node.offset_debug();
  if (offset < 0 || static_cast<size_t>(offset) > bytes.size()) return std::nullopt;
  size_t begin = static_cast<size_t>(offset);
  if (node.type() == pugi::node_cdata) {
    if (begin >= 9 && bytes.substr(begin - 9, 9) == "<![CDATA[") begin -= 9;
    if (bytes.substr(begin, 9) != "<![CDATA[") return std::nullopt;
    const size_t end = bytes.find("]]>", begin);
    if (end == absl::string_view::npos) return std::nullopt;
    return Segment{begin, end + 3};
  }
  if (node.type() != pugi::node_pcdata) return std::nullopt;
  const size_t end = bytes.find('<', begin);
  return Segment{begin, end == absl::string_view::npos ? bytes.size() : end};
}

// A part's texts to translate (the OPF's titles, the NCX's labels): each the text of a text or
// CDATA node, found in the part's bytes and replaced there by its translation, escaped; the
// language edits made too; every other byte kept.
class XmlTextsPart : public PartRuns {
 public:
  XmlTextsPart(absl::string_view bytes, std::vector<XmlEdit> fixed)
      : bytes_(bytes), fixed_(std::move(fixed)) {}

  // The text of `node` (a text or CDATA node of the document parsed from the part's bytes), its
  // spaces at either end left out, as a run; if it has any other text.
  void AddRun(const pugi::xml_node& node) {
    const std::optional<Segment> bytes = NodeBytes(bytes_, node);
    if (!bytes.has_value()) return;
    Segment range = *bytes;
    if (node.type() == pugi::node_pcdata) {  // Spaces at the ends: as written in both.
      while (range.begin < range.end && IsSpace(bytes_[range.begin])) ++range.begin;
      while (range.end > range.begin && IsSpace(bytes_[range.end - 1])) --range.end;
    }
    const absl::string_view text = absl::StripAsciiWhitespace(node.value());
    if (text.empty() || range.begin == range.end) return;
    runs_.push_back({std::string(text), {}});
    ranges_.push_back(range);
  }

  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    std::vector<XmlEdit> edits = fixed_;
    for (size_t r = 0; r < ranges_.size() && r < translations.size(); ++r) {
      edits.push_back({ranges_[r], XmlEscape(translations[r].text)});
    }
    return ApplyEdits(bytes_, std::move(edits));
  }

 private:
  std::string bytes_;
  std::vector<XmlEdit> fixed_;
  std::vector<Segment> ranges_;  // Per run.
};

// `path` with "." and ".." segments resolved, or nullopt if it is absolute or climbs out of the
// archive.
std::optional<std::string> Normalize(absl::string_view path) {
  if (absl::StartsWith(path, "/")) return std::nullopt;
  std::vector<absl::string_view> segments;
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    if (segment == "." || segment.empty()) continue;
    if (segment == "..") {
      if (segments.empty()) return std::nullopt;
      segments.pop_back();
    } else {
      segments.push_back(segment);
    }
  }
  return absl::StrJoin(segments, "/");
}

// `href`'s %XX escapes decoded.
std::string PercentDecode(absl::string_view href) {
  auto digit = [](char c) { return absl::ascii_isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i < href.size(); ++i) {
    if (href[i] == '%' && i + 2 < href.size() && absl::ascii_isxdigit(href[i + 1]) &&
        absl::ascii_isxdigit(href[i + 2])) {
      out += static_cast<char>(digit(href[i + 1]) * 16 + digit(href[i + 2]));
      i += 2;
    } else {
      out += href[i];
    }
  }
  return out;
}

// Whether `href` is an absolute URL (a resource outside the package, which EPUB 3 allows for
// audio and video).
bool IsRemote(absl::string_view href) {
  const size_t colon = href.find(':');
  return colon != absl::string_view::npos &&
         href.substr(0, colon).find_first_of("/?#") == absl::string_view::npos;
}

bool IsMediaType(absl::string_view type, absl::string_view wanted) {
  const absl::string_view bare = absl::StripAsciiWhitespace(type.substr(0, type.find(';')));
  return absl::EqualsIgnoreCase(bare, wanted);
}

}  // namespace

absl::StatusOr<std::string> PackageDocumentName(absl::string_view container) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> xml = ParseEpubXml(kEpubContainer, container);
  if (!xml.ok()) return xml.status();
  std::optional<std::string> found;
  ForEachElement(**xml, [&](const pugi::xml_node& node) {
    if (found.has_value() || Local(node) != "rootfile") return;
    const absl::string_view type = node.attribute("media-type").value();
    if (type.empty() || IsMediaType(type, "application/oebps-package+xml")) {
      found = node.attribute("full-path").value();
    }
  });
  if (!found.has_value() || found->empty()) {
    return PartError(kEpubContainer, "no rootfile full-path names the package document");
  }
  const std::optional<std::string> name = Normalize(*found);
  if (!name.has_value() || name->empty()) {
    return PartError(kEpubContainer,
                     absl::StrCat("rootfile full-path \"", *found, "\" is outside the archive"));
  }
  return *name;
}

absl::StatusOr<EpubPackageDocument> TakeApartPackageDocument(absl::string_view name,
                                                             absl::string_view bytes,
                                                             absl::string_view target_language) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> opf = ParseEpubXml(name, bytes);
  if (!opf.ok()) return opf.status();
  const pugi::xml_node root = (*opf)->document_element();
  if (Local(root) != "package") {
    return PartError(name, absl::StrCat("the root element is <", root.name(),
                                        ">, not a package document's <package>"));
  }
  const std::string base(name.substr(0, name.rfind('/') + 1));

  struct Item {
    std::string id, name, media_type;
  };
  std::vector<pugi::xml_node> texts, languages;
  std::vector<Item> items;
  std::vector<std::string> spine;
  std::string toc;
  absl::Status error;
  ForEachElement(root, [&](const pugi::xml_node& node) {
    const absl::string_view local = Local(node);
    const absl::string_view parent = Local(node.parent());
    if (parent == "metadata" && (local == "title" || local == "description")) {
      texts.push_back(node);
    } else if (parent == "metadata" && local == "language") {
      languages.push_back(node);
    } else if (parent == "manifest" && local == "item" && error.ok()) {
      const std::string href = node.attribute("href").value();
      if (IsRemote(href)) return;
      const std::string path = PercentDecode(href.substr(0, href.find_first_of("?#")));
      const std::optional<std::string> entry = Normalize(base + path);
      if (!entry.has_value() || entry->empty() || absl::StartsWith(path, "/")) {
        error = PartError(name, absl::StrCat("manifest item \"", node.attribute("id").value(),
                                             "\" (href \"", href, "\") is outside the archive"));
        return;
      }
      items.push_back({node.attribute("id").value(), *entry, node.attribute("media-type").value()});
    } else if (local == "spine" && parent == "package") {
      toc = node.attribute("toc").value();
    } else if (parent == "spine" && local == "itemref") {
      spine.push_back(node.attribute("idref").value());
    }
  });
  if (!error.ok()) return error;

  EpubPackageDocument document;
  if (!languages.empty()) {
    document.source_language = std::string(absl::StripAsciiWhitespace(languages[0].text().get()));
  }
  std::vector<std::string> sources;
  if (!document.source_language.empty()) sources.push_back(document.source_language);
  // dc:language equal to the book's (the first) and lang attributes equal to it: the target.
  std::vector<XmlEdit> fixed = LanguageEdits(bytes, ScanXml(bytes), sources, target_language,
                                             /*root_too=*/false);
  if (!target_language.empty()) {
    for (const pugi::xml_node& language : languages) {
      for (const pugi::xml_node& child : language.children()) {
        const std::optional<Segment> range = NodeBytes(bytes, child);
        const absl::string_view value = absl::StripAsciiWhitespace(child.value());
        if (!range.has_value() || value.empty() ||
            !absl::EqualsIgnoreCase(value, document.source_language)) {
          continue;
        }
        fixed.push_back({*range, XmlEscape(target_language)});
      }
    }
  }
  auto runs = std::make_unique<XmlTextsPart>(bytes, std::move(fixed));
  for (const pugi::xml_node& node : texts) {
    for (const pugi::xml_node& child : node.children()) runs->AddRun(child);
  }
  document.runs = std::move(runs);

  // The NCX: the spine's toc, else the manifest's first.
  const Item* ncx = nullptr;
  for (const Item& item : items) {
    if (!IsMediaType(item.media_type, "application/x-dtbncx+xml")) continue;
    if (ncx == nullptr || (item.id == toc && ncx->id != toc)) ncx = &item;
  }
  absl::flat_hash_set<std::string> taken = {std::string(name)};
  if (ncx != nullptr && taken.insert(ncx->name).second) {
    document.ncx.push_back({ncx->id, ncx->name});
  }
  // The XHTML documents: the spine's in order, then the others.
  absl::flat_hash_map<absl::string_view, const Item*> by_id;
  for (const Item& item : items) {
    if (IsMediaType(item.media_type, "application/xhtml+xml")) by_id.emplace(item.id, &item);
  }
  auto add = [&](const Item& item) {
    if (taken.insert(item.name).second) document.xhtml.push_back({item.id, item.name});
  };
  for (const std::string& idref : spine) {
    const auto found = by_id.find(idref);
    if (found != by_id.end()) add(*found->second);
  }
  for (const Item& item : items) {
    if (IsMediaType(item.media_type, "application/xhtml+xml")) add(item);
  }
  return document;
}

absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartNcx(absl::string_view name,
                                                       absl::string_view bytes,
                                                       absl::string_view source_language,
                                                       absl::string_view target_language) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> xml = ParseEpubXml(name, bytes);
  if (!xml.ok()) return xml.status();
  std::vector<std::string> sources;
  if (!source_language.empty()) sources.emplace_back(source_language);
  auto part = std::make_unique<XmlTextsPart>(
      bytes, LanguageEdits(bytes, ScanXml(bytes), sources, target_language, /*root_too=*/true));
  ForEachElement(**xml, [&](const pugi::xml_node& node) {
    if (Local(node) != "text") return;
    const absl::string_view parent = Local(node.parent());
    if (parent != "navLabel" && parent != "docTitle") return;
    for (const pugi::xml_node& child : node.children()) part->AddRun(child);
  });
  return part;
}

}  // namespace mtserve
