// HTML documents taken apart into runs of text and rebuilt (text/html_document.h), on
// hand-written HTML. Expected runs and outputs are written from the HTML's meaning.
#include "text/html_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Texts(const HtmlDocument& d) {
  std::vector<std::string> out;
  for (const HtmlDocument::Run& run : d.runs()) out.push_back(run.text);
  return out;
}

// Each run "translated" to itself with its inlines where they were: the document comes back.
std::vector<HtmlDocument::Translated> Identity(const HtmlDocument& d) {
  std::vector<HtmlDocument::Translated> out;
  for (const HtmlDocument::Run& run : d.runs()) {
    HtmlDocument::Translated t{run.text, {}};
    for (const HtmlDocument::Inline& i : run.inlines) t.inlines.push_back(i.range);
    out.push_back(t);
  }
  return out;
}

// Each run upper-cased (ASCII), inlines where they were.
std::vector<HtmlDocument::Translated> Upper(const HtmlDocument& d) {
  std::vector<HtmlDocument::Translated> out = Identity(d);
  for (HtmlDocument::Translated& t : out) t.text = absl::AsciiStrToUpper(t.text);
  return out;
}

HtmlDocument Parse(const std::string& html) {
  absl::StatusOr<HtmlDocument> d = HtmlDocument::Parse(html);
  EXPECT_TRUE(d.ok()) << d.status();
  return *std::move(d);
}

TEST(HtmlDocumentTest, BlocksAreRunsAndTheRestIsKept) {
  const std::string html =
      "<!DOCTYPE html>\n<html><head><title>A page</title><style>p { color: red; }</style>"
      "</head>\n<body>\n  <h1>Dogs</h1>\n  <p>A dog runs.  Two cats sleep.</p>\n"
      "  <!-- a comment -->\n  <ul><li>One</li><li>Two</li></ul>\n"
      "  <table><tr><td>Cell</td><td>Other</td></tr></table>\n"
      "  <script>var x = \"A dog.\";</script>\n</body></html>\n";
  const HtmlDocument d = Parse(html);
  EXPECT_THAT(Texts(d), ElementsAre("A page", "Dogs", "A dog runs.  Two cats sleep.", "One", "Two",
                                    "Cell", "Other"));
  EXPECT_EQ(d.Render(Identity(d)), html);
  EXPECT_EQ(d.Render(Upper(d)),
            "<!DOCTYPE html>\n<html><head><title>A PAGE</title><style>p { color: red; }</style>"
            "</head>\n<body>\n  <h1>DOGS</h1>\n  <p>A DOG RUNS.  TWO CATS SLEEP.</p>\n"
            "  <!-- a comment -->\n  <ul><li>ONE</li><li>TWO</li></ul>\n"
            "  <table><tr><td>CELL</td><td>OTHER</td></tr></table>\n"
            "  <script>var x = \"A dog.\";</script>\n</body></html>\n");
}

TEST(HtmlDocumentTest, RunsLeftAsWrittenKeepTheirBytes) {
  const std::string html = "<p>One <b>dog</b>.</p><p>Two &amp; cats.</p><p>Three.</p>";
  HtmlDocument d = Parse(html);
  const std::vector<HtmlDocument::Run> left =
      d.LeaveAsWritten([](const HtmlDocument::Run& run) { return run.text != "Three."; });
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].text, "One dog.");
  EXPECT_EQ(left[1].text, "Two & cats.");
  EXPECT_THAT(Texts(d), ElementsAre("Three."));
  EXPECT_EQ(d.Render(Upper(d)), "<p>One <b>dog</b>.</p><p>Two &amp; cats.</p><p>THREE.</p>");
}

TEST(HtmlDocumentTest, InlineMarkupIsTakenOutAndPutBackAroundItsRange) {
  const std::string html =
      "<p>A <b>big <i>brown</i></b> dog <a href=\"/x?a=1&amp;b=2\" class=c>runs</a>.</p>";
  const HtmlDocument d = Parse(html);
  ASSERT_EQ(d.runs().size(), 1u);
  const HtmlDocument::Run& run = d.runs()[0];
  EXPECT_EQ(run.text, "A big brown dog runs.");
  ASSERT_EQ(run.inlines.size(), 3u);
  EXPECT_EQ(run.inlines[0].open, "<b>");
  EXPECT_EQ(run.inlines[0].range, (Segment{2, 11}));
  EXPECT_EQ(run.inlines[1].open, "<i>");
  EXPECT_EQ(run.inlines[1].parent, 0);
  EXPECT_EQ(run.inlines[1].range, (Segment{6, 11}));
  EXPECT_EQ(run.inlines[2].open, "<a href=\"/x?a=1&amp;b=2\" class=c>");
  EXPECT_EQ(run.inlines[2].close, "</a>");
  EXPECT_EQ(run.inlines[2].range, (Segment{16, 20}));
  EXPECT_EQ(d.Render(Identity(d)), html);

  // A translation with the words elsewhere: each tag goes around its target range, attributes
  // and entities in the tags as written.
  const std::string german = "Ein großer brauner Hund rennt.";
  // Bytes: "großer brauner" = [4, 19), "brauner" = [12, 19), "rennt" = [25, 30) (ß is two).
  const std::string out = d.Render({{german, {{4, 19}, {12, 19}, {25, 30}}}});
  EXPECT_EQ(out,
            "<p>Ein <b>großer <i>brauner</i></b> Hund <a href=\"/x?a=1&amp;b=2\" "
            "class=c>rennt</a>.</p>");
}

// Until placement follows the decoder's alignment: by relative position, widened to whole words.
TEST(HtmlDocumentTest, PlaceByPositionCoversWholeWords) {
  const HtmlDocument d = Parse("<p>A <b>big</b> dog <i>runs on the beach.</i></p>");
  ASSERT_EQ(d.runs().size(), 1u);
  // "A big dog runs on the beach." (28 bytes): <b> [2, 5), <i> [10, 28). Scaled to
  // "Ein großer Hund rennt am Strand." (32 bytes, ß is two): [2, 6) touches "Ein" and "großer",
  // and [11, 32) starts at the space before "Hund" (so at "Hund"). The decoder's alignment would
  // give "großer" and "rennt am Strand." (what placement by position cannot know).
  const std::string german = "Ein großer Hund rennt am Strand.";
  const std::vector<Segment> ranges = HtmlDocument::PlaceByPosition(d.runs()[0], german);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(german.substr(ranges[0].begin, ranges[0].end - ranges[0].begin), "Ein großer");
  EXPECT_EQ(german.substr(ranges[1].begin, ranges[1].end - ranges[1].begin),
            "Hund rennt am Strand.");
  // An inline over the whole run goes over the whole translation.
  const HtmlDocument whole = Parse("<li><a href=x>A dog</a></li>");
  EXPECT_THAT(HtmlDocument::PlaceByPosition(whole.runs()[0], "Ein Hund"),
              ElementsAre(Segment{0, 8}));
}

TEST(HtmlDocumentTest, RangesThatWouldBreakNestingAreClamped) {
  const HtmlDocument d = Parse("<p><b>big <i>dog</i></b> and <u>cat</u></p>");
  ASSERT_EQ(d.runs().size(), 1u);
  // The child outside its parent, the sibling overlapping the first, one past the end.
  const std::string out = d.Render({{"grosser Hund und Katze", {{0, 6}, {8, 20}, {4, 99}}}});
  // <i> clamped into <b> ([0, 6)) at its end; <u> after <b>, to the text's end.
  EXPECT_EQ(out, "<p><b>grosse<i></i></b><u>r Hund und Katze</u></p>");
  // Whatever the ranges, the output parses back to the same text.
  const HtmlDocument again = Parse(out);
  ASSERT_EQ(again.runs().size(), 1u);
  EXPECT_EQ(again.runs()[0].text, "grosser Hund und Katze");
}

TEST(HtmlDocumentTest, TextIsEscapedAndEntitiesDecoded) {
  const HtmlDocument d = Parse("<p>Fish &amp; chips &lt;3 &eacute;t&eacute;</p>");
  ASSERT_EQ(d.runs().size(), 1u);
  EXPECT_EQ(d.runs()[0].text, "Fish & chips <3 été");
  EXPECT_EQ(d.Render({{"Fisch & Pommes <3 \"Sommer\"", {}}}),
            "<p>Fisch &amp; Pommes &lt;3 \"Sommer\"</p>");
}

TEST(HtmlDocumentTest, AltAndTitleAreTranslatedInPlace) {
  const std::string html =
      "<div title='A tip'><img src=\"dog.png\" alt=\"A dog\"> <p>Text.</p></div>";
  const HtmlDocument d = Parse(html);
  EXPECT_THAT(Texts(d), ElementsAre("A tip", "A dog", "Text."));
  EXPECT_TRUE(d.runs()[0].attribute);
  EXPECT_EQ(d.Render({{"Ein \"Tipp\"", {}}, {"Ein Hund", {}}, {"Text!", {}}}),
            "<div title='Ein &quot;Tipp&quot;'><img src=\"dog.png\" alt=\"Ein Hund\"> "
            "<p>Text!</p></div>");
}

// Found by tests/fuzz/html_document_fuzzer.cc: gumbo leaves a value-less attribute's value
// position unset, and the run made from it pointed anywhere (Render then threw out_of_range).
TEST(HtmlDocumentTest, AltAndTitleWithoutValueAreLeftAsWritten) {
  const std::string html = "<p title>A dog.</p><img src=\"dog.png\" alt><img alt=\"\" title=''>";
  const HtmlDocument d = Parse(html);
  EXPECT_THAT(Texts(d), ElementsAre("A dog."));
  EXPECT_EQ(d.Render(Upper(d)),
            "<p title>A DOG.</p><img src=\"dog.png\" alt><img alt=\"\" title=''>");
}

TEST(HtmlDocumentTest, UntranslatablePartsAreLeftAlone) {
  const std::string html =
      "<p>Run <code>ls -l</code> now.</p><pre>  keep\n  this</pre>"
      "<p translate=\"no\">Brand Name</p><div>Say <span translate=no>Foo</span> twice.</div>";
  const HtmlDocument d = Parse(html);
  // Untranslatable elements end a run: their text is neither translated nor moved.
  EXPECT_THAT(Texts(d), ElementsAre("Run ", " now.", "Say ", " twice."));
  EXPECT_EQ(
      d.Render(Upper(d)),
      "<p>RUN <code>ls -l</code> NOW.</p><pre>  keep\n  this</pre>"
      "<p translate=\"no\">Brand Name</p><div>SAY <span translate=no>Foo</span> TWICE.</div>");
}

// The source's wrapping inside a paragraph is a space to HTML, and so to translation: a sentence
// wrapped over lines is one sentence.
TEST(HtmlDocumentTest, WrappedLinesInAParagraphAreSpaces) {
  const HtmlDocument d = Parse("<p>A dog\r\n  runs <b>on\nthe</b>\tbeach.</p>");
  EXPECT_THAT(Texts(d), ElementsAre("A dog   runs on the beach."));
}

TEST(HtmlDocumentTest, LineBreaksAndBlockChildrenEndRuns) {
  const HtmlDocument d = Parse("<div>First line<br>Second line<p>Inner.</p>Tail.</div>");
  EXPECT_THAT(Texts(d), ElementsAre("First line", "Second line", "Inner.", "Tail."));
}

TEST(HtmlDocumentTest, MalformedHtmlNeverCrashesAndKeepsBytesOutsideRuns) {
  std::vector<std::string> inputs = {
      "",
      "plain text",
      "<p>unclosed <b>bold",
      "<b><p>misnested</b></p>",
      "</p></p>",
      "<table><p>foster</p><tr><td>x</td></tr></table>",
      "<p>a<!-- c -->b</p>",
      "<<<>>>&&&",
      "<p title=\"unterminated>text</p>",
      std::string("<p>\xff\xfe bad</p>"),
  };
  // And random soup of tag fragments, text and entities.
  const std::vector<std::string> parts = {
      "<p>",  "</p>", "<b>",  "</b>",    "<i>",    "</i>", "<a href=x>", "</a>",
      "<br>", "<!--", "-->",  "&amp;",   "&",      "<",    ">",          "A dog.",
      " ",    "\n",   "<td>", "<table>", "<code>", "\""};
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    std::string html;
    for (int j = static_cast<int>(rng() % 30); j > 0; --j) html += parts[rng() % parts.size()];
    inputs.push_back(html);
  }
  for (const std::string& html : inputs) {
    SCOPED_TRACE(html);
    const HtmlDocument d = Parse(html);
    const std::string out = d.Render(Identity(d));
    // Runs never overlap and lie inside the document.
    size_t end = 0;
    for (const HtmlDocument::Run& run : d.runs()) {
      EXPECT_LE(end, run.source.begin);
      EXPECT_LE(run.source.end, html.size());
      end = run.source.end;
    }
    // Rendering again what was rendered is stable.
    const HtmlDocument again = Parse(out);
    EXPECT_EQ(again.Render(Identity(again)), out);
  }
}

// The start tags of `html` as written, each once (tests' HTML has no '>' in attribute values).
std::set<std::string> StartTags(const std::string& html) {
  std::set<std::string> tags;
  for (size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    if (i + 1 < html.size() && absl::ascii_isalpha(static_cast<unsigned char>(html[i + 1]))) {
      tags.insert(html.substr(i, html.find('>', i) + 1 - i));
    }
  }
  return tags;
}

// Whether the inline elements of `html` nest: each end tag closes the innermost element open, or
// names none that is open at all (an end tag the parser ignores, as it was in the input).
bool InlinesNest(const std::string& html) {
  std::vector<std::string> open;
  for (size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    const bool end = html.compare(i, 2, "</") == 0;
    size_t name = i + (end ? 2 : 1);
    size_t stop = name;
    while (stop < html.size() && absl::ascii_isalpha(static_cast<unsigned char>(html[stop]))) {
      ++stop;
    }
    const std::string tag = html.substr(name, stop - name);
    if (tag.empty() || tag == "p" || tag == "br" || tag == "div") continue;
    if (!end) {
      open.push_back(tag);
    } else if (!open.empty() && open.back() == tag) {
      open.pop_back();
    } else if (std::find(open.begin(), open.end(), tag) != open.end()) {
      return false;
    }
  }
  return open.empty();
}

// Misnested inline tags, as real pages have them. The parser repairs them (the HTML standard's
// adoption agency algorithm) by closing a formatting element where another's end tag is and
// opening a clone of it after: the sentence is still one run, and the clone one span with its
// original, so that the text translates as its sentence does. The output nests them as the parser
// built them (written expectations: what a browser's DOM serialises to).
TEST(HtmlDocumentTest, MisnestedTagsAreOneRunAndComeOutNested) {
  struct Case {
    std::string html;
    std::string text;
    std::string rendered;  // Identity: the run's text and spans where they were.
  };
  const std::vector<Case> cases = {
      {"<p>A <b>man <i>rides</b> a</i> bike.</p>", "A man rides a bike.",
       "<p>A <b>man <i>rides</i></b><i> a</i> bike.</p>"},
      {"<p><font color=red>Red <b>bold</font> text</b> end.</p>", "Red bold text end.",
       "<p><font color=red>Red <b>bold</b></font><b> text</b> end.</p>"},
      {"<p><i>1 <b>2 <u>3</b> 4</u> 5</i></p>", "1 2 3 4 5",
       "<p><i>1 <b>2 <u>3</u></b><u> 4</u> 5</i></p>"},
      // Properly nested markup comes back byte for byte.
      {"<p>A <b>big <i>brown</i></b> dog.</p>", "A big brown dog.",
       "<p>A <b>big <i>brown</i></b> dog.</p>"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.html);
    const HtmlDocument d = Parse(c.html);
    EXPECT_THAT(Texts(d), ElementsAre(c.text));
    const std::string out = d.Render(Identity(d));
    EXPECT_EQ(out, c.rendered);
    EXPECT_TRUE(InlinesNest(out));
    EXPECT_EQ(StartTags(out), StartTags(c.html));
    // The output is what it says it is: parsed again, the same text, rendered unchanged.
    const HtmlDocument again = Parse(out);
    EXPECT_THAT(Texts(again), ElementsAre(c.text));
    EXPECT_EQ(again.Render(Identity(again)), out);
  }
  // The spans of the first: <b> over "man rides", <i> (the element and its clone) over
  // "rides a"; they cross, so neither is the other's parent.
  const HtmlDocument d = Parse(cases[0].html);
  ASSERT_EQ(d.runs()[0].inlines.size(), 2u);
  EXPECT_EQ(d.runs()[0].inlines[0].range, (Segment{2, 11}));
  EXPECT_EQ(d.runs()[0].inlines[1].range, (Segment{6, 13}));
  EXPECT_EQ(d.runs()[0].inlines[1].parent, -1);
  // Translated, the spans go where the translation puts their words, and still nest: "rides a"
  // placed over "fährt ein", "man rides" over "Mann fährt".
  const std::string german = "Ein Mann fährt ein Fahrrad.";
  // Bytes: "Mann fährt" = [4, 15) (ä is two), "fährt ein" = [9, 19).
  EXPECT_EQ(d.Render({{german, {{4, 15}, {9, 19}}}}),
            "<p>Ein <b>Mann <i>fährt</i></b><i> ein</i> Fahrrad.</p>");
}

// Markup the parser ignores or leaves around no text keeps its place among the words: a stray
// end tag is kept as written, a link in a link is closed where the parser closed it, an empty
// element stays empty (not moved onto a word).
TEST(HtmlDocumentTest, StrayEndTagsNestedLinksAndEmptyElementsKeepTheirPlace) {
  {
    const std::string html = "<p>Hello <b>big</span> world</b>.</p>";
    const HtmlDocument d = Parse(html);
    EXPECT_THAT(Texts(d), ElementsAre("Hello big world."));
    EXPECT_EQ(d.Render(Identity(d)), html);
    EXPECT_EQ(d.Render(Upper(d)), "<p>HELLO <b>BIG</span> WORLD</b>.</p>");
  }
  {
    const std::string html = "<p>Go</em> home.</p>";  // Between runs of text, not in one.
    const HtmlDocument d = Parse(html);
    EXPECT_THAT(Texts(d), ElementsAre("Go home."));
    EXPECT_EQ(d.Render(Upper(d)), "<p>GO</em> HOME.</p>");
  }
  {
    const std::string html = "<p>See <a href=1>this <a href=2>that</a> page</a>.</p>";
    const HtmlDocument d = Parse(html);
    EXPECT_THAT(Texts(d), ElementsAre("See this that page."));
    // The first link ends where the second starts (as the parser ends it), and says so.
    EXPECT_EQ(d.Render(Identity(d)), "<p>See <a href=1>this </a><a href=2>that</a> page</a>.</p>");
  }
  {
    const std::string html = "<p>Click <a name=\"top\"></a>here now.</p>";
    const HtmlDocument d = Parse(html);
    ASSERT_EQ(d.runs().size(), 1u);
    EXPECT_EQ(d.runs()[0].text, "Click here now.");
    ASSERT_EQ(d.runs()[0].inlines.size(), 1u);
    EXPECT_EQ(d.runs()[0].inlines[0].range, (Segment{6, 6}));
    // Placed by position: "Click " is 6 of 15 bytes; 6/15 of "Klicken Sie jetzt hier." (23)
    // is byte 9, inside "Sie": the empty element goes before that word, not around it.
    const std::string german = "Klicken Sie jetzt hier.";
    const std::vector<Segment> placed = HtmlDocument::PlaceByPosition(d.runs()[0], german);
    EXPECT_THAT(placed, ElementsAre(Segment{8, 8}));
    EXPECT_EQ(d.Render({{german, placed}}), "<p>Klicken <a name=\"top\"></a>Sie jetzt hier.</p>");
    // Wherever a translation puts it, it stays empty.
    EXPECT_EQ(d.Render({{german, {{0, 7}}}}), "<p><a name=\"top\"></a>Klicken Sie jetzt hier.</p>");
  }
}

// Whatever misnesting, the output nests its inline elements and keeps every start tag the input
// wrote; random soup of inline tags checks the property beyond the written cases.
TEST(HtmlDocumentTest, AnyInlineSoupComesOutNestedWithItsTags) {
  const std::vector<std::string> parts = {
      "<b>",        "</b>", "<i>",  "</i>", "<u>",    "</u>", "<em>",           "</em>",
      "<a href=1>", "</a>", "dog ", "cat ", "runs. ", "A ",   "<span class=x>", "</span>"};
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string html = "<p>";
    for (int j = static_cast<int>(rng() % 16); j > 0; --j) html += parts[rng() % parts.size()];
    html += "end.</p>";
    SCOPED_TRACE(html);
    const HtmlDocument d = Parse(html);
    // The paragraph is one run: no tag ends it.
    ASSERT_EQ(d.runs().size(), 1u);
    const std::string out = d.Render(Upper(d));
    EXPECT_TRUE(InlinesNest(out)) << out;
    EXPECT_EQ(StartTags(out), StartTags(html)) << out;
    const HtmlDocument again = Parse(out);
    EXPECT_THAT(
        Texts(again),
        ElementsAre(d.runs()[0].text.empty() ? "" : absl::AsciiStrToUpper(d.runs()[0].text)));
  }
}

std::string Repeat(absl::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) absl::StrAppend(&out, piece);
  return out;
}

// Deep nesting costs gumbo time by depth times tags, and the walk of its tree stack space: 100,000
// nested <div>s (500 KB, under the default text limit) took a server down.
TEST(HtmlDocumentTest, ElementsNestedDeeperThanTheLimitAreRefused) {
  constexpr int kLimit = static_cast<int>(HtmlDocument::kMaxDepth);
  EXPECT_EQ(Texts(Parse(Repeat("<div>", kLimit) + "A dog.")), std::vector<std::string>{"A dog."});
  for (const int depth : {kLimit + 1, 100000}) {
    const absl::StatusOr<HtmlDocument> refused =
        HtmlDocument::Parse(Repeat("<div>", depth) + "A dog.");
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
    EXPECT_THAT(refused.status().message(),
                ::testing::HasSubstr(
                    absl::StrCat("nests elements ", depth, " deep; the limit is ", kLimit)));
  }
  // Closed elements do not add up, however many.
  EXPECT_TRUE(HtmlDocument::Parse(Repeat("<div><b>a</b></div>", 20000)).ok());
}

// gumbo looks each attribute's name up among the element's others: 1 MB of distinct names on one
// element took 135 CPU-seconds.
TEST(HtmlDocumentTest, ElementsWithMoreAttributesThanTheLimitAreRefused) {
  constexpr int kLimit = static_cast<int>(HtmlDocument::kMaxAttributes);
  auto element = [](int attributes, absl::string_view first) {
    std::string html = absl::StrCat("<p>A <b ", first);
    for (int i = 0; i < attributes; ++i) absl::StrAppend(&html, " a", i, "=", i);
    return html + ">dog</b>.</p>";
  };
  const absl::StatusOr<HtmlDocument> at_limit = HtmlDocument::Parse(element(kLimit - 1, "x"));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(Texts(*at_limit), std::vector<std::string>{"A dog."});
  for (const absl::string_view first : {"x", "title=\">\"", "title='a > b'", "/ x"}) {
    const absl::StatusOr<HtmlDocument> refused = HtmlDocument::Parse(element(kLimit, first));
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << first;
    EXPECT_THAT(refused.status().message(),
                ::testing::HasSubstr(absl::StrCat("an element with ", kLimit + 1,
                                                  " attributes (the tag at byte 5); the limit is ",
                                                  kLimit)))
        << first;
  }
  // Many elements with many attributes each are not refused.
  EXPECT_TRUE(HtmlDocument::Parse(Repeat(element(200, "x"), 100)).ok());
}

TEST(HtmlDocumentTest, ElementsClosedWithoutEndTagsOrHoldingTextDoNotCountAsNesting) {
  // Paragraphs, list items and cells close at the next of their kind; void elements hold nothing;
  // a script's, style's or comment's "tags" are text.
  for (const std::string& html :
       {Repeat("<p>One.", 5000), "<ul>" + Repeat("<li>One", 5000) + "</ul>",
        "<table>" + Repeat("<tr><td>a<td>b", 2000) + "</table>", Repeat("A<br>b<img src=x>", 5000),
        "<script>" + Repeat("<div>", 5000) + "</script><p>A dog.</p>",
        "<style>" + Repeat("<div>", 5000) + "</STYLE><p>A dog.</p>",
        "<!--" + Repeat("<div>", 5000) + "--><p>A dog.</p>", Repeat("<svg/>", 5000)}) {
    EXPECT_TRUE(HtmlDocument::Parse(html).ok()) << html.substr(0, 60);
  }
}

}  // namespace
}  // namespace mtserve
