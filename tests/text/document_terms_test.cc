// Terms through a document (text/document.h with SentenceRules::terms): attached to the sentences
// of every format, never split or cut inside, and put into the joined translation as their forms'
// exact bytes from hand-made hypotheses (ids and PlacedTerm), markup placed around them by the
// alignment, unknown characters included, never divided between the cues a subtitle sentence
// runs over, and markup placed by position (a DOCX run's formatting, an ODF tab, a subtitle's
// <i>) never inside a multi-word form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "model/translator.h"
#include "pugixml.hpp"
#include "tests/test_lib/test_util.h"
#include "tests/test_lib/zip_archive.h"
#include "text/document.h"
#include "text/inline_placement.h"
#include "text/office/office_package.h"
#include "text/sentences.h"
#include "text/subtitle_document.h"
#include "text/term_matcher.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Texts(absl::string_view text, const std::vector<SourceSentence>& s) {
  std::vector<std::string> out;
  for (const SourceSentence& x : s) {
    out.emplace_back(text.substr(x.range.begin, x.range.end - x.range.begin));
  }
  return out;
}

class DocumentTermsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(model_, testing::TestModel());
    ASSERT_OK_AND_ASSIGN(splitter_, SentenceSplitter::Create("en"));
  }
  const Tokenizer& tokenizer() const { return model_->tokenizer(); }

  std::shared_ptr<const TermMatcher> Compile(const Terminology& t) {
    absl::StatusOr<std::shared_ptr<const TermMatcher>> matcher =
        CompileTerminology(t, tokenizer(), "options.");
    EXPECT_TRUE(matcher.ok()) << matcher.status();
    return matcher.ok() ? *matcher : nullptr;
  }
  SentenceRules Rules(const TermMatcher* terms, int max_tokens = 256) const {
    SentenceRules rules;
    rules.splitter = splitter_.get();
    rules.tokenizer = &tokenizer();
    rules.max_tokens = max_tokens;
    rules.terms = terms;
    return rules;
  }

  // A hypothesis of target `words` in order, those given as a (term, form) pair spelled as the
  // sentence's constraint's form and placed; each token aligned to `align_to` (or 0).
  struct Word {
    std::string text;  // Plain words: spelled by EncodeTarget.
    int term = -1;     // Or constraint `term`'s form `form` of `terms`.
    int form = 0;
  };
  // Defined with LifeVest(), below.
  std::unique_ptr<Document> PrepareLifeVest(const std::string& bytes, DocumentFormat format);
  std::string JoinLifeVest(const std::string& bytes, DocumentFormat format,
                           const std::string& before, const std::string& after);
  std::shared_ptr<const TermMatcher> life_vest_;  // PrepareLifeVest's.

  Hypothesis Make(const std::vector<Word>& words, const SentenceTerms* terms,
                  const std::vector<int>& align_to = {}) const {
    Hypothesis h;
    for (const Word& w : words) {
      std::vector<int> ids;
      if (w.term >= 0) {
        ids = terms->constraints.terms[w.term].forms[w.form];
        h.terms.push_back({w.term, w.form, false, static_cast<int>(h.ids.size()),
                           static_cast<int>(h.ids.size() + ids.size())});
      } else {
        ids = tokenizer().EncodeTarget(w.text);
        ids.pop_back();
      }
      h.ids.insert(h.ids.end(), ids.begin(), ids.end());
    }
    h.ids.push_back(tokenizer().eos_id());
    h.text = tokenizer().DecodeTarget(h.ids);
    h.token_log_probs.assign(h.ids.size(), -0.1f);
    h.alignment = align_to;
    if (!h.alignment.empty()) h.alignment.resize(h.ids.size(), 0);
    return h;
  }
  TextTranslation Join(const Document& document, std::vector<Hypothesis> hypotheses) const {
    std::vector<TranslationResult> results;
    for (size_t j = 0; j < hypotheses.size(); ++j) {
      TranslationResult& r = results.emplace_back();
      r.hypotheses.push_back(std::move(hypotheses[j]));
      r.source_tokens = static_cast<int>(document.sentences()[j].ids.size());
    }
    return JoinDocument(document, std::move(results), 1, tokenizer());
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<SentenceSplitter> splitter_;
};

// The cues' text of SubRip `file` (line ends as spaces).
std::vector<std::string> CueTexts(const std::string& file) {
  absl::StatusOr<SubtitleDocument> document =
      SubtitleDocument::Parse(file, SubtitleDocument::Kind::kSrt);
  EXPECT_TRUE(document.ok()) << document.status();
  std::vector<std::string> out;
  if (!document.ok()) return out;
  for (const SubtitleDocument::Cue& cue : document->cues()) {
    out.push_back(document->stream().substr(cue.text.begin, cue.text.end - cue.text.begin));
  }
  return out;
}

// Expects `form` whole in exactly one of `cues`, and no other cue to hold any of `pieces` (parts
// of it).
void ExpectWholeInOneCue(const std::vector<std::string>& cues, absl::string_view form,
                         const std::vector<std::string>& pieces) {
  int whole = 0;
  for (const std::string& cue : cues) {
    if (absl::StrContains(cue, form)) {
      ++whole;
      continue;
    }
    for (const std::string& piece : pieces) {
      EXPECT_FALSE(absl::StrContains(cue, piece)) << "a cue with part of " << form << ": " << cue;
    }
  }
  EXPECT_EQ(whole, 1) << form;
}

// Entry `name` of office package `bytes`, parsed (whitespace-only text kept).
std::unique_ptr<pugi::xml_document> PackagePart(const std::string& bytes, const std::string& name) {
  auto document = std::make_unique<pugi::xml_document>();
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes);
  EXPECT_TRUE(package.ok()) << package.status();
  if (!package.ok()) return document;
  absl::StatusOr<std::string> part = package->Read(name);
  EXPECT_TRUE(part.ok()) << part.status();
  if (!part.ok()) return document;
  EXPECT_TRUE(document->load_string(part->c_str(), pugi::parse_default | pugi::parse_ws_pcdata));
  return document;
}

Terminology LifeVest() {
  Terminology t;
  t.glossary = {{"life vest", {"gilet de sauvetage"}}};
  return t;
}

Terminology Placeholders() {
  Terminology t;
  t.keep_patterns = {KeepPattern::kPlaceholders, KeepPattern::kUrls};
  return t;
}

TEST_F(DocumentTermsTest, TheSplitterNeverSplitsInsideATerm) {
  const std::string text = "We met Zorb. Blax in town. Dr. Zorblax came too.";
  // Without the glossary, the splitter takes "Zorb." for a sentence's end.
  const std::vector<SourceSentence> plain =
      SplitIntoSentences(text, splitter_.get(), tokenizer(), 256);
  ASSERT_THAT(Texts(text, plain),
              ElementsAre("We met Zorb.", "Blax in town.", "Dr. Zorblax came too."));
  Terminology t;
  t.glossary = {{"Zorb. Blax", {"Zorb. Blax"}}, {"Dr. Zorblax", {"Dr. Zorblax"}}};
  auto matcher = Compile(t);
  ASSERT_OK_AND_ASSIGN(
      std::vector<SourceSentence> s,
      SplitIntoSentences(text, splitter_.get(), tokenizer(), 256, matcher.get(), {}));
  EXPECT_THAT(Texts(text, s), ElementsAre("We met Zorb. Blax in town.", "Dr. Zorblax came too."));
  ASSERT_NE(s[0].terms, nullptr);
  ASSERT_EQ(s[0].terms->terms.size(), 1u);
  EXPECT_EQ(s[0].terms->terms[0].source.begin, 7u);  // Bytes of the sentence.
  ASSERT_NE(s[1].terms, nullptr);
  EXPECT_EQ(s[1].terms->terms[0].source.begin, 0u);
}

TEST_F(DocumentTermsTest, CuttingToTheTokenLimitAvoidsTerms) {
  const std::string text =
      "the big dog saw New York City Hall and the small cat saw New York City Hall again today";
  Terminology t;
  t.glossary = {{"New York City Hall", {"New Yorker Rathaus"}}};
  auto matcher = Compile(t);
  const std::vector<Segment> occurrences = matcher->Find(text, {0, text.size()});
  ASSERT_EQ(occurrences.size(), 2u);
  auto inside = [&](const std::vector<SourceSentence>& pieces) {
    for (size_t i = 1; i < pieces.size(); ++i) {
      for (const Segment& o : occurrences) {
        if (pieces[i].range.begin > o.begin && pieces[i].range.begin < o.end) return true;
      }
    }
    return false;
  };
  bool cut_inside_without = false;
  for (int max_tokens = 6; max_tokens <= 20; ++max_tokens) {
    cut_inside_without =
        cut_inside_without || inside(SplitIntoSentences(text, nullptr, tokenizer(), max_tokens));
    ASSERT_OK_AND_ASSIGN(
        std::vector<SourceSentence> pieces,
        SplitIntoSentences(text, nullptr, tokenizer(), max_tokens, matcher.get(), {}));
    EXPECT_FALSE(inside(pieces)) << max_tokens;
    size_t terms = 0;
    for (const SourceSentence& p : pieces) {
      EXPECT_LE(p.ids.size(), static_cast<size_t>(max_tokens));
      if (p.terms != nullptr) terms += p.terms->terms.size();
    }
    EXPECT_EQ(terms, 2u) << max_tokens;
  }
  EXPECT_TRUE(cut_inside_without);  // The test would see a cut inside.
}

TEST_F(DocumentTermsTest, TooManyTermsInASentenceFailsPrepareDocument) {
  Terminology t;
  t.glossary = {{"cat", {"Katze"}}};
  auto matcher = Compile(t);
  std::string text = "Dogs.";
  for (int i = 0; i <= kMaxTermConstraints; ++i) absl::StrAppend(&text, " cat");
  for (DocumentFormat format :
       {DocumentFormat::kPlainText, DocumentFormat::kHtml, DocumentFormat::kMarkdown}) {
    absl::StatusOr<std::unique_ptr<Document>> document =
        PrepareDocument(text, format, Rules(matcher.get()));
    ASSERT_FALSE(document.ok());
    EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(document.status().message(), ::testing::HasSubstr("at most 64"));
  }
}

TEST_F(DocumentTermsTest, EveryFormatAttachesTerms) {
  Terminology t;
  t.glossary = {{"dog", {"Hund"}}};
  auto matcher = Compile(t);
  const std::pair<DocumentFormat, std::string> texts[] = {
      {DocumentFormat::kPlainText, "A dog runs."},
      {DocumentFormat::kHtml, "<p>A <i>dog</i> runs.</p>"},
      {DocumentFormat::kMarkdown, "A *dog* runs.\n"},
      {DocumentFormat::kSrt, "1\n00:00:01,000 --> 00:00:02,000\nA dog runs.\n"},
      {DocumentFormat::kVtt, "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nA dog runs.\n"},
  };
  for (const auto& [format, text] : texts) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                         PrepareDocument(text, format, Rules(matcher.get())));
    ASSERT_EQ(document->sentences().size(), 1u) << text;
    ASSERT_NE(document->sentences()[0].terms, nullptr) << text;
    EXPECT_EQ(document->sentences()[0].terms->terms.size(), 1u) << text;
  }
}

TEST_F(DocumentTermsTest, JoinPutsAPlaceholderTheVocabularyLacksBackExactly) {
  auto matcher = Compile(Placeholders());
  const std::string text = "Hello {name} and welcome.";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(text, DocumentFormat::kPlainText, Rules(matcher.get())));
  ASSERT_EQ(document->sentences().size(), 1u);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  // The model cannot write "{" or "}": the form's ids hold the unknown id.
  const std::vector<int>& form = terms->constraints.terms[0].forms[0];
  ASSERT_NE(std::find(form.begin(), form.end(), tokenizer().unk_id()), form.end());
  const TextTranslation joined =
      Join(*document, {Make({{"Hallo"}, {"", 0}, {"und willkommen."}}, terms)});
  EXPECT_EQ(joined.hypotheses[0].text, "Hallo {name} und willkommen.");
  // The source's braces, unknown to the source vocabulary too, are in the kept span: not dropped.
  EXPECT_THAT(joined.dropped[0], IsEmpty());
}

TEST_F(DocumentTermsTest, JoinWritesTheFormsBytesWhateverItsIdsDecodeTo) {
  // SentencePiece reads the ligature "ﬁ" as "fi": the ids decode to ".../file", the text keeps it.
  auto matcher = Compile(Placeholders());
  const std::string text = "See https://example.com/\xEF\xAC\x81le now.";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(text, DocumentFormat::kPlainText, Rules(matcher.get())));
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  const TextTranslation joined = Join(*document, {Make({{"Siehe"}, {"", 0}, {"jetzt."}}, terms)});
  EXPECT_EQ(joined.hypotheses[0].text, "Siehe https://example.com/\xEF\xAC\x81le jetzt.");
}

TEST_F(DocumentTermsTest, JoinWritesGlossaryFormsAndShiftsTermsOverSentences) {
  Terminology t;
  t.glossary = {{"cat", {"Katze", "Kater"}}};
  t.keep_patterns = {KeepPattern::kPlaceholders};
  auto matcher = Compile(t);
  const std::string text = "The cat sleeps.  Hello %s and the cat sleeps.";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(text, DocumentFormat::kPlainText, Rules(matcher.get())));
  ASSERT_EQ(document->sentences().size(), 2u);
  const SentenceTerms* first = document->sentences()[0].terms.get();
  const SentenceTerms* second = document->sentences()[1].terms.get();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->terms.size(), 2u);  // "%s" and "cat".
  Hypothesis a = Make({{"Die"}, {"", 0, 1}, {"schläft."}}, first);
  Hypothesis b = Make({{"Hallo"}, {"", 0}, {"und die"}, {"", 1, 0}, {"schläft."}}, second);
  const size_t a_ids = a.ids.size();
  const PlacedTerm b_cat = b.terms[1];
  const TextTranslation joined = Join(*document, {a, b});
  EXPECT_EQ(joined.hypotheses[0].text, "Die Kater schläft.  Hallo %s und die Katze schläft.");
  // The joined hypothesis's placed terms: the second sentence's moved past the first's ids.
  ASSERT_EQ(joined.hypotheses[0].terms.size(), 3u);
  EXPECT_EQ(joined.hypotheses[0].terms[2].begin, static_cast<int>(a_ids) + b_cat.begin);
  EXPECT_EQ(joined.hypotheses[0].terms[2].end, static_cast<int>(a_ids) + b_cat.end);
}

TEST_F(DocumentTermsTest, HtmlMarkupAroundATermFollowsTheAlignment) {
  auto matcher = Compile(Placeholders());
  const std::string html = "<p>Hello <b>{name}</b> and welcome.</p>";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(html, DocumentFormat::kHtml, Rules(matcher.get())));
  ASSERT_EQ(document->sentences().size(), 1u);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  // The run's text is "Hello {name} and welcome.": the source pieces of "{name}" are those whose
  // bytes lie in 6-12; the form's tokens are aligned to the first of them, the rest to "Hello".
  const std::string run = "Hello {name} and welcome.";
  std::vector<Segment> spans;
  tokenizer().EncodeSourceWithSpans(run, spans);
  int name_piece = -1;
  for (size_t i = 0; i < spans.size() && name_piece < 0; ++i) {
    if (spans[i].end > 6 && spans[i].begin < 12) name_piece = static_cast<int>(i);
  }
  ASSERT_GE(name_piece, 0);
  // "Willkommen und hallo {name}": the term moved to the end (where its relative position in the
  // source would not put it); its markup must move with it.
  Hypothesis h = Make({{"Willkommen und hallo"}, {"", 0}}, terms);
  std::vector<int> alignment(h.ids.size(), 0);
  for (int k = h.terms[0].begin; k < h.terms[0].end; ++k) alignment[k] = name_piece;
  h.alignment = alignment;
  const TextTranslation joined = Join(*document, {h});
  EXPECT_EQ(joined.hypotheses[0].text, "<p>Willkommen und hallo <b>{name}</b></p>");
}

TEST_F(DocumentTermsTest, HtmlTranslateNoInsideASentenceIsAKeptSpanOfIt) {
  const std::string html = "<p>Press <span translate=\"no\">Save &amp; Exit</span> now.</p>";
  // Without a terminology the element ends the run, left as written.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> plain,
                       PrepareDocument(html, DocumentFormat::kHtml, Rules(nullptr)));
  EXPECT_EQ(plain->sentences().size(), 2u);
  auto matcher = Compile(Terminology());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(html, DocumentFormat::kHtml, Rules(matcher.get())));
  ASSERT_EQ(document->sentences().size(), 1u);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->terms.size(), 1u);
  EXPECT_TRUE(terms->terms[0].kept);
  EXPECT_EQ(terms->terms[0].forms[0].text, "Save & Exit");
  // The run's text is "Press Save & Exit now.": the kept span's tokens aligned to "Save".
  const std::string run = "Press Save & Exit now.";
  std::vector<Segment> spans;
  tokenizer().EncodeSourceWithSpans(run, spans);
  int save_piece = -1;
  for (size_t i = 0; i < spans.size() && save_piece < 0; ++i) {
    if (spans[i].end > 6 && spans[i].begin < 10) save_piece = static_cast<int>(i);
  }
  ASSERT_GE(save_piece, 0);
  Hypothesis h = Make({{"Jetzt"}, {"", 0}, {"drücken."}}, terms);
  std::vector<int> alignment(h.ids.size(), 0);
  for (int k = h.terms[0].begin; k < h.terms[0].end; ++k) alignment[k] = save_piece;
  h.alignment = alignment;
  const TextTranslation joined = Join(*document, {h});
  EXPECT_EQ(joined.hypotheses[0].text,
            "<p>Jetzt <span translate=\"no\">Save &amp; Exit</span> drücken.</p>");
}

TEST_F(DocumentTermsTest, HtmlIgnoreTagsAndNotranslateClassAreKeptSpans) {
  auto matcher = Compile(Terminology());
  SentenceRules rules = Rules(matcher.get());
  rules.ignore_tags = {"x"};
  const std::string html =
      "<p>Call <x>Foo Bar</x> and <b class=\"brand notranslate\">Acme</b> today.</p>";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(html, DocumentFormat::kHtml, rules));
  ASSERT_EQ(document->sentences().size(), 1u);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->terms.size(), 2u);
  EXPECT_EQ(terms->terms[0].forms[0].text, "Foo Bar");
  EXPECT_EQ(terms->terms[1].forms[0].text, "Acme");
  // Without the tag listed, <x> is an unknown element, which ends the sentence.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> unlisted,
                       PrepareDocument(html, DocumentFormat::kHtml, Rules(matcher.get())));
  EXPECT_GT(unlisted->sentences().size(), 1u);
}

TEST_F(DocumentTermsTest, EveryTextFormatJoinsTheFormExactly) {
  auto matcher = Compile(Placeholders());
  const std::pair<DocumentFormat, std::string> texts[] = {
      {DocumentFormat::kPlainText, "Hello {name} and welcome."},
      {DocumentFormat::kHtml, "<p>Hello {name} and welcome.</p>"},
      {DocumentFormat::kMarkdown, "Hello {name} and welcome.\n"},
      {DocumentFormat::kSrt, "1\n00:00:01,000 --> 00:00:02,000\nHello {name} and welcome.\n"},
      {DocumentFormat::kVtt,
       "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello {name} and welcome.\n"},
  };
  for (const auto& [format, text] : texts) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                         PrepareDocument(text, format, Rules(matcher.get())));
    ASSERT_EQ(document->sentences().size(), 1u) << text;
    const SentenceTerms* terms = document->sentences()[0].terms.get();
    ASSERT_NE(terms, nullptr) << text;
    Hypothesis h = Make({{"Hallo"}, {"", 0}, {"und willkommen."}}, terms);
    if (document->NeedsAlignment(0)) h.alignment.assign(h.ids.size(), 0);
    const TextTranslation joined = Join(*document, {h});
    EXPECT_THAT(joined.hypotheses[0].text, ::testing::HasSubstr("Hallo {name} und willkommen."))
        << text;
    EXPECT_THAT(joined.dropped[0], IsEmpty()) << text;
  }
}

// kLifeVestCues translated as "Mettez votre gilet de sauvetage avant de partir.": the form whole
// in one cue, and nothing lost or repeated (the cues read the translation in order).
void ExpectLifeVestCues(const std::string& file) {
  const std::vector<std::string> cues = CueTexts(file);
  ASSERT_EQ(cues.size(), 2u);
  ExpectWholeInOneCue(cues, "gilet de sauvetage", {"gilet", "sauvetage"});
  EXPECT_EQ(absl::StrCat(cues[0], " ", cues[1]),
            "Mettez votre gilet de sauvetage avant de partir.");
}

// One sentence over two cues, holding LifeVest()'s term.
constexpr char kLifeVestCues[] =
    "1\n00:00:01,000 --> 00:00:02,000\nPut on your life\n\n"
    "2\n00:00:02,100 --> 00:00:04,000\nvest before we sail.\n";

// A sentence over two cues whose words are divided by their relative position: the one that
// falls at the cue boundary is the middle of a multi-word form.
TEST_F(DocumentTermsTest, SubtitlesNeverDivideAFormBetweenCuesByPosition) {
  const std::unique_ptr<Document> document = PrepareLifeVest(kLifeVestCues, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  // No alignment: every word goes by its relative position ("de" ends the first cue's share).
  const TextTranslation joined =
      Join(*document, {Make({{"Mettez votre"}, {"", 0}, {"avant de partir."}}, terms)});
  ExpectLifeVestCues(joined.hypotheses[0].text);
}

// The same where the alignment ties the form's first word to the first cue and the rest to the
// second.
TEST_F(DocumentTermsTest, SubtitlesNeverDivideAFormBetweenCuesByAlignment) {
  const std::unique_ptr<Document> document = PrepareLifeVest(kLifeVestCues, DocumentFormat::kSrt);
  ASSERT_NE(document, nullptr);
  const SourceSentence& sentence = document->sentences()[0];
  Hypothesis h = Make({{"Mettez votre"}, {"", 0}, {"avant de partir."}}, sentence.terms.get());
  // Each target word aligned to the source piece that starts the source word it translates.
  const std::string source = "Put on your life vest before we sail.";
  std::vector<Segment> pieces;
  tokenizer().EncodeSourceWithSpans(source, pieces);
  auto piece_at = [&](const std::string& word) {
    const size_t at = source.find(word);
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].end > at) return static_cast<int>(i);
    }
    return 0;
  };
  const std::pair<std::string, std::string> words[] = {
      {"Mettez", "Put"},   {"votre", "your"},     {"gilet", "life"}, {"de sauvetage", "vest"},
      {"avant", "before"}, {"de partir", "sail"}, {".", "."}};
  const std::vector<Segment> tokens = TargetTokenRanges(h.ids, h.text, tokenizer());
  h.alignment.assign(h.ids.size(), piece_at("sail"));
  size_t from = 0;
  for (const auto& [target, source_word] : words) {
    const size_t begin = h.text.find(target, from);
    ASSERT_NE(begin, std::string::npos) << target;
    const size_t end = begin + target.size();
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (tokens[k].begin >= begin && tokens[k].begin < end) h.alignment[k] = piece_at(source_word);
    }
    from = end;
  }
  const TextTranslation joined = Join(*document, {h});
  ExpectLifeVestCues(joined.hypotheses[0].text);
}

// A translation of fewer words than cues is divided by characters: never inside a kept span.
TEST_F(DocumentTermsTest, SubtitlesNeverDivideAKeptSpanBetweenCuesByCharacter) {
  auto matcher = Compile(Placeholders());
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:02,000\nWell hello there\n\n"
      "2\n00:00:02,100 --> 00:00:03,000\n{name}\n\n"
      "3\n00:00:03,100 --> 00:00:04,000\n!\n";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(srt, DocumentFormat::kSrt, Rules(matcher.get())));
  ASSERT_EQ(document->sentences().size(), 1u);
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  ASSERT_NE(terms, nullptr);
  // "Hallo {name}!": two words, the "!" written within the second (the ids "Hallo!" ends with).
  Hypothesis h = Make({{"Hallo"}, {"", 0}}, terms);
  std::vector<int> hallo = tokenizer().EncodeTarget("Hallo"),
                   bang = tokenizer().EncodeTarget("Hallo!");
  hallo.pop_back();
  bang.pop_back();
  ASSERT_GT(bang.size(), hallo.size());
  ASSERT_TRUE(std::equal(hallo.begin(), hallo.end(), bang.begin()));
  h.ids.insert(h.ids.end() - 1, bang.begin() + hallo.size(), bang.end());
  h.text = tokenizer().DecodeTarget(h.ids);
  h.token_log_probs.assign(h.ids.size(), -0.1f);
  const TextTranslation joined = Join(*document, {h});
  const std::vector<std::string> cues = CueTexts(joined.hypotheses[0].text);
  ASSERT_EQ(cues.size(), 3u);
  ExpectWholeInOneCue(cues, "{name}", {"{", "}"});
  // Nothing lost or repeated (the spaces aside: a cue's share may start or end with one).
  EXPECT_EQ(absl::StrReplaceAll(absl::StrCat(cues[0], cues[1], cues[2]), {{" ", ""}}),
            "Hallo{name}!");
}

// `bytes`, a document of `format` with one sentence holding "life vest" (LifeVest()'s term),
// taken apart; null (and a failure) if it is not that.
std::unique_ptr<Document> DocumentTermsTest::PrepareLifeVest(const std::string& bytes,
                                                             DocumentFormat format) {
  life_vest_ = Compile(LifeVest());
  absl::StatusOr<std::unique_ptr<Document>> document =
      PrepareDocument(bytes, format, Rules(life_vest_.get()));
  EXPECT_TRUE(document.ok()) << document.status();
  if (!document.ok() || (*document)->sentences().size() != 1 ||
      (*document)->sentences()[0].terms == nullptr) {
    ADD_FAILURE() << "not one sentence holding the term";
    return nullptr;
  }
  return *std::move(document);
}

// The same joined with the translation "`before` gilet de sauvetage `after`", no alignment given:
// the joined text ("" on a failure).
std::string DocumentTermsTest::JoinLifeVest(const std::string& bytes, DocumentFormat format,
                                            const std::string& before, const std::string& after) {
  const std::unique_ptr<Document> document = PrepareLifeVest(bytes, format);
  if (document == nullptr) return "";
  const SentenceTerms* terms = document->sentences()[0].terms.get();
  return Join(*document, {Make({{before}, {"", 0}, {after}}, terms)}).hypotheses[0].text;
}

// Markup placed by position covers a multi-word form whole or not at all. Each source below has
// markup outside "life vest" (so that no placed term's tokens say where it goes; no alignment is
// given) whose relative position falls between the words of "gilet de sauvetage" in its
// translation.
// A DOCX run's formatting (bold on "Always wear your ") ends, by position, after "gilet".
TEST_F(DocumentTermsTest, DocxFormattingByPositionCoversAFormWhole) {
  const std::string form = LifeVest().glossary[0].targets[0];
  const std::string docx = testing::ZipArchive(
      {{"[Content_Types].xml",
        "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/"
        "content-types\"/>"},
       {"word/document.xml",
        "<?xml version=\"1.0\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/"
        "wordprocessingml/2006/main\"><w:body><w:p>"
        "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">Always wear your </w:t></w:r>"
        "<w:r><w:t>life vest on deck.</w:t></w:r></w:p></w:body></w:document>"}});
  const std::string joined =
      JoinLifeVest(docx, DocumentFormat::kDocx, "Portez toujours votre", "sur le pont.");
  const auto part = PackagePart(joined, "word/document.xml");
  std::string all, bold;
  for (const pugi::xpath_node& r : part->select_nodes("//w:r")) {
    const std::string text = r.node().child("w:t").text().get();
    all += text;
    if (r.node().child("w:rPr").child("w:b")) bold += text;
  }
  EXPECT_EQ(all, "Portez toujours votre gilet de sauvetage sur le pont.");
  // The bold text holds the form whole (widened over it), not "gilet" alone.
  EXPECT_THAT(bold, ::testing::HasSubstr(form));
}

// An ODF tab (before "on deck") falls, by position, at the start of "sauvetage": it would be seen
// inside the form. It goes to the form's nearer edge.
TEST_F(DocumentTermsTest, OdfTabByPositionNeverFallsInsideAForm) {
  const std::string form = LifeVest().glossary[0].targets[0];
  const std::string odt = testing::ZipArchive(
      {{"mimetype", "application/vnd.oasis.opendocument.text"},
       {"content.xml",
        "<?xml version=\"1.0\"?><office:document-content "
        "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
        "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" office:version=\"1.2\">"
        "<office:body><office:text><text:p>Always wear your life vest<text:tab/>on deck, sailor."
        "</text:p></office:text></office:body></office:document-content>"}});
  const std::string joined =
      JoinLifeVest(odt, DocumentFormat::kOdt, "Portez toujours votre", "sur le pont, marin.");
  const auto content = PackagePart(joined, "content.xml");
  const pugi::xml_node p = content->select_node("//text:p").node();
  ASSERT_TRUE(p.child("text:tab")) << joined;
  // The paragraph as a reader shows it: text nodes, a tab as a tab.
  std::string visible;
  for (const pugi::xml_node& child : p.children()) {
    if (child.type() == pugi::node_pcdata) {
      visible += child.value();
    } else if (std::string(child.name()) == "text:tab") {
      visible += '\t';
    } else {
      visible += child.text().get();
    }
  }
  EXPECT_THAT(visible, ::testing::HasSubstr(form));
}

// A subtitle's <i> over "Always wear your" ends, by position, after "gilet".
TEST_F(DocumentTermsTest, SubtitleTagByPositionCoversAFormWhole) {
  const std::string form = LifeVest().glossary[0].targets[0];
  const std::string srt =
      "1\n00:00:01,000 --> 00:00:04,000\n<i>Always wear your</i> life vest on deck.\n";
  const std::string out =
      JoinLifeVest(srt, DocumentFormat::kSrt, "Portez toujours votre", "sur le pont.");
  const size_t open = out.find("<i>"), close = out.find("</i>");
  ASSERT_NE(open, std::string::npos) << out;
  ASSERT_NE(close, std::string::npos) << out;
  // Its lines wrapped (a line end may fall at any space: docs/api.md), read as one.
  EXPECT_THAT(absl::StrReplaceAll(out.substr(open, close - open), {{"\n", " "}}),
              ::testing::HasSubstr(form))
      << out;
}

}  // namespace
}  // namespace mtserve
