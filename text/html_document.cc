#include "text/html_document.h"

#include <gumbo.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "text/words.h"

namespace mtserve {
namespace {

// Elements that never hold others (void), or that the next one like them closes without an end
// tag (<p>, <li>, table cells...): neither nests.
bool NeverNests(absl::string_view tag) {
  static constexpr absl::string_view kTags[] = {
      "area",     "base", "basefont", "bgsound", "br",    "col",      "embed",  "frame",
      "hr",       "img",  "input",    "keygen",  "link",  "meta",     "param",  "source",
      "track",    "wbr",  "html",     "head",    "body",  "p",        "li",     "dt",
      "dd",       "tr",   "td",       "th",      "tbody", "thead",    "tfoot",  "option",
      "optgroup", "rb",   "rt",       "rtc",     "rp",    "colgroup", "caption"};
  return std::find(std::begin(kTags), std::end(kTags), tag) != std::end(kTags);
}

// Elements whose content is text up to their end tag, not markup.
bool IsRawText(absl::string_view tag) {
  return tag == "script" || tag == "style" || tag == "textarea" || tag == "title" || tag == "xmp" ||
         tag == "iframe" || tag == "noembed" || tag == "noframes";
}

// Where the tag whose name ends at `i` ends (its '>', or the input's end), and how many
// attributes it has, as an HTML tokenizer reads them: a quoted value may hold '>'.
struct TagEnd {
  size_t close;
  size_t attributes;
};
TagEnd ScanTag(absl::string_view html, size_t i) {
  auto space = [&](size_t j) {
    return absl::ascii_isspace(static_cast<unsigned char>(html[j])) || html[j] == '/';
  };
  size_t attributes = 0;
  while (true) {
    while (i < html.size() && space(i)) ++i;
    if (i >= html.size() || html[i] == '>') return {i, attributes};
    ++attributes;
    ++i;  // A name's first character may be anything else, '=' included.
    while (i < html.size() && !space(i) && html[i] != '>' && html[i] != '=') ++i;
    while (i < html.size() && absl::ascii_isspace(static_cast<unsigned char>(html[i]))) ++i;
    if (i >= html.size() || html[i] != '=') continue;
    ++i;
    while (i < html.size() && absl::ascii_isspace(static_cast<unsigned char>(html[i]))) ++i;
    if (i < html.size() && (html[i] == '"' || html[i] == '\'')) {
      const size_t end = html.find(html[i], i + 1);
      i = end == absl::string_view::npos ? html.size() : end + 1;
    } else {
      while (i < html.size() && !absl::ascii_isspace(static_cast<unsigned char>(html[i])) &&
             html[i] != '>') {
        ++i;
      }
    }
  }
}

// What parsing `html` would cost, estimated from its tags without parsing: how deep its elements
// nest (start tags of elements that nest add one level, their end tags take one away) and the
// most attributes one element has. gumbo's time grows with the depth times the tags (a document
// of 50,000 nested <div>s, 250 KB, took 11 s) and with the square of an element's attributes (it
// looks each name up among those before: 1 MB of distinct names took 135 s), and the tree it
// builds is walked recursively (100,000 nested elements took the process's stack), so both are
// checked before gumbo runs. Elements that close without end tags are not counted, so the real
// depth can be a few times the estimate (a table in a table cell: table, tbody, tr, td), never
// unboundedly more.
struct HtmlShape {
  size_t depth = 0;
  size_t attributes = 0;     // The most on one element,
  size_t attributes_at = 0;  // at this byte (its '<').
};
HtmlShape EstimateShape(absl::string_view html) {
  HtmlShape shape;
  size_t depth = 0;
  size_t i = 0;
  auto name_end = [&](size_t start) {
    size_t end = start;
    while (end < html.size() &&
           (absl::ascii_isalnum(static_cast<unsigned char>(html[end])) || html[end] == '-')) {
      ++end;
    }
    return end;
  };
  while ((i = html.find('<', i)) != absl::string_view::npos) {
    if (html.substr(i, 4) == "<!--") {
      const size_t end = html.find("-->", i + 4);
      i = end == absl::string_view::npos ? html.size() : end + 3;
      continue;
    }
    const bool end_tag = i + 1 < html.size() && html[i + 1] == '/';
    const size_t name_start = i + (end_tag ? 2 : 1);
    if (name_start >= html.size() ||
        !absl::ascii_isalpha(static_cast<unsigned char>(html[name_start]))) {
      ++i;
      continue;
    }
    const size_t name_stop = name_end(name_start);
    const std::string tag = absl::AsciiStrToLower(html.substr(name_start, name_stop - name_start));
    const TagEnd tag_end = ScanTag(html, name_stop);
    if (tag_end.attributes > shape.attributes) {
      shape.attributes = tag_end.attributes;
      shape.attributes_at = i;
    }
    if (tag_end.close >= html.size()) break;
    const bool self_closing = html[tag_end.close - 1] == '/';
    i = tag_end.close + 1;
    if (end_tag) {
      if (!NeverNests(tag) && depth > 0) --depth;
    } else if (IsRawText(tag)) {
      const std::string text_end = "</" + tag;
      while ((i = html.find("</", i)) != absl::string_view::npos &&
             !absl::StartsWithIgnoreCase(html.substr(i), text_end)) {
        i += 2;
      }
      if (i == absl::string_view::npos) break;
    } else if (!NeverNests(tag) && !self_closing) {
      shape.depth = std::max(shape.depth, ++depth);
    }
  }
  return shape;
}

// Elements whose content is not text to translate.
bool IsUntranslatable(const GumboElement& e) {
  switch (e.tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_VAR:
      return true;
    default:
      break;
  }
  const GumboAttribute* translate = gumbo_get_attribute(&e.attributes, "translate");
  return translate != nullptr && absl::AsciiStrToLower(translate->value) == "no";
}

// Phrasing markup that wraps words inside a sentence.
bool IsInlineTag(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_ABBR:
    case GUMBO_TAG_B:
    case GUMBO_TAG_BDI:
    case GUMBO_TAG_BDO:
    case GUMBO_TAG_CITE:
    case GUMBO_TAG_DATA:
    case GUMBO_TAG_DFN:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_FONT:
    case GUMBO_TAG_I:
    case GUMBO_TAG_LABEL:
    case GUMBO_TAG_MARK:
    case GUMBO_TAG_Q:
    case GUMBO_TAG_S:
    case GUMBO_TAG_SMALL:
    case GUMBO_TAG_SPAN:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_SUB:
    case GUMBO_TAG_SUP:
    case GUMBO_TAG_TIME:
    case GUMBO_TAG_U:
      return true;
    default:
      return false;
  }
}

bool IsText(const GumboNode* n) {
  return n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE;
}

size_t Start(const GumboNode* n);
size_t End(const GumboNode* n);

// An element that can be taken apart into text and inline markup: an inline tag written in the
// source (not one the parser implied), holding only text and such elements, which lie in the
// source one after the other between its tags. (Markup the parser ignored or moved, such as a
// stray end tag, leaves a gap: replacing the element's bytes would lose it.)
bool IsPureInline(const GumboNode* n) {
  if (n->type != GUMBO_NODE_ELEMENT) return false;
  const GumboElement& e = n->v.element;
  if (!IsInlineTag(e.tag) || IsUntranslatable(e) || e.original_tag.length == 0) return false;
  size_t cursor = e.start_pos.offset + e.original_tag.length;
  for (unsigned i = 0; i < e.children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
    if ((!IsText(child) && !IsPureInline(child)) || Start(child) != cursor) return false;
    cursor = End(child);
  }
  return e.original_end_tag.length == 0 || cursor == e.end_pos.offset;
}

size_t Start(const GumboNode* n) {
  return n->type == GUMBO_NODE_ELEMENT ? n->v.element.start_pos.offset : n->v.text.start_pos.offset;
}

// One past the node's last byte in the source.
size_t End(const GumboNode* n) {
  if (IsText(n)) return n->v.text.start_pos.offset + n->v.text.original_text.length;
  const GumboElement& e = n->v.element;
  if (e.original_end_tag.length > 0) return e.end_pos.offset + e.original_end_tag.length;
  size_t end = e.start_pos.offset + e.original_tag.length;
  for (unsigned i = 0; i < e.children.length; ++i) {
    end = std::max(end, End(static_cast<const GumboNode*>(e.children.data[i])));
  }
  return end;
}

std::string Piece(const GumboStringPiece& p) { return std::string(p.data, p.length); }

class RunCollector {
 public:
  explicit RunCollector(std::vector<HtmlDocument::Run>& runs) : runs_(runs) {}

  void Walk(const GumboNode* node) {
    if (node->type == GUMBO_NODE_DOCUMENT) {
      for (unsigned i = 0; i < node->v.document.children.length; ++i) {
        Walk(static_cast<const GumboNode*>(node->v.document.children.data[i]));
      }
      return;
    }
    if (node->type != GUMBO_NODE_ELEMENT) return;
    const GumboElement& e = node->v.element;
    if (IsUntranslatable(e)) return;
    Attributes(e);
    for (unsigned i = 0; i < e.children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
      if (IsText(child)) {
        AddText(child);
      } else if (IsPureInline(child)) {
        AddInline(child, -1);
      } else {
        Flush();
        Walk(child);
      }
    }
    Flush();
  }

 private:
  // A run is bytes of the source one after the other: a node that does not start where the run
  // ends (after bytes the parser ignored or moved) starts a new one.
  void Begin(const GumboNode* n) {
    if (!(run_.text.empty() && run_.inlines.empty()) && Start(n) != run_.source.end) Flush();
    if (run_.text.empty() && run_.inlines.empty()) run_.source.begin = Start(n);
    run_.source.end = End(n);
  }

  void AddText(const GumboNode* n) {
    Begin(n);
    AppendText(n->v.text.text);
  }

  // In HTML a line break inside a paragraph is a space (the source's wrapping, not a boundary):
  // it is one here too, so that a sentence wrapped over two lines is translated as one.
  void AppendText(absl::string_view text) {
    for (char c : text) run_.text += (c == '\n' || c == '\r' || c == '\t' || c == '\f') ? ' ' : c;
  }

  void AddInline(const GumboNode* n, int parent) {
    if (parent < 0) Begin(n);
    const GumboElement& e = n->v.element;
    Attributes(e);
    const int index = static_cast<int>(run_.inlines.size());
    run_.inlines.push_back(
        {{run_.text.size(), 0}, Piece(e.original_tag), Piece(e.original_end_tag), parent});
    for (unsigned i = 0; i < e.children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
      if (IsText(child)) {
        AppendText(child->v.text.text);
      } else {
        AddInline(child, index);
      }
    }
    run_.inlines[index].range.end = run_.text.size();
    run_.source.end = std::max(run_.source.end, End(n));
  }

  // alt and title values are runs of their own (a tooltip, an image's description).
  void Attributes(const GumboElement& e) {
    for (const char* name : {"alt", "title"}) {
      const GumboAttribute* a = gumbo_get_attribute(&e.attributes, name);
      // A value-less attribute (<img alt>) has an empty value, an original_value that is its
      // name and no value_start at all (gumbo leaves it unset): nothing to translate.
      if (a == nullptr || a->value[0] == '\0' || a->original_value.length == 0) continue;
      const bool quoted = a->original_value.data[0] == '"' || a->original_value.data[0] == '\'';
      HtmlDocument::Run run;
      run.text = a->value;
      run.attribute = true;
      run.source.begin = a->value_start.offset + (quoted ? 1 : 0);
      run.source.end = a->value_start.offset + a->original_value.length - (quoted ? 1 : 0);
      if (run.source.begin < run.source.end) Keep(std::move(run));
    }
  }

  void Flush() {
    HtmlDocument::Run run = std::move(run_);
    run_ = HtmlDocument::Run();
    const bool blank = std::all_of(run.text.begin(), run.text.end(), [](char c) {
      return absl::ascii_isspace(static_cast<unsigned char>(c));
    });
    if (!blank) Keep(std::move(run));
  }

  // Runs replace source bytes in order: one the parser placed out of source order (misnested
  // markup it repaired) would overlap another, and is left as written instead.
  void Keep(HtmlDocument::Run run) { pending_.push_back(std::move(run)); }

 public:
  void Finish() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const auto& a, const auto& b) { return a.source.begin < b.source.begin; });
    size_t end = 0;
    for (HtmlDocument::Run& run : pending_) {
      if (run.source.begin < end || run.source.end < run.source.begin) continue;
      end = run.source.end;
      runs_.push_back(std::move(run));
    }
  }

 private:
  std::vector<HtmlDocument::Run>& runs_;
  std::vector<HtmlDocument::Run> pending_;
  HtmlDocument::Run run_;
};

void AppendEscaped(absl::string_view text, bool attribute, std::string& out) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&#39;" : "'";
        break;
      default:
        out += c;
    }
  }
}

// The inlines' target ranges made properly nested: each inside its parent, after its previous
// sibling, within the text, on UTF-8 character boundaries.
std::vector<Segment> Nested(const HtmlDocument::Run& run, const HtmlDocument::Translated& t) {
  const size_t size = t.text.size();
  auto boundary = [&](size_t i) {
    while (i > 0 && i < size && (static_cast<unsigned char>(t.text[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  std::vector<Segment> ranges(run.inlines.size());
  std::vector<size_t> sibling_end(run.inlines.size() + 1, 0);  // Per parent (+1: the run).
  for (size_t i = 0; i < run.inlines.size(); ++i) {
    Segment r = i < t.inlines.size() ? t.inlines[i] : Segment{size, size};
    const int parent = run.inlines[i].parent;
    const Segment outer = parent >= 0 ? ranges[parent] : Segment{0, size};
    size_t& after = sibling_end[parent + 1];
    const size_t low = std::max(outer.begin, after);
    r.begin = boundary(std::clamp(r.begin, low, std::max(low, outer.end)));
    r.begin = std::max(r.begin, low);
    r.end = boundary(std::clamp(r.end, r.begin, std::max(r.begin, outer.end)));
    r.end = std::max(r.end, r.begin);
    ranges[i] = r;
    after = r.end;
  }
  return ranges;
}

void RenderRun(const HtmlDocument::Run& run, const HtmlDocument::Translated& t, std::string& out) {
  if (run.attribute || run.inlines.empty()) {
    AppendEscaped(t.text, run.attribute, out);
    return;
  }
  const std::vector<Segment> ranges = Nested(run, t);
  // Each inline's children, in order: the tags are written by walking that tree, so they nest
  // as the ranges do (empty ones included).
  std::vector<std::vector<size_t>> children(run.inlines.size() + 1);
  for (size_t i = 0; i < run.inlines.size(); ++i) {
    children[run.inlines[i].parent + 1].push_back(i);
  }
  const absl::string_view text = t.text;
  size_t written = 0;
  auto text_to = [&](size_t position) {
    if (position <= written) return;
    AppendEscaped(text.substr(written, position - written), false, out);
    written = position;
  };
  std::function<void(int)> write = [&](int parent) {
    for (size_t child : children[parent + 1]) {
      text_to(ranges[child].begin);
      out += run.inlines[child].open;
      write(static_cast<int>(child));
      text_to(ranges[child].end);
      out += run.inlines[child].close;
    }
  };
  write(-1);
  text_to(text.size());
}

}  // namespace

absl::StatusOr<HtmlDocument> HtmlDocument::Parse(std::string html) {
  const HtmlShape shape = EstimateShape(html);
  if (shape.depth > kMaxDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("the HTML nests elements ", shape.depth, " deep; the limit is ", kMaxDepth));
  }
  if (shape.attributes > kMaxAttributes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the HTML has an element with ", shape.attributes, " attributes (the tag at byte ",
        shape.attributes_at, "); the limit is ", kMaxAttributes));
  }
  HtmlDocument document;
  document.html_ = std::move(html);
  // No parse errors recorded: nothing reads them, and gumbo copies the stack of open elements
  // into each, so that a document of n unclosed nested elements took O(n^2) memory (3 GB for
  // 20,000 <div>s, 100 KB of text).
  static const GumboOptions kOptions = [] {
    GumboOptions options = kGumboDefaultOptions;
    options.max_errors = 0;
    return options;
  }();
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> output(
      gumbo_parse_with_options(&kOptions, document.html_.data(), document.html_.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&kOptions, o); });
  if (output == nullptr) return absl::InvalidArgumentError("the HTML could not be parsed");
  RunCollector collector(document.runs_);
  collector.Walk(output->document);
  collector.Finish();
  return document;
}

std::vector<Segment> HtmlDocument::PlaceByPosition(const Run& run, absl::string_view text) {
  const size_t source = run.text.size(), target = text.size();
  std::vector<Segment> out;
  for (const Inline& in : run.inlines) {
    if (source == 0) {
      out.push_back({0, target});
      continue;
    }
    out.push_back(WidenToWords(
        text, {in.range.begin * target / source, (in.range.end * target + source - 1) / source}));
  }
  return out;
}

std::string HtmlDocument::Render(absl::Span<const Translated> translations) const {
  std::string out;
  out.reserve(html_.size());
  size_t copied = 0;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Run& run = runs_[i];
    out.append(html_, copied, run.source.begin - copied);
    if (i < translations.size()) {
      RenderRun(run, translations[i], out);
    } else {
      out.append(html_, run.source.begin, run.source.end - run.source.begin);
    }
    copied = run.source.end;
  }
  out.append(html_, copied, std::string::npos);
  return out;
}

}  // namespace mtserve
