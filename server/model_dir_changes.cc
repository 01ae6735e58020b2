// The decisions of a --model_dir re-read (model_dir_changes.h).
#include "server/model_dir_changes.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace mtserve {

ModelDirChanges::ModelDirChanges(std::map<std::string, Served> served,
                                 std::set<std::string> fixed_names)
    : served_(std::move(served)), fixed_names_(std::move(fixed_names)) {}

bool ModelDirChanges::Say(const std::string& key, const std::string& reason) {
  ended_.failed = true;
  saying_[key] = reason;
  const auto said = said_.find(key);
  return said == said_.end() || said->second != reason;
}

bool ModelDirChanges::NameTaken(const std::string& name, const std::string& folder) const {
  if (fixed_names_.contains(name)) return true;
  for (const auto& [other, served] : served_) {
    if (other != folder && served.name == name) return true;
  }
  return false;
}

ModelDirChanges::Begun ModelDirChanges::Begin(const Scan& scan) {
  scan_ = scan;
  saying_.clear();
  ended_ = {};
  Begun begun;
  for (const auto& [dir, reason] : scan_.unreadable) {
    if (Say(dir, reason)) begun.log.push_back(reason);
  }
  // Gone: not in a directory read now. A folder of a directory that cannot be read is kept.
  for (auto it = served_.begin(); it != served_.end();) {
    if (scan_.folders.contains(it->first) || scan_.unreadable.contains(it->second.dir)) {
      ++it;
      continue;
    }
    begun.retire.push_back({it->first, std::move(it->second)});
    it = served_.erase(it);
    ended_.changed = true;
  }
  // New or changed: read once two scans in a row see the same files (a checkpoint being copied
  // in changes between them), or at once on a SIGHUP (sent once the copy is done).
  for (const auto& [folder, listing] : scan_.folders) {
    const auto known = served_.find(folder);
    if (known != served_.end() && known->second.files == listing.files) continue;
    const auto previous = previous_.find(folder);
    const bool stable = previous != previous_.end() && previous->second == listing.files;
    (scan_.signalled || stable ? begun.read : begun.wait).push_back(folder);
  }
  return begun;
}

ModelDirChanges::Decision ModelDirChanges::Consider(const std::string& folder,
                                                    const absl::StatusOr<std::string>& name) {
  Decision decision;
  if (!name.ok()) {
    decision.reason = std::string(name.status().message());
  } else if (NameTaken(*name, folder)) {
    decision.reason = absl::StrCat(folder, ": another model is named \"", *name, "\"");
  } else if (const auto known = served_.find(folder); known != served_.end()) {
    decision.action = Decision::kReplace;
    decision.replaces = known->second.slot;
    return decision;
  } else {
    decision.action = Decision::kAdd;
    return decision;
  }
  decision.log = Say(folder, decision.reason);
  return decision;
}

void ModelDirChanges::Added(const std::string& folder, const std::string& name, int slot) {
  const auto listing = scan_.folders.find(folder);
  if (listing == scan_.folders.end()) return;  // Not a folder of this scan.
  served_[folder] = {listing->second.dir, listing->second.files, name, slot};
  ended_.changed = true;
}

bool ModelDirChanges::Failed(const std::string& folder, const std::string& reason) {
  return Say(folder, reason);
}

absl::string_view ModelDirChanges::Ended::result() const {
  return failed ? "failed" : changed ? "changed" : "unchanged";
}

ModelDirChanges::Ended ModelDirChanges::End() {
  previous_.clear();
  for (const auto& [folder, listing] : scan_.folders) previous_[folder] = listing.files;
  said_ = std::move(saying_);
  saying_.clear();
  scan_ = {};
  return ended_;
}

}  // namespace mtserve
