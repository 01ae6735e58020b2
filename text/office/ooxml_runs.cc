#include "text/office/ooxml_runs.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "text/inline_spans.h"
#include "text/office/xml_part.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

constexpr absl::string_view kWordNamespaces[] = {
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main"};
constexpr absl::string_view kDrawingNamespaces[] = {
    "http://schemas.openxmlformats.org/drawingml/2006/main",
    "http://purl.oclc.org/ooxml/drawingml/main"};

// The qualified names of a part's elements, by the prefix its root binds to the dialect's
// namespace.
struct Names {
  OoxmlDialect dialect;
  bool found = false;
  std::string p, r, rpr, t, ppr, end_para_rpr, tab, br, cr, fld_char, fld_char_type, proof_err,
      last_page_break, lang, val, def_rpr;
  // Tracked changes: what an insertion or a move's destination holds is text as accepted; a
  // deletion, a move's source and the moves' range marks are not.
  std::vector<std::string> inserted, deleted;
  std::vector<std::string> wrappers, wrapper_properties;

  Names(const pugi::xml_document& document, OoxmlDialect d) : dialect(d) {
    const pugi::xml_node root = document.document_element();
    const bool word = dialect == OoxmlDialect::kWordprocessing;
    std::string prefix;
    for (const pugi::xml_attribute& a : root.attributes()) {
      const absl::string_view name = a.name();
      if (name != "xmlns" && !absl::StartsWith(name, "xmlns:")) continue;
      const absl::string_view value = a.value();
      const bool match =
          word ? std::find(std::begin(kWordNamespaces), std::end(kWordNamespaces), value) !=
                     std::end(kWordNamespaces)
               : std::find(std::begin(kDrawingNamespaces), std::end(kDrawingNamespaces), value) !=
                     std::end(kDrawingNamespaces);
      if (!match) continue;
      found = true;
      prefix = name == "xmlns" ? "" : absl::StrCat(name.substr(6), ":");
      break;
    }
    auto q = [&](absl::string_view local) { return absl::StrCat(prefix, local); };
    p = q("p");
    r = q("r");
    rpr = q("rPr");
    t = q("t");
    ppr = q("pPr");
    br = q("br");
    if (word) {
      // Elements around runs that are not formatting: a link, a bidirectional embedding or
      // override, a smart tag, custom XML; their properties (w:smartTagPr, w:customXmlPr) are
      // their first child.
      wrappers = {q("hyperlink"), q("dir"), q("bdo"), q("smartTag"), q("customXml")};
      wrapper_properties = {q("smartTagPr"), q("customXmlPr")};
      tab = q("tab");
      cr = q("cr");
      fld_char = q("fldChar");
      fld_char_type = q("fldCharType");
      proof_err = q("proofErr");
      last_page_break = q("lastRenderedPageBreak");
      lang = q("lang");
      val = q("val");
      inserted = {q("ins"), q("moveTo")};
      deleted = {q("del"),
                 q("moveFrom"),
                 q("moveFromRangeStart"),
                 q("moveFromRangeEnd"),
                 q("moveToRangeStart"),
                 q("moveToRangeEnd")};
    } else {
      end_para_rpr = q("endParaRPr");
      def_rpr = q("defRPr");
    }
  }
  bool word() const { return dialect == OoxmlDialect::kWordprocessing; }
};

bool Is(const pugi::xml_node& node, const std::string& name) {
  return !name.empty() && node.type() == pugi::node_element && name == node.name();
}

bool IsAny(const pugi::xml_node& node, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& name) { return Is(node, name); });
}

absl::string_view LocalName(absl::string_view name) {
  const size_t colon = name.find(':');
  return colon == absl::string_view::npos ? name : name.substr(colon + 1);
}

// Calls `visit` on each node under `root` (not `root`) in document order, without recursion,
// not entering the subtrees for which `enter` is false.
void ForEachDescendant(const pugi::xml_node& root,
                       const std::function<bool(const pugi::xml_node&)>& visit) {
  pugi::xml_node node = root.first_child();
  while (node) {
    if (visit(node) && node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling() && node != root) node = node.parent();
    if (!node || node == root) break;
    node = node.next_sibling();
  }
}

// Characters XML 1.0 cannot hold (C0 controls but tab, line feed and carriage return) left out.
std::string XmlCharacters(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
  }
  return out;
}

// The text of a text element (w:t, a:t): its character data, all of it, less what XML cannot
// hold (a lenient parse lets C0 controls through; they could not be written back); nullopt if it
// holds an element (which no writer puts there: it is then kept as written).
std::optional<std::string> TextOf(const pugi::xml_node& t) {
  std::string text;
  for (const pugi::xml_node& c : t.children()) {
    if (c.type() == pugi::node_element) return std::nullopt;
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) text += c.value();
  }
  return XmlCharacters(text);
}

// The text a reader sees in `node` (the character data of its elements named t in any namespace:
// w:t, a:t, m:t), not counting paragraphs nested inside (a text box's, translated on their own).
std::string VisibleText(const pugi::xml_node& node, const Names& names) {
  std::string text;
  auto add = [&](const pugi::xml_node& n) {
    if (Is(n, names.p)) return false;
    if (n.type() == pugi::node_element && LocalName(n.name()) == "t") {
      text += TextOf(n).value_or("");
      return false;
    }
    return true;
  };
  if (Is(node, names.p) || !add(node)) return text;
  ForEachDescendant(node, add);
  return text;
}

// How many complex fields begin and end in `node` (outside nested paragraphs).
std::pair<int, int> FieldMarks(const pugi::xml_node& node, const Names& names) {
  std::pair<int, int> marks{0, 0};
  if (!names.word()) return marks;
  auto count = [&](const pugi::xml_node& n) {
    if (Is(n, names.p)) return false;
    if (Is(n, names.fld_char)) {
      const absl::string_view type = n.attribute(names.fld_char_type.c_str()).value();
      if (type == "begin") ++marks.first;
      if (type == "end") ++marks.second;
    }
    return true;
  };
  if (count(node)) ForEachDescendant(node, count);
  return marks;
}

bool IsBlank(absl::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); });
}

std::string OuterXml(const pugi::xml_node& node) {
  std::ostringstream out;
  node.print(out, "", pugi::format_raw);
  return out.str();
}

// Run properties as a key equal for equal formatting: attributes and children sorted, what is
// not formatting (language and proofing state) left out; empty properties (`top`) as none. Below
// `depth` levels (real properties nest three or four) a node is its XML as written, so that the
// recursion stays shallow.
std::string Canonical(const pugi::xml_node& node, const Names& names, int depth, bool top = false) {
  if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
    return absl::StrCat("\"", node.value(), "\"");
  }
  if (node.type() != pugi::node_element) return "";
  if (depth <= 0) return OuterXml(node);
  std::vector<std::string> attributes;
  for (const pugi::xml_attribute& a : node.attributes()) {
    const absl::string_view name = a.name();
    if (!names.word() && (name == "lang" || name == "altLang" || name == "dirty" || name == "err" ||
                          name == "smtClean" || name == "smtId" || name == "bmk")) {
      continue;
    }
    attributes.push_back(absl::StrCat(name, "=", a.value()));
  }
  std::sort(attributes.begin(), attributes.end());
  std::vector<std::string> children;
  for (const pugi::xml_node& child : node.children()) {
    if (Is(child, names.lang)) continue;
    if (child.type() == pugi::node_pcdata && IsBlank(child.value())) continue;
    children.push_back(Canonical(child, names, depth - 1));
  }
  if (top && attributes.empty() && children.empty()) return "";  // As no properties at all.
  std::sort(children.begin(), children.end());
  return absl::StrCat("<", node.name(), " ", absl::StrJoin(attributes, " "), ">",
                      absl::StrJoin(children, ""), "</>");
}

// A paragraph's content in order, before it is made into spans.
struct Item {
  enum Type { kText, kObject, kFixed, kOpen, kClose };
  Type type = kText;
  std::string text;                   // kText, kFixed.
  std::string key;                    // kText: its properties, canonical.
  pugi::xml_node rpr;                 // kText, kObject in a run: the run's properties.
  pugi::xml_node run;                 // kObject in a run: the run.
  std::vector<pugi::xml_node> nodes;  // kObject, kFixed: the nodes written back as they are;
                                      // kOpen: the wrapper.
  bool separator = false;             // kObject: a tab or a line break.

  static Item Of(Type type, pugi::xml_node node = {}, std::string text = "") {
    Item item;
    item.type = type;
    if (node) item.nodes.push_back(node);
    item.text = std::move(text);
    return item;
  }
};

enum class SpanKind { kContainer, kFormat, kObject, kFixed };

// What a span of a paragraph's run writes back.
struct SpanData {
  SpanKind kind = SpanKind::kObject;
  pugi::xml_node rpr;                 // kFormat; kObject in a run.
  pugi::xml_node run;                 // kObject in a run: its run, whose shell is written again.
  std::vector<pugi::xml_node> nodes;  // kContainer: the wrapper; kObject, kFixed: as they are.
  bool strip_space = false;           // A separator whose space before it the text gained.

  static SpanData Of(SpanKind kind, std::vector<pugi::xml_node> nodes = {}, pugi::xml_node rpr = {},
                     pugi::xml_node run = {}) {
    SpanData data;
    data.kind = kind;
    data.nodes = std::move(nodes);
    data.rpr = rpr;
    data.run = run;
    return data;
  }
};

struct Paragraph {
  pugi::xml_node node;
  bool translate = false;
  PartRuns::Run run;
  std::vector<SpanData> data;  // One per span of run.inlines.
  pugi::xml_node base_rpr;
  std::vector<pugi::xml_node> content;  // What the rendering replaces.
  pugi::xml_node anchor;                // Written before: a:endParaRPr, or none (at the end).
};

class Extractor {
 public:
  explicit Extractor(const Names& names) : names_(names) {}

  Paragraph Extract(const pugi::xml_node& p) {
    Paragraph out;
    out.node = p;
    for (const pugi::xml_node& child : p.children()) {
      if (Is(child, names_.ppr)) continue;
      if (Is(child, names_.end_para_rpr)) {
        out.anchor = child;
        break;
      }
      out.content.push_back(child);
    }
    std::vector<Item> items;
    Walk(p, /*top=*/true, items);
    Build(items, out);
    return out;
  }

 private:
  // The content of `container` (the paragraph or a wrapper: a hyperlink...) as items.
  void Walk(const pugi::xml_node& container, bool top, std::vector<Item>& items) {
    const bool wrapper = IsAny(container, names_.wrappers);
    Item group = Item::Of(Item::kFixed);
    auto flush = [&] {
      if (!group.nodes.empty()) items.push_back(std::move(group));
      group = Item::Of(Item::kFixed);
    };
    for (const pugi::xml_node& child : container.children()) {
      if (top && Is(child, names_.ppr)) continue;
      if (wrapper && IsAny(child, names_.wrapper_properties)) continue;  // Copied with it.
      if (top && Is(child, names_.end_para_rpr)) break;  // What follows it stays after it.
      // Tracked changes as accepted (inside a field's result they stay as they are, with it).
      if (field_depth_ == 0 && IsAny(child, names_.deleted)) continue;
      if (IsAny(child, names_.inserted) && depth_ < kMaxWrappers) {
        flush();
        ++depth_;
        Walk(child, /*top=*/false, items);  // Its content as if it had always been there.
        --depth_;
        continue;
      }
      const auto [begins, ends] = FieldMarks(child, names_);
      if (field_depth_ > 0 || begins > 0) {
        // A complex field's runs, its instructions and its result, kept as they are.
        group.nodes.push_back(child);
        group.text += VisibleText(child, names_);
        field_depth_ = std::max(0, field_depth_ + begins - ends);
        if (field_depth_ == 0) flush();
        continue;
      }
      if (child.type() != pugi::node_element) {
        // Space between elements is dropped; anything else (a comment) kept where it stands.
        if (child.type() == pugi::node_pcdata && IsBlank(child.value())) continue;
        items.push_back(Item::Of(Item::kObject, child));
        continue;
      }
      if (Is(child, names_.proof_err)) continue;
      if (Is(child, names_.r)) {
        Run(child, items);
      } else if (IsAny(child, names_.wrappers) && depth_ < kMaxWrappers) {
        ++depth_;
        items.push_back(Item::Of(Item::kOpen, child));
        Walk(child, /*top=*/false, items);
        flush();
        items.push_back(Item::Of(Item::kClose));
        --depth_;
      } else if (Is(child, names_.br)) {  // DrawingML's line break, between runs.
        Item item = Item::Of(Item::kObject, child);
        item.separator = true;
        items.push_back(std::move(item));
      } else {
        std::string text = VisibleText(child, names_);
        if (IsBlank(text)) {
          items.push_back(Item::Of(Item::kObject, child));
        } else {
          items.push_back(Item::Of(Item::kFixed, child, std::move(text)));
        }
      }
    }
    flush();
  }

  void Run(const pugi::xml_node& r, std::vector<Item>& items) {
    const pugi::xml_node rpr = r.child(names_.rpr.c_str());
    const std::string key = rpr ? Canonical(rpr, names_, /*depth=*/16, /*top=*/true) : "";
    for (const pugi::xml_node& c : r.children()) {
      if (c.type() != pugi::node_element) {
        if (c.type() == pugi::node_pcdata && IsBlank(c.value())) continue;
      } else if (Is(c, names_.rpr) || Is(c, names_.last_page_break)) {
        continue;
      } else if (Is(c, names_.t) && TextOf(c).has_value()) {
        std::string text = *TextOf(c);
        if (text.empty()) continue;
        Item item = Item::Of(Item::kText, {}, std::move(text));
        item.key = key;
        item.rpr = rpr;
        items.push_back(std::move(item));
        continue;
      }
      Item item = Item::Of(Item::kObject, c);
      item.rpr = rpr;
      item.run = r;
      item.separator = Is(c, names_.tab) || Is(c, names_.br) || Is(c, names_.cr);
      items.push_back(std::move(item));
    }
  }

  // The items as the paragraph's text and spans.
  void Build(const std::vector<Item>& items, Paragraph& out) {
    // The base: the properties covering most characters (the first of equal ones).
    absl::flat_hash_map<std::string, size_t> chars;
    std::string base;
    size_t most = 0;
    for (const Item& item : items) {
      if (item.type != Item::kText) continue;
      const size_t n = chars[item.key] += item.text.size();
      if (n > most) {
        most = n;
        base = item.key;
      }
    }
    for (const Item& item : items) {
      if (item.type == Item::kText && item.key == base) {
        out.base_rpr = item.rpr;
        break;
      }
    }
    std::string& text = out.run.text;
    std::vector<InlineSpan>& spans = out.run.inlines;
    std::vector<int> containers;
    int format = -1;
    const std::string* format_key = nullptr;
    size_t format_end = 0;
    std::vector<int> pending;  // Objects after the open format span's last text.
    auto add = [&](Segment range, std::string open, std::string close, SpanData data) {
      spans.push_back(
          {range, std::move(open), std::move(close), containers.empty() ? -1 : containers.back()});
      out.data.push_back(std::move(data));
      return static_cast<int>(spans.size()) - 1;
    };
    auto close_format = [&] {
      if (format >= 0) spans[format].range.end = format_end;
      format = -1;
      pending.clear();
    };
    bool translatable = false;
    for (const Item& item : items) {
      switch (item.type) {
        case Item::kText:
          translatable = translatable || !IsBlank(item.text);
          if (item.key == base) {
            close_format();
          } else if (format >= 0 && *format_key == item.key) {
            for (int o : pending) spans[o].parent = format;
            pending.clear();
          } else {
            close_format();
            format = add({text.size(), text.size()}, "<rPr>", "</rPr>",
                         SpanData::Of(SpanKind::kFormat, {}, item.rpr));
            format_key = &item.key;
          }
          text += item.text;
          format_end = text.size();
          break;
        case Item::kObject: {
          SpanData data = SpanData::Of(SpanKind::kObject, item.nodes, item.rpr, item.run);
          if (item.separator && !text.empty() &&
              !absl::ascii_isspace(static_cast<unsigned char>(text.back()))) {
            text += ' ';
            data.strip_space = true;
          }
          const int span =
              add({text.size(), text.size()}, OuterXml(item.nodes[0]), "", std::move(data));
          if (format >= 0) pending.push_back(span);
          break;
        }
        case Item::kFixed: {
          close_format();
          std::string xml;
          for (const pugi::xml_node& n : item.nodes) xml += OuterXml(n);
          const int span = add({text.size(), text.size() + item.text.size()}, std::move(xml), "",
                               SpanData::Of(SpanKind::kFixed, item.nodes));
          spans[span].fixed = !item.text.empty();
          text += item.text;
          break;
        }
        case Item::kOpen:
          close_format();
          containers.push_back(add({text.size(), text.size()}, "<link>", "</link>",
                                   SpanData::Of(SpanKind::kContainer, item.nodes)));
          break;
        case Item::kClose:
          close_format();
          if (!containers.empty()) {
            spans[containers.back()].range.end = text.size();
            containers.pop_back();
          }
          break;
      }
    }
    close_format();
    out.translate = translatable;
  }

  // Wrappers and insertions nested deeper than this (never in a real document) are kept as
  // written: the walk recurses into them, on a request thread's stack.
  static constexpr int kMaxWrappers = 8;

  const Names& names_;
  int field_depth_ = 0;  // Complex fields open (they may go on over paragraphs).
  int depth_ = 0;        // Wrappers and insertions the walk is in.
};

// Every paragraph of `document` in document order (a text box's after the one holding it).
std::vector<Paragraph> Paragraphs(const pugi::xml_document& document, const Names& names) {
  std::vector<Paragraph> paragraphs;
  if (!names.found) return paragraphs;
  Extractor extractor(names);
  ForEachDescendant(document, [&](const pugi::xml_node& n) {
    if (Is(n, names.p)) paragraphs.push_back(extractor.Extract(n));
    // Properties, which the rendering copies onto each run or wrapper it writes, are not looked
    // into (a paragraph there, which no writer puts, stays as written in each copy).
    if (Is(n, names.rpr) || IsAny(n, names.wrapper_properties)) return false;
    // What the rendering of a paragraph leaves out (a deletion, a proofing mark) is not looked
    // into: a paragraph inside (a deleted text box's) is not translated for nothing.
    if (IsAny(n, names.deleted) || Is(n, names.proof_err) || Is(n, names.last_page_break)) {
      for (pugi::xml_node a = n.parent(); a; a = a.parent()) {
        if (Is(a, names.p)) return false;
      }
    }
    return true;
  });
  return paragraphs;
}

// Writes a paragraph's new run content around its translation.
class ParagraphWriter {
 public:
  ParagraphWriter(const Names& names, Paragraph& paragraph)
      : names_(names), paragraph_(paragraph) {}

  void Write(const TranslatedRun& translation) {
    std::string ignored;
    WriteSpans(
        paragraph_.run.inlines, translation,
        [&](absl::string_view text, std::string&) { Text(text); }, ignored,
        [&](size_t span, bool open, size_t) { Markup(span, open); });
    Flush();
    for (const pugi::xml_node& n : paragraph_.content) paragraph_.node.remove_child(n);
  }

 private:
  pugi::xml_node Append(const char* name) {
    if (!containers_.empty()) return containers_.back().append_child(name);
    if (paragraph_.anchor) return paragraph_.node.insert_child_before(name, paragraph_.anchor);
    return paragraph_.node.append_child(name);
  }
  pugi::xml_node AppendCopy(const pugi::xml_node& node) {
    if (!containers_.empty()) return containers_.back().append_copy(node);
    if (paragraph_.anchor) return paragraph_.node.insert_copy_before(node, paragraph_.anchor);
    return paragraph_.node.append_copy(node);
  }

  // Text is gathered while its properties stay the same and written as one run at the next
  // markup (or the end): each character copied once.
  void Text(absl::string_view text) {
    const std::string clean = XmlCharacters(text);
    if (clean.empty()) return;
    const pugi::xml_node rpr = formats_.empty() ? paragraph_.base_rpr : formats_.back();
    if (!pending_.empty() && pending_rpr_ != rpr) Flush();
    pending_ += clean;
    pending_rpr_ = rpr;
  }

  void Flush() {
    if (pending_.empty()) return;
    pugi::xml_node r = Append(names_.r.c_str());
    if (pending_rpr_) r.append_copy(pending_rpr_);
    last_t_ = r.append_child(names_.t.c_str());
    if (names_.word()) last_t_.append_attribute("xml:space") = "preserve";
    last_t_.text().set(pending_.c_str());
    pending_.clear();
  }

  void Markup(size_t span, bool open) {
    Flush();
    const SpanData& data = paragraph_.data[span];
    switch (data.kind) {
      case SpanKind::kContainer:
        if (open) {
          pugi::xml_node copy = Append(data.nodes[0].name());
          for (const pugi::xml_attribute& a : data.nodes[0].attributes()) {
            copy.append_attribute(a.name()) = a.value();
          }
          for (const pugi::xml_node& c : data.nodes[0].children()) {
            if (IsAny(c, names_.wrapper_properties)) copy.append_copy(c);
          }
          containers_.push_back(copy);
        } else if (!containers_.empty()) {
          containers_.pop_back();
        }
        break;
      case SpanKind::kFormat:
        if (open) {
          formats_.push_back(data.rpr);
        } else if (!formats_.empty()) {
          formats_.pop_back();
        }
        break;
      case SpanKind::kObject:
      case SpanKind::kFixed:
        if (!open) return;
        if (data.strip_space && last_t_) {
          // The space the source's text gained for this tab or break, where the translation has
          // it: just before.
          std::string before = last_t_.child_value();
          if (!before.empty() && absl::ascii_isspace(static_cast<unsigned char>(before.back()))) {
            before.pop_back();
            if (before.empty()) {
              last_t_.parent().parent().remove_child(last_t_.parent());
            } else {
              last_t_.text().set(before.c_str());
            }
          }
        }
        last_t_ = pugi::xml_node();
        if (data.run) {
          pugi::xml_node r = Append(data.run.name());
          for (const pugi::xml_attribute& a : data.run.attributes()) {
            r.append_attribute(a.name()) = a.value();
          }
          if (data.rpr) r.append_copy(data.rpr);
          for (const pugi::xml_node& n : data.nodes) r.append_copy(n);
        } else {
          for (const pugi::xml_node& n : data.nodes) AppendCopy(n);
        }
        break;
    }
  }

  const Names& names_;
  Paragraph& paragraph_;
  std::vector<pugi::xml_node> containers_;  // Output wrappers open, innermost last.
  std::vector<pugi::xml_node> formats_;     // Format spans open: their properties.
  std::string pending_;                     // Text not written yet,
  pugi::xml_node pending_rpr_;              // and its properties.
  pugi::xml_node last_t_;                   // The text element written last, if nothing since.
};

// Which of w:lang's attributes holds a language's tag: Word keeps one for text in Latin and other
// simple scripts (w:val), one for East Asian text (w:eastAsia) and one for complex scripts
// written right to left (w:bidi), and applies each to the characters of its scripts.
std::string WordLanguageAttribute(absl::string_view language, const Names& names) {
  const absl::string_view primary = language.substr(0, language.find_first_of("-_"));
  static constexpr absl::string_view kEastAsian[] = {"zh", "ja", "ko"};
  static constexpr absl::string_view kRightToLeft[] = {"ar", "he", "fa", "ur", "yi", "ps"};
  const std::string prefix = names.val.substr(0, names.val.size() - 3);  // "w:".
  for (absl::string_view l : kEastAsian) {
    if (absl::EqualsIgnoreCase(primary, l)) return prefix + "eastAsia";
  }
  for (absl::string_view l : kRightToLeft) {
    if (absl::EqualsIgnoreCase(primary, l)) return prefix + "bidi";
  }
  return names.val;
}

// Sets every language tag of `document` to `language`: true if it has any.
bool SetLanguage(pugi::xml_document& document, const Names& names, absl::string_view language) {
  if (language.empty() || !names.found) return false;
  const std::string value(language);
  const std::string word_attribute = names.word() ? WordLanguageAttribute(language, names) : "";
  bool any = false;
  ForEachDescendant(document, [&](const pugi::xml_node& n) {
    if (n.type() != pugi::node_element) return false;
    pugi::xml_node node = n;
    if (names.word()) {
      if (Is(n, names.lang)) {
        pugi::xml_attribute tag = node.attribute(word_attribute.c_str());
        if (!tag) tag = node.append_attribute(word_attribute.c_str());
        any = tag.set_value(value.c_str());
      }
    } else if (Is(n, names.rpr) || Is(n, names.end_para_rpr) || Is(n, names.def_rpr)) {
      pugi::xml_attribute lang = node.attribute("lang");
      if (lang) any = lang.set_value(value.c_str());
    }
    return true;
  });
  return any;
}

class OoxmlPartRuns : public PartRuns {
 public:
  OoxmlPartRuns(std::string name, std::string bytes, OoxmlDialect dialect,
                std::string target_language)
      : name_(std::move(name)),
        bytes_(std::move(bytes)),
        dialect_(dialect),
        target_language_(std::move(target_language)) {}

  absl::Status Init() {
    // Every later step (splitting, tokenising, placing spans on character boundaries) takes the
    // text to be UTF-8, as XML must be.
    if (absl::Status utf8 = CheckUtf8(bytes_, absl::StrCat("part ", name_)); !utf8.ok()) {
      return utf8;
    }
    absl::StatusOr<std::unique_ptr<pugi::xml_document>> document = ParseXmlPart(name_, bytes_);
    if (!document.ok()) return document.status();
    const Names names(**document, dialect_);
    for (Paragraph& p : Paragraphs(**document, names)) {
      if (p.translate) runs_.push_back(std::move(p.run));
    }
    return absl::OkStatus();
  }

  std::string Render(absl::Span<const TranslatedRun> translations) const override {
    absl::StatusOr<std::unique_ptr<pugi::xml_document>> document = ParseXmlPart(name_, bytes_);
    if (!document.ok()) return bytes_;  // Never: it parsed in Init.
    const Names names(**document, dialect_);
    std::vector<Paragraph> paragraphs = Paragraphs(**document, names);
    std::vector<size_t> index(paragraphs.size(), 0);
    size_t next = 0;
    for (size_t i = 0; i < paragraphs.size(); ++i) {
      if (paragraphs[i].translate) index[i] = next++;
    }
    // Last first: a text box's paragraphs are written before the paragraph holding them copies
    // its drawing.
    bool changed = false;
    for (size_t i = paragraphs.size(); i-- > 0;) {
      if (!paragraphs[i].translate || index[i] >= translations.size()) continue;
      ParagraphWriter(names, paragraphs[i]).Write(translations[index[i]]);
      changed = true;
    }
    if (SetLanguage(**document, names, target_language_)) changed = true;
    // A part with nothing to change is its bytes as they were.
    return changed ? WriteXmlPart(**document) : bytes_;
  }

 private:
  std::string name_;
  std::string bytes_;
  OoxmlDialect dialect_;
  std::string target_language_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PartRuns>> TakeApartOoxmlPart(absl::string_view name,
                                                             std::string bytes,
                                                             OoxmlDialect dialect,
                                                             absl::string_view target_language) {
  auto part = std::make_unique<OoxmlPartRuns>(std::string(name), std::move(bytes), dialect,
                                              std::string(target_language));
  if (absl::Status status = part->Init(); !status.ok()) return status;
  return part;
}

}  // namespace mtserve
