// Every glossary a caller may use (serving/glossaries.h): the read-only files of a directory and
// the store's glossaries, with API keys off (everyone's) and on (each key's own), the checks made
// on a new glossary, and the files re-read when they change and on Reload (SIGHUP).
#include "serving/glossaries.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "serving/state/local_glossary_store.h"
#include "tests/test_lib/api_key_files.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr char kBobKey[] = "bob-key";

bool EnToDeOnly(const std::string& source, const std::string& target) {
  return source == "en" && target == "de";
}

Glossary NewGlossary(const std::string& name) {
  Glossary glossary;
  glossary.info.name = name;
  glossary.info.source_language = "en";
  glossary.info.target_language = "de";
  glossary.entries = {{"car", {"Wagen"}}, {"house", {"Haus"}}};
  return glossary;
}

std::vector<std::string> Ids(const absl::StatusOr<std::vector<GlossaryInfo>>& infos) {
  std::vector<std::string> ids;
  if (!infos.ok()) return {std::string(infos.status().ToString())};
  for (const GlossaryInfo& info : *infos) ids.push_back(info.id);
  return ids;
}

class GlossariesTest : public ::testing::Test {
 protected:
  GlossariesTest() { std::filesystem::create_directories(files_dir()); }

  std::string files_dir() const { return (dir_.path() / "files").string(); }
  void WriteFile(const std::string& name, const std::string& contents) const {
    dir_.Write("files/" + name, contents);
  }

  absl::StatusOr<std::unique_ptr<Glossaries>> Start(
      const ApiKeyAuthenticator* auth, GlossaryLimits limits = {},
      absl::Duration poll = absl::InfiniteDuration()) {
    return Glossaries::Start(&store_, auth, limits, EnToDeOnly, files_dir(), poll);
  }

  TempDir dir_;
  LocalGlossaryStore store_{[] { return absl::Now(); }};
};

TEST_F(GlossariesTest, KeysOffFilesAndCreatedGlossariesAreEveryones) {
  WriteFile("products.en-de.tsv", "car\tWagen\ncar\tAuto\nhouse\tHaus\n");
  WriteFile("names.de-en.csv", "\"Schmidt, Anna\",\"Smith, Anna\",de,en\n");
  WriteFile("README.md", "not a glossary");
  WriteFile(".hidden.tsv", "not\ta glossary either\tthree");
  ASSERT_OK_AND_ASSIGN(auto glossaries, Start(nullptr));
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)),
            (std::vector<std::string>{"names.de-en", "products.en-de"}));
  ASSERT_OK_AND_ASSIGN(Glossary products, glossaries->Get(std::nullopt, "products.en-de"));
  EXPECT_EQ(products.info.name, "products");
  EXPECT_EQ(products.info.source_language, "en");
  EXPECT_EQ(products.info.target_language, "de");
  EXPECT_EQ(products.info.entry_count, 2);
  EXPECT_TRUE(products.info.read_only);
  EXPECT_EQ(products.info.owner, "");
  EXPECT_EQ(products.entries[0].targets, (std::vector<std::string>{"Wagen", "Auto"}));

  ASSERT_OK_AND_ASSIGN(GlossaryInfo made, glossaries->Create(std::nullopt, NewGlossary("mine")));
  EXPECT_FALSE(made.read_only);
  EXPECT_EQ(made.entry_count, 2);
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)),
            (std::vector<std::string>{"names.de-en", "products.en-de", made.id}));
  // A key presented while keys are off changes nothing: everyone is one owner.
  EXPECT_TRUE(glossaries->Get(std::string("whatever"), made.id).ok());

  const absl::Status read_only = glossaries->Delete(std::nullopt, "products.en-de");
  EXPECT_TRUE(absl::IsFailedPrecondition(read_only)) << read_only;
  EXPECT_THAT(read_only.message(), HasSubstr("--glossary_dir"));
  EXPECT_TRUE(glossaries->Delete(std::nullopt, made.id).ok());
  EXPECT_TRUE(absl::IsNotFound(glossaries->Get(std::nullopt, made.id).status()));
}

TEST_F(GlossariesTest, KeysOnEachKeySeesItsOwnAndTheFiles) {
  WriteFile("products.en-de.tsv", "car\tWagen\n");
  dir_.Write("keys",
             testing::AliceKeysFile("") +
                 "bob sha256:9b94dc1a51a38769f135edf04033ad7f2f487b6c25929be7a861cfc1ab10cf98"
                 "\n");
  ASSERT_OK_AND_ASSIGN(auto auth,
                       ApiKeyAuthenticator::Start(dir_.File("keys"), absl::Hours(1), nullptr));
  ASSERT_OK_AND_ASSIGN(auto glossaries, Start(auth.get()));
  const std::optional<std::string> alice = testing::kAliceKey;
  const std::optional<std::string> bob = kBobKey;
  EXPECT_TRUE(absl::IsUnauthenticated(glossaries->List(std::nullopt).status()));
  EXPECT_TRUE(absl::IsUnauthenticated(glossaries->List(std::string("wrong")).status()));
  EXPECT_TRUE(absl::IsUnauthenticated(glossaries->Create(std::nullopt, NewGlossary("x")).status()));

  ASSERT_OK_AND_ASSIGN(GlossaryInfo alices, glossaries->Create(alice, NewGlossary("alice's")));
  EXPECT_EQ(alices.owner, "alice");
  EXPECT_EQ(Ids(glossaries->List(alice)), (std::vector<std::string>{"products.en-de", alices.id}));
  EXPECT_EQ(Ids(glossaries->List(bob)), (std::vector<std::string>{"products.en-de"}));
  EXPECT_TRUE(absl::IsNotFound(glossaries->Get(bob, alices.id).status()));
  EXPECT_TRUE(absl::IsNotFound(glossaries->Delete(bob, alices.id)));
  EXPECT_TRUE(glossaries->Get(bob, "products.en-de").ok());
  EXPECT_TRUE(glossaries->Get(alice, alices.id).ok());
}

TEST_F(GlossariesTest, CreateChecksNameLanguagesPairEntriesAndLimitsNamingTheFlags) {
  GlossaryLimits limits;
  limits.max_entries = 2;
  limits.max_glossaries_per_key = 1;
  limits.terms.max_targets = 2;
  ASSERT_OK_AND_ASSIGN(auto glossaries, Start(nullptr, limits));
  struct Case {
    std::string what;
    Glossary glossary;
    std::string needle;
  };
  std::vector<Case> cases;
  cases.push_back({"no name", NewGlossary(""), "name: empty"});
  Glossary bad_language = NewGlossary("g");
  bad_language.info.source_language = "e n";
  cases.push_back({"bad language", bad_language, "source_language: \"e n\" is not a language"});
  Glossary unserved = NewGlossary("g");
  unserved.info.target_language = "fr";
  cases.push_back({"unserved pair", unserved, "translates en into fr"});
  Glossary empty = NewGlossary("g");
  empty.entries.clear();
  cases.push_back({"no entries", empty, "entries: empty"});
  Glossary many = NewGlossary("g");
  many.entries.push_back({"tree", {"Baum"}});
  cases.push_back({"too many", many,
                   "3 distinct sources, over the limit of 2 a glossary (the server's "
                   "--max_glossary_entries)"});
  Glossary markup = NewGlossary("g");
  markup.entries[1].targets = {"<b>Haus</b>"};
  cases.push_back({"markup", markup, "entries: glossary[1].targets[0]: holds markup"});
  Glossary merged_over = NewGlossary("g");
  merged_over.entries = {{"car", {"Wagen", "Auto"}}, {"car", {"Karre"}}};
  cases.push_back({"merged targets over", merged_over,
                   "entries: glossary[0].targets: 3 forms, over the limit of 2"});
  for (const Case& c : cases) {
    const auto made = glossaries->Create(std::nullopt, c.glossary);
    EXPECT_TRUE(absl::IsInvalidArgument(made.status())) << c.what << ": " << made.status();
    EXPECT_THAT(made.status().message(), HasSubstr(c.needle)) << c.what;
  }
  // The same source twice is one entry with both targets.
  Glossary twice = NewGlossary("g");
  twice.entries = {{"car", {"Wagen"}}, {"house", {"Haus"}}, {"car", {"Auto", "Wagen"}}};
  ASSERT_OK_AND_ASSIGN(GlossaryInfo made, glossaries->Create(std::nullopt, twice));
  EXPECT_EQ(made.entry_count, 2);
  ASSERT_OK_AND_ASSIGN(Glossary got, glossaries->Get(std::nullopt, made.id));
  EXPECT_EQ(got.entries[0].targets, (std::vector<std::string>{"Wagen", "Auto"}));
  // One glossary a key at most here.
  const auto second = glossaries->Create(std::nullopt, NewGlossary("second"));
  EXPECT_TRUE(absl::IsResourceExhausted(second.status())) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr("--max_glossaries_per_key"));
}

TEST_F(GlossariesTest, BadFilesFailTheStartNamingTheFileAndLine) {
  WriteFile("ok.en-de.tsv", "car\tWagen\n");
  WriteFile("broken.en-de.tsv", "car\tWagen\nhouse\n");
  const auto started = Start(nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(started.status())) << started.status();
  EXPECT_THAT(started.status().message(), HasSubstr("broken.en-de.tsv, line 2: 1 field"));
  std::filesystem::remove(dir_.path() / "files" / "broken.en-de.tsv");
  WriteFile("no-languages.tsv", "car\tWagen\n");
  const auto named = Start(nullptr);
  EXPECT_THAT(named.status().message(),
              HasSubstr("glossary file no-languages.tsv: its name is not NAME.SRC-TGT.tsv"));
  std::filesystem::remove(dir_.path() / "files" / "no-languages.tsv");
  WriteFile("wrong.en-de.csv", "car,Wagen,en,fr\n");
  const auto columns = Start(nullptr);
  EXPECT_THAT(columns.status().message(),
              HasSubstr("wrong.en-de.csv, line 1: the target language is \"fr\""));
  const auto missing =
      Glossaries::Start(&store_, nullptr, {}, EnToDeOnly, (dir_.path() / "none").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("none"));
}

TEST_F(GlossariesTest, ReloadReadsTheFilesAgainAndABadVersionKeepsThePrevious) {
  WriteFile("a.en-de.tsv", "car\tWagen\n");
  ASSERT_OK_AND_ASSIGN(auto glossaries, Start(nullptr));
  WriteFile("b.en-de.tsv", "house\tHaus\n");
  WriteFile("a.en-de.tsv", "car\tAuto\n");
  ASSERT_TRUE(glossaries->Reload().ok());
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)), (std::vector<std::string>{"a.en-de", "b.en-de"}));
  EXPECT_EQ(glossaries->Get(std::nullopt, "a.en-de")->entries[0].targets,
            (std::vector<std::string>{"Auto"}));
  // A file that does not parse: the reload fails, naming it, and what was read stays.
  WriteFile("c.en-de.tsv", "tree\n");
  const absl::Status bad = glossaries->Reload();
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_THAT(bad.message(), HasSubstr("c.en-de.tsv, line 1"));
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)), (std::vector<std::string>{"a.en-de", "b.en-de"}));
  // Removed files are gone once the directory reads again.
  std::filesystem::remove(dir_.path() / "files" / "c.en-de.tsv");
  std::filesystem::remove(dir_.path() / "files" / "a.en-de.tsv");
  ASSERT_TRUE(glossaries->Reload().ok());
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)), (std::vector<std::string>{"b.en-de"}));
  EXPECT_TRUE(absl::IsNotFound(glossaries->Get(std::nullopt, "a.en-de").status()));
}

TEST_F(GlossariesTest, PollingPicksUpANewFile) {
  ASSERT_OK_AND_ASSIGN(auto glossaries, Start(nullptr, {}, absl::Milliseconds(10)));
  EXPECT_TRUE(Ids(glossaries->List(std::nullopt)).empty());
  WriteFile("new.en-de.tsv", "car\tWagen\n");
  // The event awaited: the poller reads the new file (a minute is only a bound on a broken
  // poller, never a measure).
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (Ids(glossaries->List(std::nullopt)).empty() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(Ids(glossaries->List(std::nullopt)), (std::vector<std::string>{"new.en-de"}));
}

}  // namespace
}  // namespace mtserve
