#include "text/office/xml_part.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

absl::Status PartError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("part ", name, ": ", what));
}

// How deep `node`'s elements nest, walked without recursion.
int Depth(const pugi::xml_node& root) {
  int depth = 0, deepest = 0;
  pugi::xml_node node = root.first_child();
  while (node) {
    if (node.type() == pugi::node_element) deepest = std::max(deepest, depth + 1);
    if (node.first_child()) {
      node = node.first_child();
      ++depth;
      continue;
    }
    while (node && !node.next_sibling() && node != root) {
      node = node.parent();
      --depth;
    }
    if (!node || node == root) break;
    node = node.next_sibling();
  }
  return deepest;
}

class StringWriter : public pugi::xml_writer {
 public:
  explicit StringWriter(std::string& out) : out_(out) {}
  void write(const void* data, size_t size) override {
    out_.append(static_cast<const char*>(data), size);
  }

 private:
  std::string& out_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<pugi::xml_document>> ParseXmlPart(absl::string_view name,
                                                                 absl::string_view bytes,
                                                                 const XmlLimits& limits) {
  if (absl::StartsWith(bytes, "\xFF\xFE") || absl::StartsWith(bytes, "\xFE\xFF")) {
    return PartError(name, "UTF-16 is not accepted: parts must be UTF-8");
  }
  const int64_t markup = std::count(bytes.begin(), bytes.end(), '<');
  if (markup > limits.max_markup) {
    return PartError(name, absl::StrCat("more than ", limits.max_markup,
                                        " elements, comments and other markup (the limit on one "
                                        "part's markup)"));
  }
  auto document = std::make_unique<pugi::xml_document>();
  // Everything kept (declaration, processing instructions, comments, whitespace-only text: the
  // space between two spans is a word boundary); the DOCTYPE parsed only to be refused. pugixml
  // never expands an entity it was not built with (only XML's five and character references).
  // Line ends are kept as they are (no parse_eol): pugixml writes a CR in text as itself, so a
  // CR read from "&#13;" and then turned into a line feed would not come back as it was read.
  constexpr unsigned kOptions = (pugi::parse_full | pugi::parse_ws_pcdata) & ~pugi::parse_eol;
  const pugi::xml_parse_result result =
      document->load_buffer(bytes.data(), bytes.size(), kOptions, pugi::encoding_utf8);
  if (!result) {
    return PartError(
        name, absl::StrCat("malformed XML at byte ", result.offset, ": ", result.description()));
  }
  for (const pugi::xml_node& node : document->children()) {
    if (node.type() == pugi::node_doctype) {
      return PartError(name, "a DOCTYPE is not accepted: entities are never expanded");
    }
    if (node.type() == pugi::node_declaration) {
      const pugi::xml_attribute encoding = node.attribute("encoding");
      if (encoding && !absl::EqualsIgnoreCase(encoding.value(), "utf-8")) {
        return PartError(name, absl::StrCat("encoding \"", encoding.value(),
                                            "\" is not accepted: parts must be UTF-8"));
      }
    }
  }
  if (Depth(*document) > limits.max_depth) {
    return PartError(name, absl::StrCat("elements nest deeper than ", limits.max_depth));
  }
  return document;
}

std::string WriteXmlPart(const pugi::xml_document& document) {
  std::string out;
  StringWriter writer(out);
  document.save(writer, "", pugi::format_raw | pugi::format_no_declaration, pugi::encoding_utf8);
  return out;
}

}  // namespace mtserve
