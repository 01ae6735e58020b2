// Markup placed by relative position around whole words and whole placed forms
// (text/words.h OutsideForms, through text/inline_spans.h PlaceSpansByPosition).
#include "text/words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/segment.h"
#include "text/inline_spans.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

// "Portez votre gilet de sauvetage maintenant.": the form "gilet de sauvetage" at 13-31.
constexpr absl::string_view kText = "Portez votre gilet de sauvetage maintenant.";
const std::vector<Segment> kForms = {{13, 31}};

std::string Bytes(Segment s) { return std::string(kText.substr(s.begin, s.end - s.begin)); }

TEST(OutsideFormsTest, ASpanEdgeInsideAFormWidensOverIt) {
  EXPECT_EQ(Bytes(OutsideForms(kText, {0, 18}, kForms)), "Portez votre gilet de sauvetage");
  EXPECT_EQ(Bytes(OutsideForms(kText, {22, 42}, kForms)), "gilet de sauvetage maintenant");
  EXPECT_EQ(Bytes(OutsideForms(kText, {19, 21}, kForms)), "gilet de sauvetage");
  // Edges at the form's, or outside it, stay.
  EXPECT_EQ(Bytes(OutsideForms(kText, {13, 31}, kForms)), "gilet de sauvetage");
  EXPECT_EQ(Bytes(OutsideForms(kText, {0, 12}, kForms)), "Portez votre");
}

TEST(OutsideFormsTest, AShrunkSpanLeavesTheFormOut) {
  EXPECT_EQ(Bytes(OutsideForms(kText, {0, 18}, kForms, true)), "Portez votre ");
  EXPECT_EQ(Bytes(OutsideForms(kText, {22, 42}, kForms, true)), " maintenant");
  const Segment inside = OutsideForms(kText, {19, 21}, kForms, true);
  EXPECT_EQ(inside.begin, inside.end);
}

TEST(OutsideFormsTest, APointGoesToTheNearerEdge) {
  // "de" starts 6 bytes into the form, 12 before its end; "sauvetage" 9 and 9: its start.
  EXPECT_EQ(OutsideForms(kText, {19, 19}, kForms).begin, 13u);
  EXPECT_EQ(OutsideForms(kText, {22, 22}, kForms).begin, 13u);
  // Nearer the end: past the space after it, at the start of the next word.
  EXPECT_EQ(OutsideForms(kText, {29, 29}, kForms).begin, 32u);
  EXPECT_EQ(OutsideForms(kText, {13, 13}, kForms).begin, 13u);
  EXPECT_EQ(OutsideForms(kText, {7, 7}, kForms).begin, 7u);
}

TEST(OutsideFormsTest, PlaceSpansByPositionKeepsFormsWhole) {
  // Bold over "Wear your" and a code span over "now" in "Wear your vest now, sailor.": by
  // position the bold would end after "gilet", the code span go over "sauvetage".
  const std::string source = "Wear your vest now, sailor.";
  std::vector<InlineSpan> spans(2);
  spans[0].range = {0, 9};
  spans[1].range = {15, 18};
  spans[1].fixed = true;
  const std::vector<Segment> plain = PlaceSpansByPosition(source, spans, kText);
  EXPECT_EQ(Bytes(plain[0]), "Portez votre gilet");
  EXPECT_EQ(Bytes(plain[1]), "sauvetage");
  const std::vector<Segment> placed = PlaceSpansByPosition(source, spans, kText, kForms);
  EXPECT_EQ(Bytes(placed[0]), "Portez votre gilet de sauvetage");
  // A fixed span's own bytes are written in place of its range's words: never over the form,
  // here after it.
  EXPECT_EQ(placed[1].begin, 31u);
  EXPECT_EQ(placed[1].end, 31u);
}

}  // namespace
}  // namespace mtserve
