// What a re-read of the --model_dir directories changes, decided apart from the file reads, the
// model repository and the lock that carry it out (model_dir_rescan.h): which folders are gone
// (retire their model), kept because their directory cannot be read, new or changed (read them
// now, or wait until a second scan sees them the same), added, replacing what they served, or
// refused (a folder that does not scan, a name another model has), and which reasons to log:
// once while they last. No file, clock, thread or lock: each scan is described to it.
//
// One scan, in order: Begin (the directories' listings) says what to retire and which folders to
// read; for each folder read, in that order, Consider (its model's name, or why it cannot be
// served) says whether to add it; Added or Failed reports what the add did; End says whether the
// scan changed anything and whether it failed.
#ifndef MTSERVE_SERVER_MODEL_DIR_CHANGES_H_
#define MTSERVE_SERVER_MODEL_DIR_CHANGES_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

class ModelDirChanges {
 public:
  // A folder served from a --model_dir.
  struct Served {
    std::string dir;    // The --model_dir it is in, as given.
    std::string files;  // Its files (names, sizes, modification times) when it was added.
    std::string name;   // Its model's name.
    int slot = -1;      // Its model's repository slot.
  };
  // `served`: the folders served at start, by path; `fixed_names`: the models not from a
  // --model_dir (--model), whose names a folder may not take.
  ModelDirChanges(std::map<std::string, Served> served, std::set<std::string> fixed_names);

  // What a scan found.
  struct Scan {
    struct Listing {
      std::string dir;    // The --model_dir it is in, as given.
      std::string files;  // Names, sizes and modification times of its files.
    };
    // The checkpoint folders of the directories that could be read, by path.
    std::map<std::string, Listing> folders;
    // The directories that could not be read (as given), with the reason: their folders are
    // kept as they were.
    std::map<std::string, std::string> unreadable;
    // A SIGHUP asked for the scan: new and changed folders are read at once, not only once two
    // scans in a row have seen them the same.
    bool signalled = false;
  };
  struct Retire {
    std::string folder;
    Served served;
  };
  struct Begun {
    std::vector<Retire> retire;     // Folders gone: retire their models.
    std::vector<std::string> read;  // New or changed folders to read now, in path order.
    std::vector<std::string> wait;  // New or changed folders the previous scan saw otherwise.
    std::vector<std::string> log;   // Why directories cannot be read, not said before.
  };
  // Starts a scan. The folders to retire are no longer served when it returns.
  Begun Begin(const Scan& scan);

  struct Decision {
    enum Action { kAdd, kReplace, kRefuse };
    Action action = kRefuse;
    int replaces = -1;   // kReplace: the slot of the model it replaces.
    std::string reason;  // kRefuse: why.
    bool log = false;    // kRefuse: the reason was not said before.
  };
  // What to do with `folder`, one of Begin's `read`: its model's name, or why it cannot be served
  // (`name`'s status message, naming the file).
  Decision Consider(const std::string& folder, const absl::StatusOr<std::string>& name);
  // The model of `folder` (Consider said kAdd or kReplace) is served in `slot`, named `name`.
  void Added(const std::string& folder, const std::string& name, int slot);
  // Adding it failed (the old model, if any, is kept): whether to log `reason` (not said before).
  bool Failed(const std::string& folder, const std::string& reason);

  struct Ended {
    bool changed = false;  // A model retired, added or replaced: serve the new set.
    bool failed = false;   // A directory unreadable, a folder refused or failed.
    // mtserve_model_rescans_total's result: "failed", else "changed", else "unchanged".
    absl::string_view result() const;
  };
  Ended End();

  // The folders served now, by path.
  const std::map<std::string, Served>& served() const { return served_; }

 private:
  // Records `reason` for `key` (a folder or a directory) in this scan: whether it is new.
  bool Say(const std::string& key, const std::string& reason);
  // Whether a model other than `folder`'s is named `name`.
  bool NameTaken(const std::string& name, const std::string& folder) const;

  std::map<std::string, Served> served_;
  const std::set<std::string> fixed_names_;
  std::map<std::string, std::string> previous_;  // The previous scan's listings, by folder.
  std::map<std::string, std::string> said_;      // Reasons the previous scan logged, by key.
  // The scan under way.
  Scan scan_;
  std::map<std::string, std::string> saying_;  // Reasons this scan found, by key.
  Ended ended_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_MODEL_DIR_CHANGES_H_
