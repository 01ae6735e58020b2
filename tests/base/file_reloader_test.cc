#include "base/file_reloader.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

// What a reloader applied: the files' contents joined with "|", refusing contents with "bad".
struct Applied {
  std::vector<std::string> versions;
  FileReloader::Apply apply() {
    return [this](const std::vector<std::string>& contents) -> absl::Status {
      std::string joined;
      for (const std::string& content : contents) joined += content + "|";
      if (absl::StrContains(joined, "bad")) return absl::InvalidArgumentError("bad content");
      versions.push_back(joined);
      return absl::OkStatus();
    };
  }
};

FileReloader::Options OptionsFor(std::vector<std::string> paths) {
  FileReloader::Options options;
  options.what = "test files";
  options.paths = std::move(paths);
  options.max_bytes = 16;
  options.poll_interval = absl::InfiniteDuration();  // The tests call ReloadIfChanged.
  return options;
}

TEST(FileReloaderTest, AppliesAtStartAndWhenAFileChanges) {
  testing::TempDir dir;
  dir.Write("a", "one");
  dir.Write("b", "two");
  Applied applied;
  ASSERT_OK_AND_ASSIGN(
      auto reloader,
      FileReloader::Start(OptionsFor({dir.File("a"), dir.File("b")}), applied.apply()));
  EXPECT_EQ(applied.versions, std::vector<std::string>{"one|two|"});
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.versions.size(), 1u) << "unchanged files are not applied again";
  dir.Write("b", "three");  // A new file (size differs too).
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.versions.back(), "one|three|");
  EXPECT_TRUE(reloader->Reload().ok());
  EXPECT_EQ(applied.versions.size(), 3u) << "Reload applies even unchanged files";
}

TEST(FileReloaderTest, BadNewContentKeepsThePreviousAndIsNotRetriedUntilItChanges) {
  testing::TempDir dir;
  dir.Write("a", "good");
  Applied applied;
  ASSERT_OK_AND_ASSIGN(auto reloader,
                       FileReloader::Start(OptionsFor({dir.File("a")}), applied.apply()));
  dir.Write("a", "bad");
  const absl::Status status = reloader->ReloadIfChanged();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(applied.versions, std::vector<std::string>{"good|"});
  // The same bad version is not tried again at every poll.
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  dir.Write("a", "better");
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.versions.back(), "better|");
}

TEST(FileReloaderTest, MissingOversizedOrSpecialFilesAreErrorsNamingTheFile) {
  testing::TempDir dir;
  Applied applied;
  auto missing = FileReloader::Start(OptionsFor({dir.File("none")}), applied.apply());
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "test files"));
  EXPECT_TRUE(absl::StrContains(missing.status().message(), dir.File("none")));
  dir.Write("big", std::string(17, 'x'));
  auto big = FileReloader::Start(OptionsFor({dir.File("big")}), applied.apply());
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(absl::StrContains(big.status().message(), "the limit is 16")) << big.status();
  auto directory = FileReloader::Start(OptionsFor({dir.path().string()}), applied.apply());
  ASSERT_FALSE(directory.ok());
  EXPECT_TRUE(absl::StrContains(directory.status().message(), "not a regular file"));
  EXPECT_TRUE(applied.versions.empty());

  // A file that goes away while serving keeps the previous version.
  dir.Write("a", "good");
  ASSERT_OK_AND_ASSIGN(auto reloader,
                       FileReloader::Start(OptionsFor({dir.File("a")}), applied.apply()));
  std::filesystem::remove(dir.File("a"));
  EXPECT_EQ(reloader->ReloadIfChanged().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(applied.versions, std::vector<std::string>{"good|"});
}

TEST(FileReloaderTest, ListedFilesComeAndGoAndAFailedListingKeepsThePrevious) {
  testing::TempDir dir;
  dir.Write("a", "one");
  bool fail = false;
  std::vector<std::string> listed = {dir.File("a")};
  FileReloader::Options options = OptionsFor({});
  options.list = [&]() -> absl::StatusOr<std::vector<std::string>> {
    if (fail) return absl::NotFoundError("cannot list");
    return listed;
  };
  std::vector<std::string> applied;
  ASSERT_OK_AND_ASSIGN(auto reloader,
                       FileReloader::Start(options, [&](const std::vector<std::string>& paths,
                                                        const std::vector<std::string>& contents) {
                         std::string joined;
                         for (size_t i = 0; i < paths.size(); ++i)
                           joined += paths[i] + "=" + contents[i] + "|";
                         applied.push_back(joined);
                         return absl::OkStatus();
                       }));
  EXPECT_EQ(applied, std::vector<std::string>{dir.File("a") + "=one|"});
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.size(), 1u) << "an unchanged listing is not applied again";
  // A file added, unchanged ones as they were: a change.
  dir.Write("b", "two");
  listed.push_back(dir.File("b"));
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.back(), dir.File("a") + "=one|" + dir.File("b") + "=two|");
  // One removed.
  listed.erase(listed.begin());
  EXPECT_TRUE(reloader->ReloadIfChanged().ok());
  EXPECT_EQ(applied.back(), dir.File("b") + "=two|");
  fail = true;
  EXPECT_EQ(reloader->ReloadIfChanged().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(applied.size(), 3u);
}

}  // namespace
}  // namespace mtserve
