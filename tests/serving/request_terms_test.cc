// A request's terminology joined to the stored glossary it names (serving/request_terms.h):
// sources compared as the matcher compares them, ignoring case by Unicode's full case folding
// with glossary_ignore_case (CaseFolding.txt: ß folds to "ss", Ä to ä).
#include "serving/request_terms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "serving/glossaries.h"
#include "serving/state/local_glossary_store.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;

class RequestTermsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(glossaries_, Glossaries::Start(
                                          &store_, nullptr, GlossaryLimits(),
                                          [](const std::string& s, const std::string& t) {
                                            return s == "en" && t == "de";
                                          },
                                          "", absl::InfiniteDuration()));
  }

  // A stored glossary of `entries` (en → de): its id.
  std::string Store(std::vector<GlossaryEntry> entries) {
    Glossary glossary;
    glossary.info.name = "streets" + std::to_string(++stored_);
    glossary.info.source_language = "en";
    glossary.info.target_language = "de";
    glossary.entries = std::move(entries);
    absl::StatusOr<GlossaryInfo> info = glossaries_->Create(std::nullopt, std::move(glossary));
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? info->id : "";
  }

  absl::StatusOr<Terminology> Join(const std::string& id, std::vector<GlossaryEntry> own,
                                   bool ignore_case) const {
    TranslationRequest request;
    request.options.glossary_id = id;
    request.options.terms.glossary = std::move(own);
    request.options.terms.ignore_case = ignore_case;
    return RequestTerminology(request, TerminologyLimits(), glossaries_.get(), {{"en", "de"}});
  }

  static std::vector<std::string> Sources(const Terminology& terms) {
    std::vector<std::string> out;
    for (const GlossaryEntry& e : terms.glossary) out.push_back(e.source);
    return out;
  }

  LocalGlossaryStore store_{[] { return absl::Now(); }};
  std::unique_ptr<Glossaries> glossaries_;
  int stored_ = 0;
};

TEST_F(RequestTermsTest, TheRequestsOwnEntryWinsOverTheGlossarysThatFoldsAlike) {
  const std::string id = Store({{"Straße", {"Gasse"}}, {"car", {"Wagen"}}});
  ASSERT_OK_AND_ASSIGN(Terminology folded, Join(id, {{"STRASSE", {"Allee"}}}, true));
  EXPECT_EQ(Sources(folded), (std::vector<std::string>{"STRASSE", "car"}));
  EXPECT_EQ(folded.glossary[0].targets, (std::vector<std::string>{"Allee"}));
  // Case counting, they are two sources.
  ASSERT_OK_AND_ASSIGN(Terminology as_written, Join(id, {{"STRASSE", {"Allee"}}}, false));
  EXPECT_EQ(Sources(as_written), (std::vector<std::string>{"STRASSE", "Straße", "car"}));
}

TEST_F(RequestTermsTest, GlossarySourcesThatDifferOnlyInCaseAreRefusedIgnoringCase) {
  for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
           {"ärger", "ÄRGER"}, {"Straße", "STRASSE"}}) {
    const std::string id = Store({{first, {"a"}}, {second, {"b"}}});
    ASSERT_OK_AND_ASSIGN(Terminology as_written, Join(id, {}, false));
    EXPECT_EQ(Sources(as_written), (std::vector<std::string>{first, second}));
    const absl::StatusOr<Terminology> folded = Join(id, {}, true);
    ASSERT_FALSE(folded.ok()) << first;
    EXPECT_EQ(folded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(folded.status().message(),
                HasSubstr("options.glossary_id \"" + id + "\": its sources \"" + first +
                          "\" and \"" + second + "\" differ only in case"));
  }
}

}  // namespace
}  // namespace mtserve
