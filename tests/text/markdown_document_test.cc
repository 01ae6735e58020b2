// Markdown documents taken apart into runs of text with their inline markup, and rebuilt around
// translations (text/markdown_document.h). Expected runs and outputs are written by hand from
// what CommonMark and GitHub's extensions say each construct is.
#include "text/markdown_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tests/test_lib/markdown_structure.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every construct the format names: front matter, ATX and setext headings, emphasis, strong,
// strikethrough, code spans, inline and reference links, images, autolinks with and without <>,
// a quote, task and plain list items, a table, fenced and indented code, an HTML block, a hard
// break, an escape, an entity and a reference definition.
constexpr absl::string_view kSample = R"md(---
title: Kept
---
# A *heading* #

A paragraph with **strong**, ~~struck~~, `code` and a [link](http://x.org "Title").
A second line with ![an image](i.png) and <http://a.b> and www.c.org too.

> A quote.

- [ ] A task
- An item

Setext
======

| One | Two |
|-----|-----|
| A \| b | `c` |

```sh
code block
```

    indented code

<div>HTML block</div>

A hard break  
then more, a [reference][r] &amp; \*stars\*.

[r]: http://r.org "R"
)md";

std::vector<std::string> RunTexts(const MarkdownDocument& d) {
  std::vector<std::string> out;
  for (const MarkdownDocument::Run& run : d.runs()) out.push_back(run.text);
  return out;
}

// Each run's text as its translation, its spans where they were.
std::vector<TranslatedRun> Identity(const MarkdownDocument& d) {
  std::vector<TranslatedRun> out;
  for (const MarkdownDocument::Run& run : d.runs()) {
    TranslatedRun& t = out.emplace_back();
    t.text = run.text;
    for (const InlineSpan& in : run.inlines) t.inlines.push_back(in.range);
  }
  return out;
}

// The same upper-cased: a changed text of the same length, spans over the same bytes.
std::vector<TranslatedRun> Upper(const MarkdownDocument& d) {
  std::vector<TranslatedRun> out = Identity(d);
  for (TranslatedRun& t : out) t.text = absl::AsciiStrToUpper(t.text);
  return out;
}

TEST(MarkdownDocumentTest, RunsAreTheTranslatableTextsAndTheRestIsKept) {
  const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(std::string(kSample));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const MarkdownDocument& d = *parsed;
  EXPECT_THAT(RunTexts(d),
              ElementsAre("A heading",
                          "A paragraph with strong, struck, code and a link. A second line with "
                          "an image and http://a.b and www.c.org too.",
                          "A quote.", "A task", "An item", "Setext", "One", "Two", "A \\| b", "c",
                          "A hard break", "then more, a reference &amp; \\*stars\\*."));
  // Translated: the text changes, every other byte stays; code spans and autolinks keep their
  // bytes; a paragraph keeps its lines; a '|' in a cell stays escaped.
  EXPECT_EQ(d.Render(Upper(d)), R"md(---
title: Kept
---
# A *HEADING* #

A PARAGRAPH WITH **STRONG**, ~~STRUCK~~, `code` AND A [LINK](http://x.org "Title").
A SECOND LINE WITH ![AN IMAGE](i.png) AND <http://a.b> AND www.c.org TOO.

> A QUOTE.

- [ ] A TASK
- AN ITEM

SETEXT
======

| ONE | TWO |
|-----|-----|
| A \| B | `c` |

```sh
code block
```

    indented code

<div>HTML block</div>

A HARD BREAK  
THEN MORE, A [REFERENCE][r] &AMP; \*STARS\*.

[r]: http://r.org "R"
)md");
}

TEST(MarkdownDocumentTest, AnUnchangedTranslationGivesTheDocumentBackByteForByte) {
  for (const std::string& markdown : {
           std::string(kSample),
           std::string("***a** b*\n> - a\n>   b *c\n>   d*\n"),
           std::string(
               "[](empty) text ![](x.png) and [a]() `` ` `` \\\n<span>x</span>\r\nline\r\n"),
           std::string("| a | b |\n|---|---|\n| c |\n| d | e | f |\n"),
           std::string("*a*\n![](x) b\n\n[x][y] [z]\n\n[y]: /u\n"),
       }) {
    SCOPED_TRACE(markdown);
    const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const MarkdownDocument& d = *parsed;
    EXPECT_EQ(d.Render(Identity(d)), markdown);
  }
}

// Spans moved by a translation: each goes around its new range, code spans whole, and the text in
// a code span's range is not written (its bytes stand for it).
TEST(MarkdownDocumentTest, SpansGoWhereTheTranslationPutsThem) {
  const absl::StatusOr<MarkdownDocument> parsed =
      MarkdownDocument::Parse("Call `run()` *now* please.\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const MarkdownDocument& d = *parsed;
  ASSERT_EQ(d.runs().size(), 1u);
  ASSERT_EQ(d.runs()[0].text, "Call run() now please.");
  ASSERT_EQ(d.runs()[0].inlines.size(), 2u);
  // "Bitte run() jetzt aufrufen." with "jetzt" for "now" and "run()" where it was aligned.
  const std::string german = "Bitte run() jetzt aufrufen.";
  EXPECT_EQ(d.Render({{german, {{6, 11}, {12, 17}}}}), "Bitte `run()` *jetzt* aufrufen.\n");
  // Where the translation's words for the code span are not its own, its bytes still replace
  // them.
  EXPECT_EQ(d.Render({{"Bitte lauf jetzt.", {{6, 10}, {11, 16}}}}), "Bitte `run()` *jetzt*.\n");
}

// The model's words that would be Markdown syntax where they stand are escaped: inline markers
// anywhere, block markers at a line's start, a heading's closing '#'s; escapes it kept from the
// source, the code span's bytes and the source's markers are written as they are.
TEST(MarkdownDocumentTest, TheModelsWordsAreEscapedWhereTheyWouldBeSyntax) {
  const absl::StatusOr<MarkdownDocument> parsed =
      MarkdownDocument::Parse("# Title #\n\nSay *this* with `code`.\n\n- an item\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const MarkdownDocument& d = *parsed;
  ASSERT_THAT(RunTexts(d), ElementsAre("Title", "Say this with code.", "an item"));
  // Spans: "this" at 4-8, "code" at 14-18 in "Say this with code.".
  EXPECT_EQ(d.Render({{"# C# 1", {}},
                      {"* _a_ [b] <c> `d` ~e~ | f\\g \\* this code.", {{31, 35}, {36, 40}}},
                      {"1. +x 2) #", {}}}),
            "# \\# C# 1 #\n\n"
            "\\* \\_a\\_ \\[b\\] \\<c> &#96;d&#96; \\~e\\~ \\| f\\\\g \\* *this* `code`.\n\n"
            "- 1\\. +x 2) \\#\n");
  // Other block markers at the start, leading spaces (code) dropped, a line break made a space,
  // trailing spaces (a hard break) dropped.
  EXPECT_EQ(
      d.Render({{"> quoted", {}}, {"    = a\nb this code.  ", {{10, 14}, {15, 19}}}, {"-", {}}}),
      "# \\> quoted #\n\n\\= a b *this* `code`.\n\n- \\-\n");
}

// A fake translation holding each character that can be Markdown syntax, at the start, between
// words and at the end of each run: the output, parsed again, has the source's blocks and spans
// (no more, no fewer) and shows the characters as written.
TEST(MarkdownDocumentTest, ATranslationMakesNoMarkupTheSourceDidNotHave) {
  struct Insertion {
    std::string text;
    std::string shows;  // In the rendered text (empty: not checked).
  };
  const std::vector<Insertion> insertions = {
      {"*", "*"},
      {"_", "_"},
      {"`", "`"},
      {"[", "["},
      {"]", "]"},
      {"<", "<"},
      {"\\", "\\"},
      {"#", "#"},
      {">", ">"},
      {"-", "-"},
      {"+", "+"},
      {"=", "="},
      {"1.", "1."},
      {"1)", "1)"},
      {"~", "~"},
      {"|", "|"},
      {"---", "---"},
      {"***", "***"},
      {"___", "___"},
      {"===", "==="},
      {"![x](y)", "![x](y)"},
      {"[x](y)", "[x](y)"},
      {"<b>", "<b>"},
      {"<http://x.y>", "<http://x.y>"},
      {"\\*", "*"},
      {"```", "```"},
      {"~~x~~", "~~x~~"},
      {"x_y_", "x_y_"},
      {"**x**", "**x**"},
      {"# x #", "# x #"},
      {"\n# x", ""},
      {"    x", ""},
      {"x  ", ""},
      {"x\\", "x\\"},
      {"[x]: /y", "[x]: /y"},
      {"12345. x", "12345. x"},
  };
  for (const std::string& markdown : {
           std::string(kSample),
           std::string("A *b* c **d _e_** [f](g) `h` <i>j</i>\n"),
           std::string("> - Quoted item *x*\n>   second line\n"),
           std::string("1. One\n2. Two ~~x~~\n"),
           std::string("# Head #\n\nSetext\n---\n"),
           std::string("| a | b |\n|---|---|\n| c | d |\n"),
           std::string("A line  \nanother line\\\nthird\n"),
       }) {
    const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const MarkdownDocument& d = *parsed;
    const std::string structure = ParseMarkdownStructure(markdown).events;
    for (size_t r = 0; r < d.runs().size(); ++r) {
      const MarkdownDocument::Run& run = d.runs()[r];
      std::vector<size_t> positions = {0};
      for (size_t p = 1; p < run.text.size(); ++p) {
        if (run.text[p - 1] == ' ' && run.text[p] != ' ') positions.push_back(p);
      }
      positions.push_back(run.text.size());
      for (const Insertion& insertion : insertions) {
        for (size_t p : positions) {
          // The insertion and a space between it and the words at p.
          const bool at_end = p == run.text.size();
          const std::string inserted = at_end ? " " + insertion.text : insertion.text + " ";
          std::vector<TranslatedRun> translations = Identity(d);
          TranslatedRun& t = translations[r];
          t.text.insert(p, inserted);
          bool in_fixed = false;
          for (size_t i = 0; i < run.inlines.size(); ++i) {
            const Segment source = run.inlines[i].range;
            Segment& range = t.inlines[i];
            if (run.inlines[i].fixed && source.begin < p && p < source.end) in_fixed = true;
            if (source.begin == source.end) {
              if (source.begin >= p)
                range = {source.begin + inserted.size(), source.end + inserted.size()};
              continue;
            }
            if (source.begin >= p) range.begin += inserted.size();
            if (source.end > p) range.end += inserted.size();
          }
          const std::string rendered = d.Render(translations);
          SCOPED_TRACE(absl::StrCat("run ", r, " at ", p, ": ", rendered));
          const MarkdownStructure again = ParseMarkdownStructure(rendered);
          EXPECT_EQ(again.events, structure);
          if (!insertion.shows.empty() && !in_fixed) {
            EXPECT_THAT(again.text, HasSubstr(insertion.shows));
          }
        }
      }
    }
  }
}

// The source's emphasis delimiters open and close where they did whatever characters the
// translation puts beside them (CommonMark's flanking rules: a '*' after a letter and before a
// quote does not open, a '_' between letters neither opens nor closes, a '*' that could both
// open and close pairs by the rule of three). The expected outputs are written from those rules;
// md4c reads each as the source's blocks and spans.
TEST(MarkdownDocumentTest, EmphasisKeepsOpeningAndClosingBesideTheTranslationsCharacters) {
  struct Case {
    std::string markdown;
    TranslatedRun translation;
    std::string rendered;
  };
  const std::vector<Case> cases = {
      // Quotes inside the emphasis, letters outside (a language without spaces): the quotes go
      // outside the markers.
      {"Press *\"OK\"* now.\n", {"今すぐ\"OK\"を押す", {{9, 13}}}, "今すぐ\"*OK*\"を押す\n"},
      // Punctuation that is not ASCII stays inside: a space on the outer side of each marker.
      {"Press *\"OK\"* now.\n", {"今すぐ「OK」を押す", {{9, 17}}}, "今すぐ *「OK」* を押す\n"},
      // The fuzz regression escaped_words_beside_emphasis.md, shortened: "***" was one run of
      // three (a literal '*' and two openers), so the closer between "x" and "y", which could
      // also open, paired by the rule of three (3 + 1); the literal one escaped leaves a run of
      // two (2 + 1 is a multiple of three): a space after the closer makes it only close (and
      // the '+' goes outside the outer one).
      {"***x*y+*\n", {"*XY+", {{1, 4}, {1, 2}}}, "\\***X* Y*+\n"},
      // '_' inside a word neither opens nor closes.
      {"a _b_ c\n", {"ab c", {{1, 2}}}, "a _b_ c\n"},
      // A closer and the next opener side by side would be one run of two.
      {"*a* *b*\n", {"AB", {{0, 1}, {1, 2}}}, "*A* *B*\n"},
      // Spaces inside the markers go outside them.
      {"x *y* z\n", {"X  Y  Z", {{1, 5}}}, "X  *Y*  Z\n"},
      // Strong around emphasis, both around the same word: "***X***" would be emphasis around
      // strong, and "**X**" for emphasis twice strong; the inner one's markers become '_'s.
      {"**a *b* c**\n", {"X", {{0, 1}, {0, 1}}}, "**_X_**\n"},
      {"*a *b* c*\n", {"X", {{0, 1}, {0, 1}}}, "*_X_*\n"},
      // A space before a chain of openers (and after a chain of closers), not inside it, where
      // it would keep the outer one from opening (a fuzz regression,
      // space_before_a_chain_of_openers.md).
      {"a *__b__* c\n", {"A「B」C", {{1, 8}, {1, 8}}}, "A *__「B」__* C\n"},
      // Strikethrough: a '~~' after a letter and before a space would not open.
      {"a ~~b~~ c\n", {"A B C", {{1, 3}}}, "A ~~B~~ C\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.markdown);
    const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(c.markdown);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const std::string rendered = parsed->Render({c.translation});
    EXPECT_EQ(rendered, c.rendered);
    EXPECT_EQ(ParseMarkdownStructure(rendered).events, ParseMarkdownStructure(c.markdown).events);
  }
}

// A backtick the source left unmatched opens a code span if a backtick string as long follows
// in the paragraph, escaped or not (backslashes are literal in code spans): the translation's
// backticks are written as character references, which close nothing (a fuzz regression,
// escaped_backtick_after_unmatched_one.md).
TEST(MarkdownDocumentTest, ATranslationsBacktickClosesNoCodeSpanTheSourceLeftOpen) {
  const std::string markdown = "a ` b\\\nc\n";
  const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_THAT(RunTexts(*parsed), ElementsAre("a ` b", "c"));
  for (const std::string translated : {"C `", "C \\`"}) {
    const std::string rendered = parsed->Render({{"a ` b", {}}, {translated, {}}});
    EXPECT_EQ(rendered, "a ` b\\\nC &#96;\n");
    const MarkdownStructure again = ParseMarkdownStructure(rendered);
    EXPECT_EQ(again.events, ParseMarkdownStructure(markdown).events);
    EXPECT_EQ(again.text, "a ` bC `");
  }
}

// A hard line break inside a span is a space in the run's text (outside any, it ends the run):
// its bytes, with the next line's container markers, are written in the translation too, at
// the space nearest its relative position, or between the characters there (a fuzz regression,
// hard_break_inside_emphasis.md).
TEST(MarkdownDocumentTest, AHardBreakInsideASpanIsWrittenInItsTranslation) {
  struct Case {
    std::string markdown;
    TranslatedRun translation;
    std::string rendered;
  };
  const std::vector<Case> cases = {
      {"*a\\\nb*\n", {"X Y", {{0, 3}}}, "*X\\\nY*\n"},
      {"> *a  \n> b*\n", {"X Y Z", {{0, 5}}}, "> *X  \n> Y Z*\n"},
      {"*a\\\nb*\n", {"XY", {{0, 2}}}, "*X\\\nY*\n"},
      // Two, each where it was between the words (a fuzz regression,
      // two_hard_breaks_in_emphasis.md).
      {"*a\\\nb\\\nc*\n", {"X Y Z", {{0, 5}}}, "*X\\\nY\\\nZ*\n"},
      // A soft break after it finds no word of its own: it is left out rather than written
      // after the hard one (a blank line; a fuzz regression, breaks_around_spaces.md).
      {"*a\\\nb\nc*\n", {"X  Y", {{0, 4}}}, "*X\\\nY*\n"},
      // The emphasis keeps what is not a space on each side of it, so that no marker starts or
      // ends a line (a fuzz regression, hard_break_at_the_end_of_emphasis.md).
      {"*a\\\nb*\n", {"X  .", {{0, 4}}}, "*X\\\n.*\n"},
      // Before the inline HTML that followed it, although its relative position (3 of 19) is
      // nearer the space after it (a fuzz regression, hard_break_before_inline_html.md).
      {"*a\\\n<b>c</b> d*\n",
       {"X YYY ZZZZZZZZZZZZZ", {{0, 19}, {2, 2}, {5, 5}}},
       "*X\\\n<b>YYY</b> ZZZZZZZZZZZZZ*\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.markdown);
    const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(c.markdown);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ASSERT_EQ(parsed->runs().size(), 1u);
    const std::string rendered = parsed->Render({c.translation});
    EXPECT_EQ(rendered, c.rendered);
    EXPECT_EQ(ParseMarkdownStructure(rendered).events, ParseMarkdownStructure(c.markdown).events);
  }
}

// A paragraph's lines kept in its translation, ended by a CR alone as in the source: a
// block marker starting the next one is escaped there too ("=" would make the line before a
// heading; a fuzz regression, line_after_a_carriage_return.md).
TEST(MarkdownDocumentTest, ATranslationKeepsItsLinesEndedAsInTheSource) {
  const std::string markdown = "a\rb\r";
  const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_THAT(RunTexts(*parsed), ElementsAre("a b"));
  const std::string rendered = parsed->Render({{"X = Y", {}}});
  EXPECT_EQ(rendered, "X\r\\= Y\r");
  EXPECT_EQ(ParseMarkdownStructure(rendered).events, ParseMarkdownStructure(markdown).events);
}

// The HTML element tags pandoc (a CommonMark reader nobody here wrote) makes of `markdown`, in
// order: its blocks and spans without their text; empty if pandoc is not installed.
std::string PandocTags(const std::string& markdown) {
  char path[] = "/tmp/markdown_document_test_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  const bool written =
      write(fd, markdown.data(), markdown.size()) == static_cast<ssize_t>(markdown.size());
  close(fd);
  std::string html;
  if (written) {
    FILE* pipe =
        popen(absl::StrCat("pandoc -f commonmark_x -t html ", path, " 2>/dev/null").c_str(), "r");
    if (pipe != nullptr) {
      char buffer[4096];
      for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) html.append(buffer, n);
      if (pclose(pipe) != 0) html.clear();
    }
  }
  unlink(path);
  std::string tags;
  for (size_t open = html.find('<'); open != std::string::npos; open = html.find('<', open + 1)) {
    tags += html.substr(open, html.find('>', open) + 1 - open);
  }
  return tags;
}

// The fuzz regression lazy_quote_list.md: a list item's paragraph in a block quote, over lines
// quoted and lazy, then two blank lines and more of the item. Its translation keeps the
// paragraph's lines, their container markers (or none, the lazy one) as written, and CommonMark
// reads the output as the source: the item holds both paragraphs (pandoc says so).
//
// md4c 0.4.8 reads such an item so only at most offsets: its check that an item began with two
// blank lines reads the paragraph's last line as a block header, and where that line starts at
// an offset of 4 modulo 256 the header says "list item" and the list ends there. So the
// translation of a paragraph before the list (254 bytes for 1, here) can move it there, and
// ParseMarkdownStructure reads around that.
TEST(MarkdownDocumentTest, AQuotedListItemKeepsItsLinesAndParagraphs) {
  const std::string markdown = "> - a\n>   b\n:\n> c\n>\n>\n>   d\n";
  const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_THAT(RunTexts(*parsed), ElementsAre("a b : c", "d"));
  const std::string rendered = parsed->Render(Upper(*parsed));
  EXPECT_EQ(rendered, "> - A\n>   B\n:\n> C\n>\n>\n>   D\n");
  EXPECT_EQ(ParseMarkdownStructure(rendered).events, ParseMarkdownStructure(markdown).events);
  EXPECT_EQ(ParseMarkdownStructure(markdown).events, "B0(B1(B2(B4(B9()B9()))))");

  const std::string after = "x\n\n> - a\n>\n>\n>   b\n";
  const absl::StatusOr<MarkdownDocument> list = MarkdownDocument::Parse(after);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_THAT(RunTexts(*list), ElementsAre("x", "a", "b"));
  const std::string moved = list->Render({{std::string(254, 'X'), {}}, {"A", {}}, {"B", {}}});
  ASSERT_EQ(moved.find('A'), 260u);
  EXPECT_EQ(ParseMarkdownStructure(moved).events, ParseMarkdownStructure(after).events);
  EXPECT_EQ(ParseMarkdownStructure(after).events, "B0(B9()B1(B2(B4(B9()B9()))))");
  EXPECT_EQ(ParseMarkdownStructureOnce(moved).events, "B0(B9()B1(B2(B4())B9()))");

  const std::string tags = PandocTags(markdown);
  if (tags.empty()) GTEST_SKIP() << "pandoc is not installed";
  EXPECT_EQ(tags, "<blockquote><ul><li><p></p><p></p></li></ul></blockquote>");
  EXPECT_EQ(PandocTags(rendered), tags);
  EXPECT_EQ(PandocTags(moved), PandocTags(after));
  EXPECT_EQ(PandocTags(after), "<p></p><blockquote><ul><li><p></p><p></p></li></ul></blockquote>");
}

// A paragraph md4c reports in events that do not say what its bytes are (raw inline HTML over a
// quote's lines, "<b\n> c>", given as one text without the "> "): kept as written, and its bytes,
// from its first word to its last, listed as untranslated; the paragraphs around it are runs.
TEST(MarkdownDocumentTest, ABlockItsEventsDoNotMapIsListedUntranslated) {
  const std::string markdown = "Before.\n\n> a <b\n> c> d\n\nAfter.\n";
  const absl::StatusOr<MarkdownDocument> parsed = MarkdownDocument::Parse(markdown);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const MarkdownDocument& d = *parsed;
  EXPECT_THAT(RunTexts(d), ElementsAre("Before.", "After."));
  const size_t quoted = markdown.find("a <b");
  EXPECT_THAT(d.untranslated(), ElementsAre(Segment{quoted, markdown.find(" d\n") + 2}));
  EXPECT_EQ(d.Render(Upper(d)), "BEFORE.\n\n> a <b\n> c> d\n\nAFTER.\n");

  // A fuzz regression: a code span over a quote's lazy and quoted lines, whose texts md4c points
  // at other bytes (its closing backticks): no closing marker is found, so the list item is kept,
  // from its first word to the end.
  const std::string code = "> - a\n>   b\n8\n> c2 )\n`` pa</p> - a\n>   b\n8\n>  `` ` `";
  const absl::StatusOr<MarkdownDocument> kept = MarkdownDocument::Parse(code);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(kept->runs(), ::testing::IsEmpty());
  EXPECT_THAT(kept->untranslated(), ElementsAre(Segment{code.find('a'), code.size()}));
}

TEST(MarkdownDocumentTest, HostileInputIsRefusedNamingThePartAndTheLimit) {
  std::string deep;
  for (size_t i = 0; i <= MarkdownDocument::kMaxDepth; ++i) deep += "> ";
  deep += "a\n";
  absl::Status status = MarkdownDocument::Parse(deep).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat("the limit is ", MarkdownDocument::kMaxDepth)));

  std::string emphasis;
  for (size_t i = 0; i <= MarkdownDocument::kMaxDepth; ++i) emphasis += "*a ";
  emphasis += "b";
  for (size_t i = 0; i <= MarkdownDocument::kMaxDepth; ++i) emphasis += "*";
  status = MarkdownDocument::Parse(emphasis).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("nests"));

  std::string table = "| a | b |\n|---|---|\n";  // Two cells, then two a row.
  for (size_t i = 0; i < MarkdownDocument::kMaxTableCells / 2; ++i) table += "| c | d |\n";
  status = MarkdownDocument::Parse(table).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat("table of more than ", MarkdownDocument::kMaxTableCells)));

  status = MarkdownDocument::Parse(
               absl::StrCat("a\n", std::string(MarkdownDocument::kMaxLineBytes + 1, 'x')))
               .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat("line 2 has ", MarkdownDocument::kMaxLineBytes + 1,
                                     " bytes; the limit is ", MarkdownDocument::kMaxLineBytes)));
}

}  // namespace
}  // namespace mtserve
