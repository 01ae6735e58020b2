// The constraint state machine (model/decoding/term_tracker.h) and the checks of term
// constraints (term_constraints.h) on hand-made ids, without a model: matching, resets, initial
// forms, the tokens still needed, the memory held, and that choosing only permitted tokens always
// meets every constraint within the length bound.
#include "model/decoding/term_tracker.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/decoding/decoding_options.h"
#include "model/decoding/term_constraints.h"
#include "model/model_config.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Ids = std::vector<int>;

constexpr int kEos = 0;

TermConstraint Term(std::vector<Ids> forms, std::vector<Ids> initial_forms = {}) {
  return {std::move(forms), std::move(initial_forms)};
}

// Feeds `ids` from the start; returns the progress and the terms placed.
struct Fed {
  TermProgress progress;
  std::vector<PlacedTerm> placed;
};
Fed Feed(const TermTracker& tracker, const Ids& ids) {
  Fed fed;
  for (size_t i = 0; i < ids.size(); ++i) {
    TermTracker::Advanced advanced = tracker.Advance(fed.progress, ids[i], static_cast<int>(i));
    fed.progress = advanced.progress;
    if (advanced.placed.has_value()) fed.placed.push_back(*advanced.placed);
  }
  return fed;
}

MATCHER_P5(IsPlaced, term, form, initial, begin, end, "") {
  return arg.term == term && arg.form == form && arg.initial == initial && arg.begin == begin &&
         arg.end == end;
}

TEST(TermTrackerTest, AFormMeetsItsConstraintWhereverItIs) {
  const TermTracker tracker({{Term({{5, 6, 7}})}});
  EXPECT_FALSE(tracker.AllMet(Feed(tracker, {1, 5, 6, 2}).progress));
  const Fed fed = Feed(tracker, {1, 2, 5, 6, 7, 3});
  EXPECT_TRUE(tracker.AllMet(fed.progress));
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, false, 2, 5)));
}

TEST(TermTrackerTest, ATokenThatLeavesTheFormRestartsTheMatch) {
  const TermTracker tracker({{Term({{5, 6}})}});
  // 5 5 6: the second 5 leaves the match begun by the first and starts another.
  Fed fed = Feed(tracker, {5, 5, 6});
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, false, 1, 3)));
  // 5 7 6: interrupted.
  fed = Feed(tracker, {5, 7, 6});
  EXPECT_TRUE(fed.placed.empty());
  EXPECT_EQ(fed.progress.node, 0);
}

TEST(TermTrackerTest, TwoConstraintsWithOneFormNeedTwoOccurrences) {
  const TermTracker tracker({{Term({{5, 6}}), Term({{5, 6}})}});
  Fed fed = Feed(tracker, {5, 6, 1});
  EXPECT_EQ(TermTracker::MetCount(fed.progress), 1);
  EXPECT_FALSE(tracker.AllMet(fed.progress));
  fed = Feed(tracker, {5, 6, 1, 5, 6});
  EXPECT_TRUE(tracker.AllMet(fed.progress));
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, false, 0, 2), IsPlaced(1, 0, false, 3, 5)));
}

TEST(TermTrackerTest, AnyFormSatisfiesItsConstraint) {
  const TermTracker tracker({{Term({{5, 6}, {8}})}});
  const Fed fed = Feed(tracker, {1, 8});
  EXPECT_TRUE(tracker.AllMet(fed.progress));
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 1, false, 1, 2)));
}

TEST(TermTrackerTest, FormsPlacedDoNotOverlap) {
  // 5 6 completes the first constraint; the second's 6 7 cannot reuse its 6.
  const TermTracker tracker({{Term({{5, 6}}), Term({{6, 7}})}});
  Fed fed = Feed(tracker, {5, 6, 7});
  EXPECT_EQ(TermTracker::MetCount(fed.progress), 1);
  fed = Feed(tracker, {5, 6, 6, 7});
  EXPECT_TRUE(tracker.AllMet(fed.progress));
}

TEST(TermTrackerTest, InitialFormsCountOnlyAtTheStart) {
  const TermTracker tracker({{Term({{5, 6}}, {{9, 6}})}});
  Fed fed = Feed(tracker, {9, 6, 1});
  EXPECT_TRUE(tracker.AllMet(fed.progress));
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, true, 0, 2)));
  fed = Feed(tracker, {1, 9, 6});
  EXPECT_FALSE(tracker.AllMet(fed.progress));
  fed = Feed(tracker, {1, 5, 6});
  EXPECT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, false, 1, 3)));
  // Neither proposes the initial form after the first token.
  std::vector<int> starts;
  tracker.Starts(TermProgress(), 0, starts);
  EXPECT_THAT(starts, ElementsAre(5, 9));
  starts.clear();
  tracker.Starts(TermProgress(), 1, starts);
  EXPECT_THAT(starts, ElementsAre(5));
}

// A form that begins another of its constraint ("Rad", "Rad es") is met when written; the
// token that makes it the longer one grows the placed term, and nothing else does.
TEST(TermTrackerTest, ATokenThatMakesAPlacedFormALongerOneExtendsIt) {
  const TermTracker tracker({{Term({{5}, {5, 6}, {5, 6, 7}}, {{8, 6}}), Term({{6}})}});
  const Ids ids = {1, 5};
  const Fed fed = Feed(tracker, ids);
  ASSERT_THAT(fed.placed, ElementsAre(IsPlaced(0, 0, false, 1, 2)));
  const std::optional<PlacedTerm> grown = tracker.Extended(fed.placed[0], ids, 6);
  ASSERT_TRUE(grown.has_value());
  EXPECT_THAT(*grown, IsPlaced(0, 1, false, 1, 3));
  // Again, from the longer form.
  EXPECT_THAT(tracker.Extended(*grown, {1, 5, 6}, 7),
              ::testing::Optional(IsPlaced(0, 2, false, 1, 4)));
  // A token that makes no form of the same constraint (6 alone is the other's), a placed term
  // that is not at the end, and a form past the end of the list.
  EXPECT_FALSE(tracker.Extended(fed.placed[0], ids, 7).has_value());
  EXPECT_FALSE(tracker.Extended(fed.placed[0], {1, 5, 2}, 6).has_value());
  EXPECT_FALSE(tracker.Extended(*grown, {1, 5, 6, 7}, 9).has_value());
  // An initial form grows nothing placed after the start (8 then 6 is one, at position 1).
  EXPECT_FALSE(tracker.Extended(PlacedTerm{0, 0, false, 1, 2}, {1, 8}, 6).has_value());
}

TEST(TermTrackerTest, NeededCountsShortestFormsAndTheMatchInProgress) {
  const TermTracker tracker({{Term({{5, 6, 7}, {8, 9}}), Term({{3}})}});
  EXPECT_EQ(tracker.Needed(TermProgress()), 3);
  // Two tokens into the longer form: one more finishes it, fewer than its shortest form.
  EXPECT_EQ(tracker.Needed(Feed(tracker, {5, 6}).progress), 2);
  // One token in: two more, no fewer than the shortest form, so no credit.
  EXPECT_EQ(tracker.Needed(Feed(tracker, {5}).progress), 3);
  EXPECT_EQ(tracker.NeededFromScratch(Feed(tracker, {5, 6}).progress), 3);
  EXPECT_EQ(tracker.Needed(Feed(tracker, {3}).progress), 2);
  EXPECT_EQ(tracker.Needed(Feed(tracker, {3, 8, 9}).progress), 0);
}

TEST(TermTrackerTest, EndingIsPermittedOnlyOnceAllAreMet) {
  const TermTracker tracker({{Term({{5}})}});
  EXPECT_FALSE(tracker.Permitted(TermProgress(), kEos, 0, 10, kEos));
  EXPECT_TRUE(tracker.Permitted(Feed(tracker, {5}).progress, kEos, 1, 10, kEos));
}

TEST(TermTrackerTest, AtTheBoundOnlyTheShortestCompletionIsPermitted) {
  const TermTracker tracker({{Term({{5, 6, 7}, {8, 9}})}});
  const TermProgress start;
  // Two tokens left after this one: anything goes.
  EXPECT_FALSE(tracker.Forced(start, 2));
  EXPECT_TRUE(tracker.Permitted(start, 1, 0, 2, kEos));
  // One left: the shorter form must start now.
  EXPECT_TRUE(tracker.Forced(start, 1));
  EXPECT_FALSE(tracker.Permitted(start, 1, 0, 1, kEos));
  EXPECT_FALSE(tracker.Permitted(start, 5, 0, 1, kEos));
  EXPECT_TRUE(tracker.Permitted(start, 8, 0, 1, kEos));
  // In the longer form with one token left after this one: only its next token.
  const TermProgress in_progress = Feed(tracker, {5}).progress;
  EXPECT_TRUE(tracker.Forced(in_progress, 1));
  EXPECT_TRUE(tracker.Permitted(in_progress, 6, 1, 1, kEos));
  EXPECT_FALSE(tracker.Permitted(in_progress, 1, 1, 1, kEos));
  EXPECT_FALSE(tracker.Permitted(in_progress, 5, 1, 1, kEos));
  EXPECT_TRUE(tracker.Permitted(in_progress, 8, 1, 1, kEos));  // The shorter form fits too.
  std::vector<int> proposals;
  tracker.Proposals(in_progress, 1, proposals);
  EXPECT_THAT(proposals, ElementsAre(5, 6, 8));
}

// Whatever token a search picks among the permitted ones, every constraint is met by the length
// bound: random walks over a small vocabulary full of the forms' tokens.
TEST(TermTrackerTest, PermittedTokensAlwaysMeetEveryConstraintInTime) {
  // Forms that share prefixes, end inside one another and repeat tokens.
  const TermConstraints constraints{{Term({{1, 2, 3}, {4, 5}}), Term({{2, 3}}, {{6, 3}}),
                                     Term({{1, 2, 3}}), Term({{7}, {1, 7, 7, 7}}),
                                     Term({{1, 2}, {8}})}};
  const TermTracker tracker(constraints);
  const int needed = MinimumConstrainedTokens(constraints);
  ASSERT_EQ(needed, 2 + 2 + 3 + 1 + 1);
  std::mt19937 random(1);
  for (int walk = 0; walk < 5000; ++walk) {
    const int bound = needed + 1 + walk % 6;  // As AddInputs allows: room for </s>.
    TermProgress progress;
    Ids ids;
    std::vector<PlacedTerm> placed;
    while (static_cast<int>(ids.size()) < bound) {
      const int position = static_cast<int>(ids.size());
      const int left = bound - position - 1;
      std::vector<int> permitted;
      for (int token = 0; token < 9; ++token) {
        if (tracker.Permitted(progress, token, position, left, kEos)) permitted.push_back(token);
      }
      ASSERT_FALSE(permitted.empty()) << "walk " << walk << " at " << position;
      const int token = permitted[random() % permitted.size()];
      ids.push_back(token);
      if (token == kEos) break;
      TermTracker::Advanced advanced = tracker.Advance(progress, token, position);
      progress = advanced.progress;
      if (advanced.placed.has_value()) placed.push_back(*advanced.placed);
    }
    ASSERT_TRUE(tracker.AllMet(progress)) << "walk " << walk;
    // Each constraint placed once, in order, on one of its forms, without overlap.
    ASSERT_EQ(placed.size(), constraints.terms.size());
    std::vector<bool> seen(constraints.terms.size());
    for (size_t i = 0; i < placed.size(); ++i) {
      const PlacedTerm& p = placed[i];
      ASSERT_FALSE(seen[p.term]);
      seen[p.term] = true;
      if (i > 0) {
        ASSERT_GE(p.begin, placed[i - 1].end);
      }
      const TermConstraint& term = constraints.terms[p.term];
      const Ids& form = p.initial ? term.initial_forms[p.form] : term.forms[p.form];
      ASSERT_EQ(Ids(ids.begin() + p.begin, ids.begin() + p.end), form);
      if (p.initial) {
        ASSERT_EQ(p.begin, 0);
      }
    }
  }
}

ModelConfig SmallConfig() {
  ModelConfig config;
  config.vocab_size = 20;
  config.eos_token_id = kEos;
  config.pad_token_id = 19;
  config.never_generated_ids = {18, 19};
  config.max_position_embeddings = 1024;
  config.max_length = 513;  // 512 generated tokens by default.
  return config;
}

// A length bound of `bound` generated tokens (</s> included) for any source.
DecodingOptions BoundOf(int bound) {
  DecodingOptions options;
  options.max_length = bound;
  return options;
}

TEST(ValidateTermConstraintsTest, RefusesWhatCannotBeDecoded) {
  const ModelConfig config = SmallConfig();
  constexpr int kSourceTokens = 5;
  EXPECT_TRUE(
      ValidateTermConstraints({{Term({{1, 2}}, {{3}})}}, config, BoundOf(3), kSourceTokens).ok());
  auto message = [&](const TermConstraints& constraints, int bound = 30) {
    const absl::Status status =
        ValidateTermConstraints(constraints, config, BoundOf(bound), kSourceTokens);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    return std::string(status.message());
  };
  EXPECT_THAT(message({{Term({})}}), HasSubstr("term constraint 0 has no forms"));
  EXPECT_THAT(message({{Term({{1}, {}})}}), HasSubstr("form 1 is empty"));
  EXPECT_THAT(message({{Term({{1, kEos}})}}), HasSubstr("</s>"));
  EXPECT_THAT(message({{Term({{1}}), Term({{19}})}}),
              HasSubstr("term constraint 1's form 0 holds token id 19"));
  EXPECT_THAT(message({{Term({{1}}, {{18}})}}), HasSubstr("initial form 0 holds token id 18"));
  EXPECT_THAT(message({{Term({{20}})}}), HasSubstr("outside the vocabulary [0, 20)"));
  TermConstraints many;
  many.terms.assign(kMaxTermConstraints + 1, Term({{1}}));
  EXPECT_THAT(message(many, 1000), HasSubstr("65 term constraints; the limit is 64"));
  many.terms.pop_back();
  EXPECT_TRUE(ValidateTermConstraints(many, config, BoundOf(65), kSourceTokens).ok());
  // Three tokens needed: a bound of 4 leaves room for them and </s>, 3 does not.
  const TermConstraints three{{Term({{1, 2}, {3, 4, 5}}), Term({{6}})}};
  EXPECT_EQ(MinimumConstrainedTokens(three), 3);
  EXPECT_TRUE(ValidateTermConstraints(three, config, BoundOf(4), kSourceTokens).ok());
  EXPECT_THAT(message(three, 3),
              HasSubstr("its terms need 3 tokens of translation; a translation of it may have 2 "
                        "(max_length 3, or max_length_factor"));
  // The source's bound counts too, and the message names what makes it.
  DecodingOptions by_source;
  by_source.max_length_factor = 0.5f;
  by_source.max_length_offset = 1;
  const absl::Status short_source = ValidateTermConstraints(three, config, by_source, 4);
  EXPECT_EQ(short_source.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_source.message(),
              HasSubstr("a translation of it may have 2 (max_length 512, or max_length_factor 0.5 "
                        "times its 4 source tokens plus max_length_offset 1, less its </s>)"));
}

// What a tracker holds is counted (it keeps every token of every form: at least an int each)
// and within the bound DecodeMemory admits by, for the most constraints an input may have, each
// with the forms of a glossary entry (8 targets and their initial forms) of many tokens.
TEST(TermTrackerTest, MemoryIsCountedAndBounded) {
  std::mt19937 random(7);
  TermConstraints constraints;
  int64_t forms = 0;
  int64_t tokens = 0;
  for (int t = 0; t < kMaxTermConstraints; ++t) {
    TermConstraint term;
    for (int f = 0; f < 16; ++f) {
      Ids form(1 + random() % 40);
      // Tokens 1 to 17: forms share prefixes, and some branch.
      for (int& id : form) id = 1 + static_cast<int>(random() % 17);
      (f < 8 ? term.forms : term.initial_forms).push_back(form);
      ++forms;
      tokens += static_cast<int64_t>(form.size());
    }
    constraints.terms.push_back(std::move(term));
  }
  const TermSizes sizes = SizesOf(constraints);
  EXPECT_EQ(sizes.terms, kMaxTermConstraints);
  EXPECT_EQ(sizes.forms, forms);
  EXPECT_EQ(sizes.tokens, tokens);
  EXPECT_GE(MemoryBytes(constraints), static_cast<size_t>(tokens) * sizeof(int));
  const TermTracker tracker(constraints);
  EXPECT_GE(tracker.memory_bytes(), static_cast<size_t>(tokens + forms) * sizeof(int));
  EXPECT_LE(static_cast<int64_t>(tracker.memory_bytes()), TermTracker::MemoryBound(sizes));
  // One constraint of one short form holds far less.
  const TermConstraints one{{Term({{1, 2}})}};
  EXPECT_LT(TermTracker(one).memory_bytes() * 100, tracker.memory_bytes());
  EXPECT_LE(static_cast<int64_t>(TermTracker(one).memory_bytes()),
            TermTracker::MemoryBound(SizesOf(one)));
}

TEST(TermTrackerTest, SixtyFourConstraintsAreTracked) {
  TermConstraints constraints;
  for (int t = 0; t < kMaxTermConstraints; ++t) constraints.terms.push_back(Term({{t + 1}}));
  const TermTracker tracker(constraints);
  Ids ids;
  for (int t = 0; t < kMaxTermConstraints; ++t) ids.push_back(t + 1);
  EXPECT_FALSE(tracker.AllMet(Feed(tracker, Ids(ids.begin(), ids.end() - 1)).progress));
  EXPECT_TRUE(tracker.AllMet(Feed(tracker, ids).progress));
}

}  // namespace
}  // namespace mtserve
