// The decisions of a --model_dir re-read (server/model_dir_changes.h), scan by scan: a new
// folder seen once by polling waits, seen twice the same is added, a SIGHUP adds it at once; a
// changed folder is replaced, a removed one retired; the folders of a directory that cannot be
// read are kept; a folder that does not scan or takes another model's name is refused, and each
// reason is logged once while it lasts; a copy renamed in from ".name", or a folder renamed.
#include "server/model_dir_changes.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kDir[] = "/models";
constexpr char kOtherDir[] = "/more-models/";  // As given, with its slash.

// A folder of kDir listed with `files`.
std::pair<const std::string, ModelDirChanges::Scan::Listing> In(const std::string& name,
                                                                const std::string& files) {
  return {absl::StrCat(kDir, "/", name), {kDir, files}};
}

std::string Path(const std::string& name) { return absl::StrCat(kDir, "/", name); }

// Carries out scans as model_dir_rescan.cc does, and writes down each action: the folders read
// give the model names (or errors) of `names`, by folder name; adds take the next slot, from 10,
// or fail for the folders in `add_fails` (the repository refusing, as for a model beyond
// --model_memory).
class Driver {
 public:
  Driver(std::map<std::string, ModelDirChanges::Served> served,
         std::set<std::string> fixed_names = {})
      : changes_(std::move(served), std::move(fixed_names)) {}

  std::map<std::string, absl::StatusOr<std::string>> names;
  std::set<std::string> add_fails;

  // One scan of `folders` (and `unreadable` directories): its actions, then its result.
  std::vector<std::string> Scan(std::map<std::string, ModelDirChanges::Scan::Listing> folders,
                                bool signalled = false,
                                std::map<std::string, std::string> unreadable = {}) {
    std::vector<std::string> actions;
    const ModelDirChanges::Begun begun =
        changes_.Begin({std::move(folders), std::move(unreadable), signalled});
    for (const std::string& reason : begun.log) actions.push_back("log " + reason);
    for (const ModelDirChanges::Retire& gone : begun.retire) {
      actions.push_back(absl::StrCat("retire ", gone.folder, " (", gone.served.name, ", slot ",
                                     gone.served.slot, ")"));
    }
    for (const std::string& folder : begun.wait) actions.push_back("wait " + folder);
    for (const std::string& folder : begun.read) {
      const std::string name = folder.substr(folder.rfind('/') + 1);
      const auto read = names.find(name);
      if (read == names.end()) {
        ADD_FAILURE() << "read " << folder << ", which the test has no name for";
        continue;
      }
      const ModelDirChanges::Decision decision = changes_.Consider(folder, read->second);
      if (decision.action == ModelDirChanges::Decision::kRefuse) {
        actions.push_back(
            absl::StrCat("refuse ", decision.reason, decision.log ? " (logged)" : ""));
        continue;
      }
      if (add_fails.contains(name)) {
        const std::string reason = folder + ": too big";
        const bool log = changes_.Failed(folder, reason);
        actions.push_back(absl::StrCat("failed ", reason, log ? " (logged)" : ""));
        continue;
      }
      const int slot = next_slot_++;
      changes_.Added(folder, *read->second, slot);
      actions.push_back(
          decision.action == ModelDirChanges::Decision::kReplace
              ? absl::StrCat("replace slot ", decision.replaces, " by ", folder, " as ",
                             *read->second, " in slot ", slot)
              : absl::StrCat("add ", folder, " as ", *read->second, " in slot ", slot));
    }
    actions.push_back(std::string(changes_.End().result()));
    return actions;
  }

  // The folders served, as "folder name slot files".
  std::vector<std::string> Served() const {
    std::vector<std::string> served;
    for (const auto& [folder, s] : changes_.served()) {
      served.push_back(absl::StrCat(folder, " ", s.name, " ", s.slot, " ", s.files));
    }
    return served;
  }

 private:
  ModelDirChanges changes_;
  int next_slot_ = 10;
};

// Served at start: /models/a as "a" in slot 1, /models/b as "b" in slot 2, each listed "v1".
std::map<std::string, ModelDirChanges::Served> AB() {
  return {{Path("a"), {kDir, "v1", "a", 1}}, {Path("b"), {kDir, "v1", "b", 2}}};
}

TEST(ModelDirChangesTest, NothingChangedDoesNothing) {
  Driver driver(AB(), {"main"});
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1")}), ElementsAre("unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1")}, /*signalled=*/true),
              ElementsAre("unchanged"));
}

TEST(ModelDirChangesTest, PollingAddsANewFolderOnceTwoScansSawItTheSame) {
  Driver driver(AB());
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1")}),
              ElementsAre("wait /models/c", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1")}),
              ElementsAre("add /models/c as c in slot 10", "changed"));
  EXPECT_THAT(driver.Served(),
              ElementsAre("/models/a a 1 v1", "/models/b b 2 v1", "/models/c c 10 v1"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1")}), ElementsAre("unchanged"));
}

// A checkpoint still being copied: each scan sees other files, so it waits until two agree.
TEST(ModelDirChangesTest, PollingWaitsWhileAFolderKeepsChanging) {
  Driver driver({});
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("c", "1 file")}), ElementsAre("wait /models/c", "unchanged"));
  EXPECT_THAT(driver.Scan({In("c", "2 files")}), ElementsAre("wait /models/c", "unchanged"));
  EXPECT_THAT(driver.Scan({In("c", "3 files")}), ElementsAre("wait /models/c", "unchanged"));
  EXPECT_THAT(driver.Scan({In("c", "3 files")}),
              ElementsAre("add /models/c as c in slot 10", "changed"));
}

TEST(ModelDirChangesTest, ASighupAddsAtOnce) {
  Driver driver(AB());
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1")}, /*signalled=*/true),
              ElementsAre("add /models/c as c in slot 10", "changed"));
  // And one that polling saw once.
  driver.names["d"] = "d";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1"), In("d", "v1")}),
              ElementsAre("wait /models/d", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "v1"), In("d", "v2")},
                          /*signalled=*/true),
              ElementsAre("add /models/d as d in slot 11", "changed"));
}

TEST(ModelDirChangesTest, AChangedFolderIsReplacedInItsSlotsPlace) {
  Driver driver(AB());
  driver.names["a"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}),
              ElementsAre("wait /models/a", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}),
              ElementsAre("replace slot 1 by /models/a as a in slot 10", "changed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 10 v2", "/models/b b 2 v1"));
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}), ElementsAre("unchanged"));
  // On a SIGHUP at once, and the new slot is the one replaced next.
  EXPECT_THAT(driver.Scan({In("a", "v3"), In("b", "v1")}, /*signalled=*/true),
              ElementsAre("replace slot 10 by /models/a as a in slot 11", "changed"));
}

// Changed, then back to what is served before the second scan, then changed again: the second
// change is new, and waits for a scan of its own.
TEST(ModelDirChangesTest, AFolderChangedBackAndAgainWaitsForTwoScansOfTheSameFiles) {
  Driver driver(AB());
  driver.names["a"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}),
              ElementsAre("wait /models/a", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1")}), ElementsAre("unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}),
              ElementsAre("wait /models/a", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1")}),
              ElementsAre("replace slot 1 by /models/a as a in slot 10", "changed"));
}

// A changed folder's mtserve.json may rename its model: the old name is then free.
TEST(ModelDirChangesTest, AReplacedModelMayTakeANewNameAndFreeItsOld) {
  Driver driver(AB());
  driver.names["a"] = "french";
  driver.names["c"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1"), In("c", "v1")}, /*signalled=*/true),
              ElementsAre("replace slot 1 by /models/a as french in slot 10",
                          "add /models/c as a in slot 11", "changed"));
}

TEST(ModelDirChangesTest, ARemovedFolderIsRetired) {
  Driver driver(AB());
  EXPECT_THAT(driver.Scan({In("a", "v1")}), ElementsAre("retire /models/b (b, slot 2)", "changed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 1 v1"));
  EXPECT_THAT(driver.Scan({In("a", "v1")}), ElementsAre("unchanged"));
  // Every folder gone (the directory read, and empty).
  EXPECT_THAT(driver.Scan({}, /*signalled=*/true),
              ElementsAre("retire /models/a (a, slot 1)", "changed"));
  EXPECT_THAT(driver.Served(), IsEmpty());
}

// Retired first: its name is free for a folder of the same scan.
TEST(ModelDirChangesTest, ARemovedFoldersNameIsFreeInTheSameScan) {
  Driver driver({{Path("x"), {kDir, "v1", "fr-en", 1}}});
  driver.names["y"] = "fr-en";
  EXPECT_THAT(driver.Scan({In("y", "v1")}, /*signalled=*/true),
              ElementsAre("retire /models/x (fr-en, slot 1)", "add /models/y as fr-en in slot 10",
                          "changed"));
}

// A directory that cannot be read (a volume not mounted yet, a permission) keeps its folders,
// whatever else the scan does; the reason is logged once while it lasts.
TEST(ModelDirChangesTest, TheFoldersOfADirectoryThatCannotBeReadAreKept) {
  Driver driver({{Path("a"), {kDir, "v1", "a", 1}},
                 {absl::StrCat(kOtherDir, "b"), {kOtherDir, "v1", "b", 2}}});
  const std::map<std::string, std::string> unreadable = {{kOtherDir, "cannot be read: gone"}};
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1")}, false, unreadable),
              ElementsAre("log cannot be read: gone", "failed"));
  EXPECT_THAT(driver.Scan({In("a", "v1")}, false, unreadable), ElementsAre("failed"));
  // The other directory's changes go on; a failure is what the scan counts.
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v1")}, /*signalled=*/true, unreadable),
              ElementsAre("add /models/c as c in slot 10", "failed"));
  EXPECT_THAT(driver.Served(),
              ElementsAre("/models/a a 1 v1", "/models/c c 10 v1", "/more-models/b b 2 v1"));
  // Readable again: its folder as it was, nothing to do.
  const std::pair<const std::string, ModelDirChanges::Scan::Listing> b = {
      absl::StrCat(kOtherDir, "b"), {kOtherDir, "v1"}};
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v1"), b}), ElementsAre("unchanged"));
  // Unreadable again: said again.
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v1")}, false, unreadable),
              ElementsAre("log cannot be read: gone", "failed"));
  // Read, and its folder gone: retired.
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v1")}),
              ElementsAre("retire /more-models/b (b, slot 2)", "changed"));
}

// The name of a --model model, or of another folder's: refused, logged once while it lasts.
TEST(ModelDirChangesTest, ATakenNameIsRefusedAndLoggedOnce) {
  Driver driver(AB(), {"main"});
  driver.names["c"] = "main";
  driver.names["d"] = "b";
  const std::map<std::string, ModelDirChanges::Scan::Listing> folders = {
      In("a", "v1"), In("b", "v1"), In("c", "v1"), In("d", "v1")};
  EXPECT_THAT(driver.Scan(folders, /*signalled=*/true),
              ElementsAre("refuse /models/c: another model is named \"main\" (logged)",
                          "refuse /models/d: another model is named \"b\" (logged)", "failed"));
  // Polling reads them again (seen the same), and says nothing new.
  EXPECT_THAT(driver.Scan(folders),
              ElementsAre("refuse /models/c: another model is named \"main\"",
                          "refuse /models/d: another model is named \"b\"", "failed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 1 v1", "/models/b b 2 v1"));
  // b goes: d takes its name.
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v1"), In("d", "v1")}),
              ElementsAre("retire /models/b (b, slot 2)",
                          "refuse /models/c: another model is named \"main\"",
                          "add /models/d as b in slot 10", "failed"));
  // c is renamed: logged no more.
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("c", "v2"), In("d", "v1")}, /*signalled=*/true),
              ElementsAre("add /models/c as c in slot 11", "changed"));
}

// Two new folders of one name: the first in path order is served.
TEST(ModelDirChangesTest, TwoNewFoldersOfOneNameServeTheFirst) {
  Driver driver({});
  driver.names["p"] = "x";
  driver.names["q"] = "x";
  EXPECT_THAT(driver.Scan({In("q", "v1"), In("p", "v1")}, /*signalled=*/true),
              ElementsAre("add /models/p as x in slot 10",
                          "refuse /models/q: another model is named \"x\" (logged)", "failed"));
}

// Two served folders changed to take each other's name: each is refused (the other holds it),
// and both keep serving what they served.
TEST(ModelDirChangesTest, SwappedNamesAreRefusedAndTheOldModelsKept) {
  Driver driver(AB());
  driver.names["a"] = "b";
  driver.names["b"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v2")}, /*signalled=*/true),
              ElementsAre("refuse /models/a: another model is named \"b\" (logged)",
                          "refuse /models/b: another model is named \"a\" (logged)", "failed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 1 v1", "/models/b b 2 v1"));
}

// A folder that does not scan (a bad mtserve.json, a multi-target checkpoint): refused, or for a
// changed one its old model kept; logged once while it lasts, and again when it comes back.
TEST(ModelDirChangesTest, AFolderThatDoesNotScanIsRefusedAndLoggedOnce) {
  Driver driver(AB());
  driver.names["a"] = absl::InvalidArgumentError("/models/a/mtserve.json: invalid JSON");
  driver.names["c"] = absl::InvalidArgumentError("/models/c: a multi-target checkpoint");
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1"), In("c", "v1")}, /*signalled=*/true),
              ElementsAre("refuse /models/a/mtserve.json: invalid JSON (logged)",
                          "refuse /models/c: a multi-target checkpoint (logged)", "failed"));
  EXPECT_THAT(driver.Scan({In("a", "v2"), In("b", "v1"), In("c", "v1")}),
              ElementsAre("refuse /models/a/mtserve.json: invalid JSON",
                          "refuse /models/c: a multi-target checkpoint", "failed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 1 v1", "/models/b b 2 v1"));
  // a fixed; c taken out, then put back as it was: said again.
  driver.names["a"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "v3"), In("b", "v1")}, /*signalled=*/true),
              ElementsAre("replace slot 1 by /models/a as a in slot 10", "changed"));
  EXPECT_THAT(driver.Scan({In("a", "v3"), In("b", "v1"), In("c", "v1")}, /*signalled=*/true),
              ElementsAre("refuse /models/c: a multi-target checkpoint (logged)", "failed"));
}

// The repository refusing the add (a model beyond --model_memory): logged once, the old model
// kept, and tried again at each scan (the budget is not re-read, but the files may change).
TEST(ModelDirChangesTest, AnAddThatFailsKeepsTheOldModelAndIsLoggedOnce) {
  Driver driver(AB());
  driver.names["a"] = "a";
  driver.names["c"] = "c";
  driver.add_fails = {"a", "c"};
  const std::map<std::string, ModelDirChanges::Scan::Listing> folders = {
      In("a", "v2"), In("b", "v1"), In("c", "v1")};
  EXPECT_THAT(driver.Scan(folders, /*signalled=*/true),
              ElementsAre("failed /models/a: too big (logged)",
                          "failed /models/c: too big (logged)", "failed"));
  EXPECT_THAT(driver.Scan(folders),
              ElementsAre("failed /models/a: too big", "failed /models/c: too big", "failed"));
  EXPECT_THAT(driver.Served(), ElementsAre("/models/a a 1 v1", "/models/b b 2 v1"));
  // c's name was never taken: another folder may have it.
  driver.names["d"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("d", "v1")}, /*signalled=*/true),
              ElementsAre("add /models/d as c in slot 10", "changed"));
}

// A checkpoint copied in as ".name" is not listed (ModelFolders skips it) until it is renamed:
// from then it is a new folder, listed with the files the copy wrote.
TEST(ModelDirChangesTest, AFolderRenamedInFromADotNameIsNew) {
  Driver driver(AB());
  driver.names["c"] = "c";
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1")}), ElementsAre("unchanged"));  // ".c"
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "copied")}),
              ElementsAre("wait /models/c", "unchanged"));
  EXPECT_THAT(driver.Scan({In("a", "v1"), In("b", "v1"), In("c", "copied")}),
              ElementsAre("add /models/c as c in slot 10", "changed"));
  // Replacing: a renamed away as ".old-a", ".a" renamed in with other files.
  driver.names["a"] = "a";
  EXPECT_THAT(driver.Scan({In("a", "new"), In("b", "v1"), In("c", "copied")}, /*signalled=*/true),
              ElementsAre("replace slot 1 by /models/a as a in slot 11", "changed"));
}

// A folder renamed: the old one is gone, the new one is new. Named by its mtserve.json, the model
// keeps its name: at once on a SIGHUP, after a scan without it when polling.
TEST(ModelDirChangesTest, ARenamedFolderIsRetiredAndAddedAgain) {
  Driver driver({{Path("x"), {kDir, "v1", "fr-en", 1}}});
  driver.names["y"] = "fr-en";
  EXPECT_THAT(driver.Scan({In("y", "v1")}),
              ElementsAre("retire /models/x (fr-en, slot 1)", "wait /models/y", "changed"));
  EXPECT_THAT(driver.Scan({In("y", "v1")}),
              ElementsAre("add /models/y as fr-en in slot 10", "changed"));
  driver.names["z"] = "fr-en";
  EXPECT_THAT(driver.Scan({In("z", "v1")}, /*signalled=*/true),
              ElementsAre("retire /models/y (fr-en, slot 10)", "add /models/z as fr-en in slot 11",
                          "changed"));
}

}  // namespace
}  // namespace mtserve
