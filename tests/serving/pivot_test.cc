// Pivot translation's composition (serving/pivot.h) on hand-made hypotheses over the tokenizers of
// the trained fr-en and en-de models (which never generate an unknown token themselves): a run of
// characters the first model cannot spell, which a direct translation puts back where the decoder
// generated an unknown token for it (text/unknown_runs.h), is carried through the bridge text
// and comes back in the last leg's translation, not listed as dropped, exactly where a direct
// call on the bridge text would put it; a term's source tokens are carried across the bridge.
#include "serving/pivot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "tests/test_lib/test_util.h"
#include "text/document.h"
#include "text/unknown_runs.h"

namespace mtserve {
namespace {

using ::testing::IsEmpty;

class PivotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"fr-en", "en-de"}) {
      ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Model> model,
                           Model::Load(testing::ModelsDir() + "/multi30k-" + name));
      models_.push_back(model);
    }
  }
  const Tokenizer& fr_en() const { return models_[0]->tokenizer(); }
  const Tokenizer& en_de() const { return models_[1]->tokenizer(); }

  // The source position of the unknown piece of `sentence` read by `tokenizer` (-1: none).
  static int UnknownPosition(const Tokenizer& tokenizer, absl::string_view sentence) {
    const std::vector<int> ids = tokenizer.EncodeSource(sentence);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == tokenizer.unk_id()) return static_cast<int>(i);
    }
    return -1;
  }

  // A result of one hypothesis "`before` <unk> `after`" written by `tokenizer` (target ids, </s>
  // last), its unknown token aligned to source position `unknown_at` and every other token to 0,
  // for a source of `source_tokens` tokens.
  static TranslationResult WithUnknown(const Tokenizer& tokenizer, absl::string_view before,
                                       absl::string_view after, int unknown_at, int source_tokens) {
    Hypothesis h;
    std::vector<int> first = tokenizer.EncodeTarget(before);
    first.pop_back();  // </s>
    h.ids = first;
    h.ids.push_back(tokenizer.unk_id());
    const std::vector<int> rest = tokenizer.EncodeTarget(after);
    h.ids.insert(h.ids.end(), rest.begin(), rest.end());
    h.alignment.assign(h.ids.size(), 0);
    h.alignment[first.size()] = unknown_at;
    h.text = tokenizer.DecodeTarget(h.ids);
    h.token_log_probs.assign(h.ids.size(), -0.1f);
    TranslationResult result;
    result.hypotheses.push_back(std::move(h));
    result.source_tokens = source_tokens;
    return result;
  }

  std::vector<std::shared_ptr<const Model>> models_;
};

TEST_F(PivotTest, ARunTheFirstModelCannotSpellIsCarriedThroughTheBridge) {
  // "🐕" is bytes 9-13, a character neither model can spell.
  const std::string sentence = "Un chien 🐕 court.";
  const int source_unknown = UnknownPosition(fr_en(), sentence);
  ASSERT_GE(source_unknown, 0);
  const int source_tokens = static_cast<int>(fr_en().EncodeSource(sentence).size());

  // The first leg (fr-en) generates an unknown token for it: a direct fr-en call answers with the
  // run where the token stands, and that answer is what the next leg reads.
  const TranslationResult first =
      WithUnknown(fr_en(), "A dog", "runs.", source_unknown, source_tokens);
  ASSERT_EQ(first.hypotheses[0].text, "A dog runs.");
  const BridgeText bridge = MakeBridgeText(first, sentence, fr_en(), fr_en());
  EXPECT_EQ(bridge.text, "A dog 🐕 runs.");

  // en-de reads it as an unknown piece; it is put back once, in the end, from the source.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> pieces, PrepareBridge(bridge, en_de(), 256));
  ASSERT_EQ(pieces->sentences().size(), 1u);
  const int bridge_unknown = UnknownPosition(en_de(), bridge.text);
  ASSERT_GE(bridge_unknown, 0);
  EXPECT_FALSE(pieces->sentences()[0].unknown);

  // The second leg (en-de) generates an unknown token for the bridge's run.
  std::vector<TranslationResult> second;
  second.push_back(WithUnknown(en_de(), "Ein Hund", "rennt.", bridge_unknown,
                               static_cast<int>(en_de().EncodeSource(bridge.text).size())));
  const TranslationResult composed =
      ComposeLegs(first, fr_en(), bridge, *pieces,
                  JoinDocument(*pieces, std::move(second), 1, en_de()), en_de());

  // The sentence joined as the server and mttranslate join a pivoted text: the run is in the
  // German where the unknown token stands, with the source's spaces, and is not dropped.
  SentenceRules rules;
  rules.tokenizer = &fr_en();
  rules.max_tokens = 256;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(sentence, DocumentFormat::kPlainText, rules));
  std::vector<TranslationResult> results = {composed};
  const TextTranslation joined = JoinDocument(*document, std::move(results), 1, fr_en(), en_de());
  ASSERT_EQ(joined.hypotheses.size(), 1u);
  EXPECT_EQ(joined.hypotheses[0].text, "Ein Hund 🐕 rennt.");
  ASSERT_EQ(joined.dropped.size(), 1u);
  EXPECT_THAT(joined.dropped[0], IsEmpty());
}

// When the last leg generates nothing for the carried run, it is listed as dropped (bytes of the
// source), as a direct translation lists it.
TEST_F(PivotTest, ACarriedRunTheLastLegWritesNothingForIsListedAsDropped) {
  const std::string sentence = "Un chien 🐕 court.";
  const int source_tokens = static_cast<int>(fr_en().EncodeSource(sentence).size());
  const TranslationResult first =
      WithUnknown(fr_en(), "A dog", "runs.", UnknownPosition(fr_en(), sentence), source_tokens);
  const BridgeText bridge = MakeBridgeText(first, sentence, fr_en(), fr_en());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> pieces, PrepareBridge(bridge, en_de(), 256));
  Hypothesis h;
  h.ids = en_de().EncodeTarget("Ein Hund rennt.");
  h.text = "Ein Hund rennt.";
  h.alignment.assign(h.ids.size(), 0);
  h.token_log_probs.assign(h.ids.size(), -0.1f);
  std::vector<TranslationResult> second(1);
  second[0].hypotheses.push_back(h);
  second[0].source_tokens = static_cast<int>(en_de().EncodeSource(bridge.text).size());
  const TranslationResult composed =
      ComposeLegs(first, fr_en(), bridge, *pieces,
                  JoinDocument(*pieces, std::move(second), 1, en_de()), en_de());
  SentenceRules rules;
  rules.tokenizer = &fr_en();
  rules.max_tokens = 256;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> document,
                       PrepareDocument(sentence, DocumentFormat::kPlainText, rules));
  std::vector<TranslationResult> results = {composed};
  const TextTranslation joined = JoinDocument(*document, std::move(results), 1, fr_en(), en_de());
  EXPECT_EQ(joined.hypotheses[0].text, "Ein Hund rennt.");
  ASSERT_EQ(joined.dropped.size(), 1u);
  EXPECT_THAT(joined.dropped[0], ::testing::ElementsAre(Segment{9, 13}));
}

// Without the source sentence's bytes (a marked-up document's sentence) the bridge is the best
// hypothesis's text as decoded: nothing carried.
TEST_F(PivotTest, WithoutTheSentenceTheBridgeIsTheDecodedText) {
  const std::string sentence = "Un chien 🐕 court.";
  const TranslationResult first =
      WithUnknown(fr_en(), "A dog", "runs.", UnknownPosition(fr_en(), sentence),
                  static_cast<int>(fr_en().EncodeSource(sentence).size()));
  const BridgeText bridge = MakeBridgeText(first, "", fr_en(), fr_en());
  EXPECT_EQ(bridge.text, "A dog runs.");
  EXPECT_THAT(bridge.runs.insertions, IsEmpty());
}

// A term's source tokens are carried to the last leg's: those of the bridge's piece that the first
// leg's tokens aligned into the term's source wrote; unknown where the bridge is cut into several
// pieces or the first leg carries no alignment.
TEST_F(PivotTest, ATermsSourceTokensAreTheBridgesThatTheFirstLegTranslatedItInto) {
  const std::string sentence = "Un chien 🐕 court.";
  const int source_unknown = UnknownPosition(fr_en(), sentence);
  ASSERT_GE(source_unknown, 0);
  const TranslationResult first =
      WithUnknown(fr_en(), "A dog", "runs.", source_unknown,
                  static_cast<int>(fr_en().EncodeSource(sentence).size()));
  const BridgeText bridge = MakeBridgeText(first, sentence, fr_en(), fr_en());
  ASSERT_EQ(bridge.text, "A dog 🐕 runs.");
  // A term over "🐕" (kept as written, say): the first leg's unknown token wrote it.
  auto terms = std::make_shared<SentenceTerms>();
  TermConstraint& term = terms->constraints.terms.emplace_back();
  term.forms = {{en_de().unk_id()}};
  term.source_begin = source_unknown;
  term.source_end = source_unknown + 1;
  terms->terms.emplace_back();
  auto positions = [](const std::shared_ptr<const SentenceTerms>& placed) {
    EXPECT_NE(placed, nullptr);
    if (placed == nullptr) return std::pair(-2, -2);
    return std::pair(placed->constraints.terms[0].source_begin,
                     placed->constraints.terms[0].source_end);
  };

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> whole, PrepareBridge(bridge, en_de(), 256));
  ASSERT_EQ(whole->sentences().size(), 1u);
  const int bridge_unknown = UnknownPosition(en_de(), bridge.text);
  ASSERT_GE(bridge_unknown, 0);
  EXPECT_EQ(positions(BridgeTerms(terms, first, fr_en(), bridge, *whole, en_de())),
            std::pair(bridge_unknown, bridge_unknown + 1));

  // Cut into pieces at the next model's token limit.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Document> cut, PrepareBridge(bridge, en_de(), 4));
  ASSERT_GT(cut->sentences().size(), 1u);
  EXPECT_EQ(positions(BridgeTerms(terms, first, fr_en(), bridge, *cut, en_de())),
            std::pair(-1, -1));

  // A first leg without its alignment.
  TranslationResult unaligned = first;
  unaligned.hypotheses[0].alignment.clear();
  EXPECT_EQ(positions(BridgeTerms(terms, unaligned, fr_en(), bridge, *whole, en_de())),
            std::pair(-1, -1));
  EXPECT_EQ(BridgeTerms(nullptr, first, fr_en(), bridge, *whole, en_de()), nullptr);
}

}  // namespace
}  // namespace mtserve
