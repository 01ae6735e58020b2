#include "text/html_document.h"

#include <gumbo.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "text/inline_spans.h"
#include "text/markup_escape.h"

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

// An element's tag name in lower case (an unknown tag's as written).
std::string TagName(const GumboElement& e) {
  if (e.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(e.tag);
  GumboStringPiece name = e.original_tag;
  gumbo_tag_from_original_text(&name);
  return absl::AsciiStrToLower(absl::string_view(name.data, name.length));
}

// Whether the author marked the element's content as not to be translated: translate="no",
// class "notranslate" (Google's and DeepL's convention), or a tag name the caller listed.
bool MarkedNoTranslate(const GumboElement& e, const HtmlOptions& options) {
  const GumboAttribute* translate = gumbo_get_attribute(&e.attributes, "translate");
  if (translate != nullptr && absl::AsciiStrToLower(translate->value) == "no") return true;
  if (const GumboAttribute* c = gumbo_get_attribute(&e.attributes, "class"); c != nullptr) {
    for (absl::string_view name : absl::StrSplit(c->value, absl::ByAnyChar(" \t\n\f\r"))) {
      if (name == "notranslate") return true;
    }
  }
  if (options.ignore_tags.empty()) return false;
  const std::string name = TagName(e);
  return std::find(options.ignore_tags.begin(), options.ignore_tags.end(), name) !=
         options.ignore_tags.end();
}

// Elements whose content is not text to translate.
bool IsUntranslatable(const GumboElement& e, const HtmlOptions& options) {
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
  return MarkedNoTranslate(e, options);
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

// A formatting element the parser made again from one written before: reopened after a block
// (reconstruction) or split by misnested end tags (the adoption agency). It carries the original's
// start tag as written, and its bytes are the original's.
bool IsClone(const GumboNode* n) {
  return (n->parse_flags & (GUMBO_INSERTION_RECONSTRUCTED_FORMATTING_ELEMENT |
                            GUMBO_INSERTION_ADOPTION_AGENCY_CLONED)) != 0;
}

bool IsInlineContent(const GumboNode* n, const HtmlOptions& options);

// An element inside a run whose text is kept as written (options.keep_inline): an inline or
// unknown tag written in the source, marked not to be translated (MarkedNoTranslate), holding
// only text and inline content.
bool IsKeptInline(const GumboNode* n, const HtmlOptions& options) {
  if (!options.keep_inline || n->type != GUMBO_NODE_ELEMENT) return false;
  const GumboElement& e = n->v.element;
  if (!(IsInlineTag(e.tag) || e.tag == GUMBO_TAG_UNKNOWN) || e.original_tag.length == 0 ||
      !MarkedNoTranslate(e, options)) {
    return false;
  }
  for (unsigned i = 0; i < e.children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
    if (!IsText(child) && !IsInlineContent(child, options)) return false;
  }
  return true;
}

// An element that can be taken apart into text and inline markup: an inline tag written in the
// source (or a clone of one), holding only text and such elements; or a kept one (IsKeptInline).
bool IsInlineContent(const GumboNode* n, const HtmlOptions& options) {
  if (n->type != GUMBO_NODE_ELEMENT) return false;
  if (IsKeptInline(n, options)) return true;
  const GumboElement& e = n->v.element;
  if (!IsInlineTag(e.tag) || IsUntranslatable(e, options) || e.original_tag.length == 0) {
    return false;
  }
  for (unsigned i = 0; i < e.children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
    if (!IsText(child) && !IsInlineContent(child, options)) return false;
  }
  return true;
}

// The element's own end tag in the source, if it has one: gumbo records on an element closed by
// another's end tag (flagged IMPLICIT_END_TAG) that other tag, which is not its own.
std::optional<Segment> OwnEndTag(const GumboElement& e, int flags) {
  if ((flags & GUMBO_INSERTION_IMPLICIT_END_TAG) != 0 || e.original_end_tag.length == 0) {
    return std::nullopt;
  }
  return Segment{e.end_pos.offset, e.end_pos.offset + e.original_end_tag.length};
}

std::string Piece(const GumboStringPiece& p) { return std::string(p.data, p.length); }

// Where the tag starting at `i` of `s` ends (one past its '>'), if a tag starts there as an HTML
// tokenizer reads one: '<' and a letter, "</" and a letter, or "</>" (which the tokenizer drops).
std::optional<size_t> TagAt(absl::string_view s, size_t i) {
  if (i + 1 >= s.size() || s[i] != '<') return std::nullopt;
  size_t name = i + 1;
  if (s[name] == '/') {
    ++name;
    if (name < s.size() && s[name] == '>') return name + 1;
  }
  if (name >= s.size() || !absl::ascii_isalpha(static_cast<unsigned char>(s[name]))) {
    return std::nullopt;
  }
  while (name < s.size() && !absl::ascii_isspace(static_cast<unsigned char>(s[name])) &&
         s[name] != '/' && s[name] != '>') {
    ++name;
  }
  const size_t close = ScanTag(s, name).close;
  if (close >= s.size()) return std::nullopt;
  return close + 1;
}

// `s` as tags one after the other (their bytes), or nullopt if anything else is in it.
std::optional<std::vector<absl::string_view>> OnlyTags(absl::string_view s) {
  std::vector<absl::string_view> tags;
  for (size_t i = 0; i < s.size();) {
    const std::optional<size_t> end = TagAt(s, i);
    if (!end.has_value()) return std::nullopt;
    tags.push_back(s.substr(i, *end - i));
    i = *end;
  }
  return tags;
}

// The text of each of `segments` (source bytes of body text, tags taken out) as the HTML parser
// reads it, entities decoded: all parsed at once, each after a <br> that tells them apart.
std::vector<std::string> DecodeTextSegments(absl::Span<const absl::string_view> segments) {
  std::string html = "<body>";
  for (absl::string_view segment : segments) absl::StrAppend(&html, "<br>", segment);
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> output(
      gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); });
  std::vector<std::string> texts;
  if (output == nullptr) return texts;
  const GumboElement& root = output->root->v.element;
  if (root.children.length < 2) return texts;
  const auto* body_node = static_cast<const GumboNode*>(root.children.data[1]);
  if (body_node->type != GUMBO_NODE_ELEMENT || body_node->v.element.tag != GUMBO_TAG_BODY) {
    return texts;
  }
  const GumboElement& body = body_node->v.element;
  for (unsigned i = 0; i < body.children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(body.children.data[i]);
    if (child->type == GUMBO_NODE_ELEMENT && child->v.element.tag == GUMBO_TAG_BR) {
      texts.emplace_back();
    } else if (IsText(child) && !texts.empty()) {
      texts.back() += child->v.text.text;
    } else {
      return {};
    }
  }
  return texts;
}

// Collects the runs of a document from gumbo's tree. A run is the inline content of a block: its
// text, and its inline elements as spans of that text. A formatting element the parser cloned
// (misnested tags: "<b>a <i>b</b> c</i>" is b[a i[b]] i[c] to the parser) is one span with its
// original, over all their text, so that the run stays one text and the spans may cross (the
// renderer nests them again). A run is contiguous source: its bytes are its text nodes, its
// elements' start and end tags and, between or inside them, tags the parser ignored (stray end
// tags), which are kept as empty spans where they stood. Anything else in between (bytes the
// parser moved) ends the run, so that replacing a run's bytes loses none.
class RunCollector {
 public:
  RunCollector(absl::string_view html, const HtmlOptions& options,
               std::vector<HtmlDocument::Run>& runs)
      : html_(html), options_(options), runs_(runs) {}

  void Walk(const GumboNode* node) {
    if (node->type == GUMBO_NODE_DOCUMENT) {
      for (unsigned i = 0; i < node->v.document.children.length; ++i) {
        Walk(static_cast<const GumboNode*>(node->v.document.children.data[i]));
      }
      return;
    }
    if (node->type != GUMBO_NODE_ELEMENT) return;
    const GumboElement& e = node->v.element;
    if (IsUntranslatable(e, options_)) return;
    Attributes(e);
    for (unsigned i = 0; i < e.children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
      if (IsText(child)) {
        AddText(child);
      } else if (IsInlineContent(child, options_)) {
        AddInline(child);
      } else {
        Flush();
        Walk(child);
      }
    }
    Flush();
  }

  // Runs replace source bytes in order: one the parser placed out of source order would overlap
  // another, and is left as written instead.
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
  // An inline of the run being collected, beyond what the Run keeps.
  struct Span {
    const char* start_tag = nullptr;  // Its start tag in the source (clones share it); null for
                                      // an ignored tag.
    int opened_under = -1;            // The innermost span open when it opened.
  };

  // Makes the run reach source byte `begin`: true if it continues there (at its end, or after
  // tags the parser ignored, kept as empty spans), false if it cannot.
  bool Reach(size_t begin) {
    if (!started_) {
      started_ = true;
      run_.source = {begin, begin};
      return true;
    }
    if (begin == run_.source.end) return true;
    if (begin < run_.source.end) return false;
    const std::optional<std::vector<absl::string_view>> tags =
        OnlyTags(html_.substr(run_.source.end, begin - run_.source.end));
    if (!tags.has_value()) return false;
    for (absl::string_view tag : *tags) AddIgnoredTag(tag);
    run_.source.end = begin;
    return true;
  }

  // Source bytes [begin, end) are the run's next: a new run continues from them if they cannot
  // follow the current one, with the inline elements open now reopened in it.
  void Consume(size_t begin, size_t end) {
    if (!Reach(begin)) Restart(begin);
    run_.source.end = std::max(run_.source.end, end);
  }

  void Restart(size_t begin) {
    std::vector<HtmlDocument::Inline> open;
    std::vector<const char*> keys;
    for (int index : stack_) {
      open.push_back(run_.inlines[index]);
      keys.push_back(spans_[index].start_tag);
    }
    Flush();
    started_ = true;
    run_.source = {begin, begin};
    for (size_t i = 0; i < open.size(); ++i) {
      const int index = static_cast<int>(run_.inlines.size());
      run_.inlines.push_back({{0, 0}, open[i].open, open[i].close, -1});
      spans_.push_back({keys[i], index - 1});
      clones_[keys[i]] = index;
      stack_.push_back(index);
    }
  }

  void AddIgnoredTag(absl::string_view tag) {
    run_.inlines.push_back(
        {{run_.text.size(), run_.text.size()}, std::string(tag), std::string(), -1});
    spans_.push_back({nullptr, stack_.empty() ? -1 : stack_.back()});
  }

  // A text node, with any tags the parser ignored inside it (gumbo folds a stray end tag into
  // the text around it) kept where they stood.
  void AddText(const GumboNode* n) {
    const GumboText& t = n->v.text;
    const absl::string_view source(t.original_text.data, t.original_text.length);
    Consume(t.start_pos.offset, t.start_pos.offset + source.size());
    std::vector<absl::string_view> segments, tags;
    size_t from = 0;
    for (size_t i = source.find('<'); i != absl::string_view::npos; i = source.find('<', i + 1)) {
      const std::optional<size_t> end = TagAt(source, i);
      if (!end.has_value()) continue;
      segments.push_back(source.substr(from, i - from));
      tags.push_back(source.substr(i, *end - i));
      from = *end;
      i = from - 1;
    }
    if (tags.empty()) {
      AddTextSource(t.start_pos.offset, source, t.text);
      AppendText(t.text);
      return;
    }
    segments.push_back(source.substr(from));
    const std::vector<std::string> texts = DecodeTextSegments(segments);
    if (texts.size() != segments.size() || absl::StrJoin(texts, "") != t.text) {
      // Never seen; the tags still are kept, after the text.
      run_.text_sources.push_back({run_.text.size(),
                                   Segment{t.start_pos.offset, t.start_pos.offset + source.size()},
                                   false});
      AppendText(t.text);
      for (absl::string_view tag : tags) AddIgnoredTag(tag);
      return;
    }
    for (size_t i = 0; i < texts.size(); ++i) {
      AddTextSource(t.start_pos.offset + (segments[i].data() - source.data()), segments[i],
                    texts[i]);
      AppendText(texts[i]);
      if (i < tags.size()) AddIgnoredTag(tags[i]);
    }
  }

  // `text` is about to be appended, the decoded bytes of `source`, which starts at byte `begin`.
  void AddTextSource(size_t begin, absl::string_view source, absl::string_view text) {
    run_.text_sources.push_back({run_.text.size(),
                                 {begin, begin + source.size()},
                                 source == text && text.find('\r') == absl::string_view::npos});
  }

  // In HTML a line break inside a paragraph is a space (the source's wrapping, not a boundary):
  // it is one here too, so that a sentence wrapped over two lines is translated as one.
  void AppendText(absl::string_view text) {
    for (char c : text) run_.text += (c == '\n' || c == '\r' || c == '\t' || c == '\f') ? ' ' : c;
  }

  void AddInline(const GumboNode* n) {
    const GumboElement& e = n->v.element;
    const bool clone = IsClone(n);
    // A kept element's text, if the run is not restarted inside it.
    const bool kept = IsKeptInline(n, options_);
    const size_t kept_from = run_.text.size();
    const size_t kept_run = flushed_;
    const auto found = clone ? clones_.find(e.original_tag.data) : clones_.end();
    if (found != clones_.end()) {
      stack_.push_back(found->second);
    } else {
      if (!clone) {
        if (!kept) Attributes(e);  // A kept element's title is not translated either.
        Consume(e.start_pos.offset, e.start_pos.offset + e.original_tag.length);
      }
      // A clone of an element outside this run (reopened after a block, or after misnested
      // tags in a run that ended): the parser makes it again from the start tag left where it
      // was written, so none is written here (one would nest it in itself), and only its own end
      // tag, if it has one.
      const int index = static_cast<int>(run_.inlines.size());
      run_.inlines.push_back({{run_.text.size(), run_.text.size()},
                              clone ? std::string() : Piece(e.original_tag),
                              clone ? std::string() : absl::StrCat("</", TagName(e), ">"),
                              -1});
      spans_.push_back({e.original_tag.data, stack_.empty() ? -1 : stack_.back()});
      clones_[e.original_tag.data] = index;
      stack_.push_back(index);
    }
    for (unsigned i = 0; i < e.children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(e.children.data[i]);
      if (IsText(child)) {
        AddText(child);
      } else {
        AddInline(child);
      }
    }
    const std::optional<Segment> end_tag = OwnEndTag(e, n->parse_flags);
    if (end_tag.has_value()) Consume(end_tag->begin, end_tag->end);
    // The index again: a run restarted inside the element renumbered it.
    HtmlDocument::Inline& in = run_.inlines[stack_.back()];
    stack_.pop_back();
    in.range.end = run_.text.size();
    if (end_tag.has_value()) in.close = Piece(e.original_end_tag);
    if (kept && kept_run == flushed_) {
      Segment range{kept_from, run_.text.size()};
      while (range.begin < range.end && run_.text[range.begin] == ' ') ++range.begin;
      while (range.end > range.begin && run_.text[range.end - 1] == ' ') --range.end;
      // Inside another kept element's text, that one keeps it.
      if (range.begin < range.end && (run_.kept.empty() || run_.kept.back().end <= range.begin)) {
        run_.kept.push_back(range);
      }
    }
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
      if (run.source.begin < run.source.end) pending_.push_back(std::move(run));
    }
  }

  // Ends the run: each inline's parent is the innermost one open when it opened that contains
  // its whole text (a clone's text may reach past the element it opened in: they cross).
  void Flush() {
    HtmlDocument::Run run = std::move(run_);
    run_ = HtmlDocument::Run();
    ++flushed_;
    for (int index : stack_) run.inlines[index].range.end = run.text.size();
    for (size_t i = 0; i < run.inlines.size(); ++i) {
      const Segment range = run.inlines[i].range;
      int parent = spans_[i].opened_under;
      while (parent >= 0 && !(run.inlines[parent].range.begin <= range.begin &&
                              range.end <= run.inlines[parent].range.end)) {
        parent = run.inlines[parent].parent;
      }
      run.inlines[i].parent = parent;
    }
    spans_.clear();
    clones_.clear();
    stack_.clear();
    started_ = false;
    const bool blank = std::all_of(run.text.begin(), run.text.end(), [](char c) {
      return absl::ascii_isspace(static_cast<unsigned char>(c));
    });
    if (!blank) pending_.push_back(std::move(run));
  }

  const absl::string_view html_;
  const HtmlOptions& options_;
  std::vector<HtmlDocument::Run>& runs_;
  std::vector<HtmlDocument::Run> pending_;
  HtmlDocument::Run run_;
  bool started_ = false;                          // Whether run_ has source bytes yet.
  std::vector<Span> spans_;                       // Per inline of run_.
  absl::flat_hash_map<const char*, int> clones_;  // Start tag → inline of run_.
  std::vector<int> stack_;                        // Inlines of run_ open now.
  size_t flushed_ = 0;                            // Runs ended so far.
};

// A run's translation with its inlines around their ranges (text/inline_spans.h), its text
// escaped; an attribute's, escaped for an attribute value.
void RenderRun(const HtmlDocument::Run& run, const HtmlDocument::Translated& t, std::string& out) {
  if (run.attribute || run.inlines.empty()) {
    AppendMarkupEscaped(t.text, run.attribute, out);
    return;
  }
  WriteSpans(
      run.inlines, t,
      [](absl::string_view text, std::string& out) { AppendMarkupEscaped(text, false, out); }, out);
}
}  // namespace

absl::StatusOr<HtmlDocument> HtmlDocument::Parse(std::string html, const HtmlOptions& options) {
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
  RunCollector collector(document.html_, options, document.runs_);
  collector.Walk(output->document);
  collector.Finish();
  return document;
}

std::vector<Segment> HtmlDocument::PlaceByPosition(const Run& run, absl::string_view text) {
  return PlaceSpansByPosition(run.text, run.inlines, text);
}

Segment HtmlDocument::SourceBytes(const Run& run, Segment range) {
  if (run.attribute) {
    if (run.text.size() != run.source.end - run.source.begin) return run.source;
    return {run.source.begin + range.begin, run.source.begin + range.end};
  }
  Segment hull{run.source.end, run.source.begin};
  size_t touched = 0;
  const TextSource* only = nullptr;
  for (size_t i = 0; i < run.text_sources.size(); ++i) {
    const TextSource& piece = run.text_sources[i];
    const size_t end =
        i + 1 < run.text_sources.size() ? run.text_sources[i + 1].text : run.text.size();
    if (end <= range.begin || piece.text >= range.end) continue;
    hull.begin = std::min(hull.begin, piece.source.begin);
    hull.end = std::max(hull.end, piece.source.end);
    ++touched;
    only = &piece;
  }
  if (touched == 0) return run.source;
  if (touched == 1 && only->exact) {
    return {only->source.begin + (range.begin - only->text),
            only->source.begin + (range.end - only->text)};
  }
  return hull;
}

std::vector<HtmlDocument::Run> HtmlDocument::LeaveAsWritten(
    const std::function<bool(const Run&)>& leave) {
  std::vector<Run> left, kept;
  for (Run& run : runs_) (leave(run) ? left : kept).push_back(std::move(run));
  runs_ = std::move(kept);
  return left;
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
