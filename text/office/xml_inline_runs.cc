#include "text/office/xml_inline_runs.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "text/markup_escape.h"

namespace mtserve {
namespace {

using Kind = XmlInlineSchema::Kind;

// The elements our rendering writes in place of spans and of moved nodes; replaced before the
// part is written (a source element of the same name is never confused with them: only the
// translation's own fragment is searched).
constexpr char kSpanStandIn[] = "mtserve-span";
constexpr char kNodeStandIn[] = "mtserve-node";

bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsControl(char c) { return static_cast<unsigned char>(c) < 0x20 && !IsXmlSpace(c); }

void AppendAttributeValue(absl::string_view value, std::string& out) {
  for (char c : value) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out += c;
    }
  }
}

std::string StartTag(const pugi::xml_node& element, bool empty) {
  std::string out = absl::StrCat("<", element.name());
  for (const pugi::xml_attribute& a : element.attributes()) {
    absl::StrAppend(&out, " ", a.name(), "=\"");
    AppendAttributeValue(a.value(), out);
    out += '"';
  }
  out += empty ? "/>" : ">";
  return out;
}

// Appends text node `value` to `text`, whitespace collapsed if `collapse` (none at the start of
// the run or after a space or line break). Returns whether it appended a character that is not
// whitespace.
bool AppendText(absl::string_view value, bool collapse, std::string& text) {
  bool visible = false;
  for (char c : value) {
    if (IsControl(c)) continue;  // Not text (and XML 1.0 cannot hold it).
    if (collapse && IsXmlSpace(c)) {
      if (!text.empty() && text.back() != ' ' && text.back() != '\n') text += ' ';
      continue;
    }
    visible = visible || !IsXmlSpace(c);
    text += c;
  }
  return visible;
}

// The text of the tree under `root` (its text nodes, in order).
std::string TextOf(const pugi::xml_node& root, bool collapse, std::string text = {}) {
  for (pugi::xml_node node = root.first_child(); node;) {
    if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
      AppendText(node.value(), collapse, text);
    }
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node != root && !node.next_sibling()) node = node.parent();
    if (node == root) break;
    node = node.next_sibling();
  }
  return text;
}

// The translation's text written for a paragraph: escaped, its whitespace as the schema says.
class TextWriter {
 public:
  explicit TextWriter(const XmlInlineSchema& schema) : schema_(schema) {}

  void Write(absl::string_view text, std::string& out) {
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (IsControl(c)) continue;
      if (c == ' ' && schema_.collapse_whitespace && !schema_.space_element.empty()) {
        if (after_space_) {
          ++pending_spaces_;
        } else {
          out += ' ';
          after_space_ = true;
        }
        continue;
      }
      Flush(out);
      if (c == '\t' && !schema_.tab_element.empty()) {
        absl::StrAppend(&out, "<", schema_.tab_element, "/>");
        after_space_ = true;
      } else if ((c == '\n' || c == '\r') && !schema_.line_break_element.empty()) {
        if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
        absl::StrAppend(&out, "<", schema_.line_break_element, "/>");
        after_space_ = true;
      } else {
        AppendXmlText(text.substr(i, 1), out);
        after_space_ = false;
      }
    }
    Flush(out);
  }

 private:
  void Flush(std::string& out) {
    while (pending_spaces_ > 0) {
      const size_t count = schema_.max_space_count > 0
                               ? std::min(pending_spaces_, schema_.max_space_count)
                               : pending_spaces_;
      absl::StrAppend(&out, "<", schema_.space_element);
      if (count > 1) absl::StrAppend(&out, " ", schema_.space_count, "=\"", count, "\"");
      out += "/>";
      pending_spaces_ -= count;
    }
  }

  const XmlInlineSchema& schema_;
  bool after_space_ = true;  // A paragraph's first space is lost unless written as an element.
  size_t pending_spaces_ = 0;
};

}  // namespace

void AppendXmlText(absl::string_view text, std::string& out) {
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && !IsControl(text[i])) continue;
    AppendMarkupEscaped(text.substr(begin, i - begin), /*attribute=*/false, out);
    begin = i + 1;
  }
}

std::optional<Kind> XmlInlineSchema::Listed(const pugi::xml_node& element) const {
  const absl::string_view name = element.name();
  if (auto it = elements.find(name); it != elements.end()) return it->second;
  if (const size_t colon = name.find(':'); colon != absl::string_view::npos) {
    if (auto it = prefixes.find(name.substr(0, colon + 1)); it != prefixes.end()) {
      return it->second;
    }
  }
  return std::nullopt;
}

Kind XmlInlineSchema::KindOf(const pugi::xml_node& element) const {
  return Listed(element).value_or(other);
}

absl::StatusOr<XmlInlineRuns> XmlInlineRuns::Collect(absl::string_view name,
                                                     const pugi::xml_node& root,
                                                     const XmlInlineSchema& schema) {
  XmlInlineRuns out;
  // Outside paragraphs only paragraphs and kept elements matter; the rest is structure.
  auto listed = [&](const pugi::xml_node& element, Kind kind) {
    return schema.Listed(element) == kind;
  };
  std::vector<pugi::xml_node> stack;  // Nodes to visit, the next on top.
  for (pugi::xml_node child = root.last_child(); child; child = child.previous_sibling()) {
    stack.push_back(child);
  }
  std::vector<pugi::xml_node> objects;
  while (!stack.empty()) {
    const pugi::xml_node node = stack.back();
    stack.pop_back();
    if (node.type() != pugi::node_element) continue;
    if (listed(node, Kind::kKept)) {
      std::string text = TextOf(node, schema.collapse_whitespace);
      if (!text.empty()) out.kept_.push_back(std::move(text));
      continue;
    }
    if (!listed(node, Kind::kParagraph)) {
      for (pugi::xml_node child = node.last_child(); child; child = child.previous_sibling()) {
        stack.push_back(child);
      }
      continue;
    }
    // A paragraph: its content walked without recursion, each frame a span's (or the
    // paragraph's: -1) children.
    Run run;
    Paragraph paragraph{node, {}};
    bool visible = false;
    objects.clear();
    struct Frame {
      pugi::xml_node next;
      int span;
    };
    std::vector<Frame> frames = {{node.first_child(), -1}};
    while (!frames.empty()) {
      Frame& frame = frames.back();
      if (!frame.next) {
        if (frame.span >= 0) run.inlines[frame.span].range.end = run.text.size();
        frames.pop_back();
        continue;
      }
      const pugi::xml_node child = frame.next;
      frame.next = child.next_sibling();
      const int parent = frame.span;
      const size_t at = run.text.size();
      auto add = [&](std::string open, std::string close, bool fixed, Segment range) {
        run.inlines.push_back({range, std::move(open), std::move(close), parent, fixed});
        paragraph.nodes.push_back(child);
        return static_cast<int>(run.inlines.size()) - 1;
      };
      switch (child.type()) {
        case pugi::node_pcdata:
        case pugi::node_cdata:
          if (AppendText(child.value(), schema.collapse_whitespace, run.text)) visible = true;
          continue;
        case pugi::node_element:
          break;
        case pugi::node_comment:
        case pugi::node_pi:
          add(child.type() == pugi::node_comment ? absl::StrCat("<!--", child.value(), "-->")
                                                 : absl::StrCat("<?", child.name(), "?>"),
              "", false, {at, at});
          continue;
        default:
          continue;
      }
      switch (schema.KindOf(child)) {
        case Kind::kSpan: {
          const int span =
              add(StartTag(child, false), absl::StrCat("</", child.name(), ">"), false, {at, at});
          frames.push_back({child.first_child(), span});
          break;
        }
        case Kind::kExpand: {
          if (!schema.expand) break;
          absl::StatusOr<std::string> text = schema.expand(child);
          if (!text.ok()) {
            return absl::InvalidArgumentError(
                absl::StrCat("part ", name, ": ", text.status().message()));
          }
          run.text += *text;
          break;
        }
        case Kind::kParagraph:
        case Kind::kObject:
          add(StartTag(child, true), "", false, {at, at});
          objects.push_back(child);
          break;
        case Kind::kSeparator: {
          if (!run.text.empty() && run.text.back() != ' ' && run.text.back() != '\n') {
            run.text += ' ';
          }
          add(StartTag(child, true), "", false, {run.text.size(), run.text.size()});
          break;
        }
        case Kind::kKept: {
          add(StartTag(child, true), "", false, {at, at});
          std::string text = TextOf(child, schema.collapse_whitespace);
          if (!text.empty()) out.kept_.push_back(std::move(text));
          break;
        }
        case Kind::kFixed: {
          // Its text as the sentence reads it: a space before it where collapsing would join it
          // to the word before.
          run.text = TextOf(child, schema.collapse_whitespace, std::move(run.text));
          add(StartTag(child, true), "", true, {at, run.text.size()});
          break;
        }
      }
    }
    // The objects' paragraphs next, in order, before the paragraph's following siblings.
    for (size_t i = objects.size(); i-- > 0;) stack.push_back(objects[i]);
    if (!visible) continue;
    out.runs_.push_back(std::move(run));
    out.paragraphs_.push_back(std::move(paragraph));
  }
  return out;
}

size_t XmlInlineRuns::Render(absl::Span<const TranslatedRun> translations,
                             const XmlInlineSchema& schema) const {
  size_t failed = 0;
  // Last first: a paragraph inside another's object is rendered before the object moves.
  for (size_t r = std::min(translations.size(), runs_.size()); r-- > 0;) {
    if (!RenderParagraph(paragraphs_[r], runs_[r], translations[r], schema)) ++failed;
  }
  return failed;
}

bool XmlInlineRuns::RenderParagraph(const Paragraph& paragraph, const Run& run,
                                    const TranslatedRun& t, const XmlInlineSchema& schema) const {
  // The spans with stand-ins for their markup, so that the fragment holds no source XML.
  std::vector<InlineSpan> spans = run.inlines;
  for (size_t i = 0; i < spans.size(); ++i) {
    const bool span = !spans[i].fixed && paragraph.nodes[i].type() == pugi::node_element &&
                      schema.KindOf(paragraph.nodes[i]) == Kind::kSpan;
    if (span) {
      spans[i].open = absl::StrCat("<", kSpanStandIn, " i=\"", i, "\">");
      spans[i].close = absl::StrCat("</", kSpanStandIn, ">");
    } else {
      spans[i].open = absl::StrCat("<", kNodeStandIn, " i=\"", i, "\"/>");
      spans[i].close.clear();
    }
  }
  // A fixed span stands for its source text only: where its placed range holds that text with
  // more around it (a field's "3" placed on "3."), the range is narrowed to it, so that the rest
  // is written.
  TranslatedRun narrowed = t;
  for (size_t i = 0; i < spans.size() && i < narrowed.inlines.size(); ++i) {
    Segment& range = narrowed.inlines[i];
    if (!spans[i].fixed || range.begin >= range.end || range.end > t.text.size()) continue;
    const absl::string_view source(run.text.data() + spans[i].range.begin,
                                   spans[i].range.end - spans[i].range.begin);
    const absl::string_view placed(t.text.data() + range.begin, range.end - range.begin);
    const size_t at = source.empty() ? absl::string_view::npos : placed.find(source);
    if (at != absl::string_view::npos) {
      range = {range.begin + at, range.begin + at + source.size()};
    }
  }
  std::vector<char> separator(spans.size(), 0);
  for (size_t i = 0; i < spans.size(); ++i) {
    separator[i] = paragraph.nodes[i].type() == pugi::node_element &&
                   schema.KindOf(paragraph.nodes[i]) == Kind::kSeparator;
  }
  std::string fragment;
  std::vector<std::pair<size_t, size_t>> separators;  // Where each was written, and its size.
  TextWriter writer(schema);
  WriteSpans(
      spans, narrowed, [&](absl::string_view text, std::string& out) { writer.Write(text, out); },
      fragment,
      [&](size_t span, bool open, size_t at) {
        if (open && separator[span]) separators.push_back({at, spans[span].open.size()});
      });
  // A separator stands for the space beside it: one space before it (or else after it) goes.
  if (!separators.empty()) {
    std::vector<char> drop(fragment.size(), 0);
    for (const auto& [at, size] : separators) {
      if (at > 0 && fragment[at - 1] == ' ' && !drop[at - 1]) {
        drop[at - 1] = 1;
      } else if (at + size < fragment.size() && fragment[at + size] == ' ') {
        drop[at + size] = 1;
      }
    }
    std::string kept;
    kept.reserve(fragment.size());
    for (size_t i = 0; i < fragment.size(); ++i) {
      if (!drop[i]) kept += fragment[i];
    }
    fragment = std::move(kept);
  }

  // The paragraph's content moved aside into a holder, the translation appended after it.
  pugi::xml_node node = paragraph.node;
  pugi::xml_node holder = node.prepend_child("mtserve-old");
  while (holder.next_sibling()) holder.append_move(holder.next_sibling());
  const pugi::xml_parse_result parsed = node.append_buffer(
      fragment.data(), fragment.size(),
      pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_fragment, pugi::encoding_utf8);
  const pugi::xml_node first_new = holder.next_sibling();
  if (!parsed) {
    while (holder.next_sibling()) node.remove_child(holder.next_sibling());
    while (holder.first_child()) node.append_move(holder.first_child());
    node.remove_child(holder);
    return false;
  }
  // The stand-ins, found before any node moves in.
  std::vector<pugi::xml_node> stand_ins;
  for (pugi::xml_node n = first_new; n;) {
    const absl::string_view name = n.name();
    if (n.type() == pugi::node_element && (name == kSpanStandIn || name == kNodeStandIn)) {
      stand_ins.push_back(n);
    }
    if (n.first_child()) {
      n = n.first_child();
      continue;
    }
    while (n && n.parent() != node && !n.next_sibling()) n = n.parent();
    n = n.next_sibling();
  }
  std::vector<char> placed(spans.size(), 0);
  for (pugi::xml_node stand_in : stand_ins) {
    size_t i = 0;
    if (!absl::SimpleAtoi(stand_in.attribute("i").value(), &i) || i >= spans.size()) continue;
    const pugi::xml_node source = paragraph.nodes[i];
    if (absl::string_view(stand_in.name()) == kSpanStandIn) {
      stand_in.set_name(source.name());
      stand_in.remove_attribute("i");
      for (const pugi::xml_attribute& a : source.attributes()) {
        stand_in.append_attribute(a.name()).set_value(a.value());
      }
    } else {
      if (!placed[i]) stand_in.parent().insert_move_after(source, stand_in);
      placed[i] = 1;
      stand_in.parent().remove_child(stand_in);
    }
  }
  // A node the translation did not place (never expected) is kept, at the end.
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].close.empty() && !placed[i]) node.append_move(paragraph.nodes[i]);
  }
  node.remove_child(holder);  // The old content, without the nodes moved out of it.
  return true;
}

}  // namespace mtserve
