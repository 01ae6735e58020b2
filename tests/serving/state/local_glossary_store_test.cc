// The glossary store in the process (serving/state/local_glossary_store.h), in memory and in a
// directory: glossaries kept by their owner, ids that are capabilities only for their owner, the
// limit a owner, and files that a new store on the same directory reads back.
#include "serving/state/local_glossary_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "serving/state/job_id.h"
#include "tests/test_lib/fake_clock.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using testing::FakeClock;
using ::testing::HasSubstr;
using testing::TempDir;

Glossary Make(const std::string& owner, const std::string& name) {
  Glossary glossary;
  glossary.info.owner = owner;
  glossary.info.name = name;
  glossary.info.source_language = "en";
  glossary.info.target_language = "de";
  glossary.entries = {{"car", {"Wagen", "Auto"}}, {"house", {"Haus"}}};
  return glossary;
}

std::vector<std::string> Names(const std::vector<GlossaryInfo>& infos) {
  std::vector<std::string> names;
  for (const GlossaryInfo& info : infos) names.push_back(info.name);
  return names;
}

std::vector<std::string> FilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class LocalGlossaryStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  bool in_directory() const { return GetParam(); }
  std::string store_dir() const { return (dir_.path() / "glossaries").string(); }

  std::unique_ptr<LocalGlossaryStore> MakeStore() {
    auto now = [this] { return clock_.Now(); };
    if (!in_directory()) return std::make_unique<LocalGlossaryStore>(now);
    absl::StatusOr<std::unique_ptr<LocalGlossaryStore>> store =
        LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
    EXPECT_TRUE(store.ok()) << store.status();
    return *std::move(store);
  }

  FakeClock clock_;
  TempDir dir_;
};

TEST_P(LocalGlossaryStoreTest, CreateSetsIdTimeAndCountAndGetGivesTheEntriesBack) {
  auto store = MakeStore();
  clock_.Advance(absl::Seconds(5));
  absl::StatusOr<GlossaryInfo> info = store->Create(Make("alice", "cars"), 10);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(SplitJobId(info->id).has_value()) << info->id;
  EXPECT_EQ(info->created, FakeClock::Start() + absl::Seconds(5));
  EXPECT_EQ(info->entry_count, 2);
  EXPECT_FALSE(info->read_only);
  absl::StatusOr<Glossary> got = store->Get("alice", info->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->info.name, "cars");
  EXPECT_EQ(got->info.source_language, "en");
  EXPECT_EQ(got->info.target_language, "de");
  ASSERT_EQ(got->entries.size(), 2u);
  EXPECT_EQ(got->entries[0].source, "car");
  EXPECT_EQ(got->entries[0].targets, (std::vector<std::string>{"Wagen", "Auto"}));
  EXPECT_EQ(got->entries[1].source, "house");
}

TEST_P(LocalGlossaryStoreTest, OwnersSeeOnlyTheirOwnAndOthersIdsAreNotFound) {
  auto store = MakeStore();
  const GlossaryInfo alices = *store->Create(Make("alice", "a1"), 10);
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(store->Create(Make("bob", "b1"), 10).ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(store->Create(Make("alice", "a2"), 10).ok());
  EXPECT_EQ(Names(store->List("alice")), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(Names(store->List("bob")), (std::vector<std::string>{"b1"}));
  EXPECT_TRUE(store->List("").empty());
  // Bob holds alice's id: it is no capability for him.
  EXPECT_TRUE(absl::IsNotFound(store->Get("bob", alices.id).status()));
  EXPECT_TRUE(absl::IsNotFound(store->Delete("bob", alices.id)));
  EXPECT_TRUE(store->Get("alice", alices.id).ok());
  // Nor is an id with another secret, or something that is no id.
  std::string other = alices.id;
  other[20] = other[20] == 'A' ? 'B' : 'A';
  EXPECT_TRUE(absl::IsNotFound(store->Get("alice", other).status()));
  EXPECT_TRUE(absl::IsNotFound(store->Get("alice", "not-an-id").status()));
  // Deleted, it is gone.
  ASSERT_TRUE(store->Delete("alice", alices.id).ok());
  EXPECT_TRUE(absl::IsNotFound(store->Get("alice", alices.id).status()));
  EXPECT_TRUE(absl::IsNotFound(store->Delete("alice", alices.id)));
  EXPECT_EQ(Names(store->List("alice")), (std::vector<std::string>{"a2"}));
}

TEST_P(LocalGlossaryStoreTest, LimitPerOwnerNamesTheFlagAndCountsEachOwnerApart) {
  auto store = MakeStore();
  ASSERT_TRUE(store->Create(Make("alice", "a1"), 2).ok());
  const GlossaryInfo second = *store->Create(Make("alice", "a2"), 2);
  const absl::StatusOr<GlossaryInfo> third = store->Create(Make("alice", "a3"), 2);
  EXPECT_TRUE(absl::IsResourceExhausted(third.status()));
  EXPECT_THAT(third.status().message(), HasSubstr("--max_glossaries_per_key"));
  EXPECT_TRUE(store->Create(Make("bob", "b1"), 2).ok());
  // Deleting one makes room.
  ASSERT_TRUE(store->Delete("alice", second.id).ok());
  EXPECT_TRUE(store->Create(Make("alice", "a3"), 2).ok());
}

INSTANTIATE_TEST_SUITE_P(MemoryAndDirectory, LocalGlossaryStoreTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Directory" : "Memory"; });

class LocalGlossaryStoreDirectoryTest : public LocalGlossaryStoreTest {};

TEST_F(LocalGlossaryStoreDirectoryTest, ANewStoreOnTheSameDirectoryHasTheGlossaries) {
  auto now = [this] { return clock_.Now(); };
  std::string kept_id;
  std::string deleted_id;
  {
    auto store = *LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
    kept_id = store->Create(Make("alice", "kept"), 10)->id;
    clock_.Advance(absl::Seconds(1));
    deleted_id = store->Create(Make("alice", "deleted"), 10)->id;
    clock_.Advance(absl::Seconds(1));
    ASSERT_TRUE(store->Create(Make("", "everyones"), 10).ok());
    ASSERT_TRUE(store->Delete("alice", deleted_id).ok());
  }
  // One file a glossary, named by its id's selector; nothing else left.
  const std::vector<std::string> files = FilesIn(store_dir());
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& file : files) {
    EXPECT_TRUE(absl::StartsWith(file, "glossary-") && absl::EndsWith(file, ".json")) << file;
  }
  auto again = LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<Glossary> kept = (*again)->Get("alice", kept_id);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->info.name, "kept");
  EXPECT_EQ(kept->info.created, FakeClock::Start());
  EXPECT_EQ(kept->info.entry_count, 2);
  EXPECT_EQ(kept->entries[0].targets, (std::vector<std::string>{"Wagen", "Auto"}));
  EXPECT_TRUE(absl::IsNotFound((*again)->Get("alice", deleted_id).status()));
  EXPECT_EQ(Names((*again)->List("alice")), (std::vector<std::string>{"kept"}));
  EXPECT_EQ(Names((*again)->List("")), (std::vector<std::string>{"everyones"}));
}

TEST_F(LocalGlossaryStoreDirectoryTest, AnUnfinishedWriteIsRemovedAndOtherFilesAreLeft) {
  std::filesystem::create_directories(store_dir());
  dir_.Write("glossaries/glossary-0011223344556677.tmp", "{\"half");
  dir_.Write("glossaries/README", "not ours");
  auto store = LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, [] { return absl::Now(); });
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(FilesIn(store_dir()), (std::vector<std::string>{"README"}));
}

TEST_F(LocalGlossaryStoreDirectoryTest, ACorruptFileFailsTheStartNamingIt) {
  auto now = [] { return absl::Now(); };
  std::string path;
  {
    auto store = *LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
    ASSERT_TRUE(store->Create(Make("alice", "a"), 10).ok());
    path = (std::filesystem::path(store_dir()) / FilesIn(store_dir())[0]).string();
  }
  for (const std::string& corrupt :
       {std::string("{\"id\": \"x\""), std::string("[]"),
        std::string("{\"id\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"owner\":\"a\",\"name\":\"n\","
                    "\"source_language\":\"en\",\"target_language\":\"de\",\"created\":"
                    "\"2026-01-01T00:00:00Z\",\"entries\":[{\"source\":\"a\",\"targets\":[]}]}")}) {
    {
      std::ofstream out(path, std::ios::trunc);
      out << corrupt;
    }
    auto store = LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
    EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << corrupt;
    EXPECT_THAT(store.status().message(), HasSubstr(path)) << corrupt;
  }
  // A file under another glossary's name is refused too.
  const std::string renamed = store_dir() + "/glossary-0000000000000000.json";
  std::filesystem::rename(path, renamed);
  {
    auto store = *LocalGlossaryStore::InDirectory((dir_.path() / "other").string(), 1 << 20, now);
    ASSERT_TRUE(store->Create(Make("alice", "a"), 10).ok());
    const std::string made = (dir_.path() / "other" / FilesIn(dir_.path() / "other")[0]).string();
    std::filesystem::rename(made, renamed);
  }
  auto store = LocalGlossaryStore::InDirectory(store_dir(), 1 << 20, now);
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status()));
  EXPECT_THAT(store.status().message(), HasSubstr("its name is not its id's"));
}

TEST(GlossaryJsonTest, FileJsonReadsBackAsTheSameGlossary) {
  Glossary glossary = Make("alice", "n\"ame");
  glossary.info.id = *NewJobId();
  glossary.info.created = absl::FromUnixMillis(1234567);
  glossary.info.entry_count = 2;
  absl::StatusOr<Glossary> read = GlossaryFromJson(GlossaryFileJson(glossary), "f");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->info.id, glossary.info.id);
  EXPECT_EQ(read->info.owner, "alice");
  EXPECT_EQ(read->info.name, "n\"ame");
  EXPECT_EQ(read->info.created, glossary.info.created);
  EXPECT_EQ(read->info.entry_count, 2);
  EXPECT_EQ(read->entries[1].targets, (std::vector<std::string>{"Haus"}));
}

}  // namespace
}  // namespace mtserve
