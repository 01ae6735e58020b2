// The --model_dir re-reading (model_dir_rescan.h).
#include "server/model_dir_rescan.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "model/model_config.h"
#include "model/model_size.h"

namespace mtserve {
namespace {

// The names, sizes and modification times of `folder`'s files, in name order ("" if unreadable).
std::string ListFiles(const std::string& folder) {
  std::error_code error;
  std::vector<std::string> entries;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code e;
    if (!it->is_regular_file(e)) continue;
    const auto size = it->file_size(e);
    const auto time = it->last_write_time(e).time_since_epoch().count();
    entries.push_back(absl::StrCat(it->path().filename().string(), " ", size, " ", time, "\n"));
  }
  if (error) return "";
  std::sort(entries.begin(), entries.end());
  std::string files;
  for (const std::string& entry : entries) files += entry;
  return files;
}

// What the directories hold now: each checkpoint folder's files, or why a directory cannot be
// read.
ModelDirChanges::Scan ScanDirectories(const std::vector<std::string>& dirs, bool signalled) {
  ModelDirChanges::Scan scan;
  scan.signalled = signalled;
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::vector<std::string>> folders = ModelFolders(dir);
    if (!folders.ok()) {
      scan.unreadable[dir] = std::string(folders.status().message());
      continue;
    }
    for (const std::string& folder : *folders) scan.folders[folder] = {dir, ListFiles(folder)};
  }
  return scan;
}

ModelInfoLabels InfoOf(const ModelRepository::Slot& slot) {
  return {slot.name, slot.config.source_lang, slot.config.target_lang,
          ArchitectureSummary(slot.config), std::string(ComputeTypeName(slot.compute_type))};
}

// The model of `folder` (of --model_dir `dir`) as a repository slot, or why it cannot be served.
absl::StatusOr<ModelRepository::Slot> ReadFolder(const std::string& dir, const std::string& folder,
                                                 ComputeType default_compute_type) {
  MT_ASSIGN_OR_RETURN(const ModelSpec spec, ScanModelFolder(dir, folder));  // Names the file.
  absl::StatusOr<ModelRepository::Slot> slot = [&]() -> absl::StatusOr<ModelRepository::Slot> {
    const ComputeType type = spec.compute_type.value_or(default_compute_type);
    MT_RETURN_IF_ERROR(CheckComputeTypeSupported(type));
    MT_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(spec.dir));
    MT_ASSIGN_OR_RETURN(const int64_t bytes, EstimateModelBytes(spec.dir, type));
    return ModelRepository::Slot{spec.name, spec.dir, type, std::move(config), bytes};
  }();
  if (!slot.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(folder, ": ", slot.status().message()));
  }
  return slot;
}

}  // namespace

void ModelDirRescan::Start(const std::vector<ModelSpec>& specs, ModelRepository* repository,
                           BatchScheduler* scheduler, TranslationCore* core, Metrics* metrics) {
  absl::MutexLock lock(&mu_);
  repository_ = repository;
  scheduler_ = scheduler;
  core_ = core;
  metrics_ = metrics;
  std::map<std::string, ModelDirChanges::Served> served;
  std::set<std::string> fixed_names;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].model_dir.empty()) {
      fixed_names.insert(specs[i].name);
    } else {
      served[specs[i].dir] = {specs[i].model_dir, ListFiles(specs[i].dir), specs[i].name,
                              static_cast<int>(i)};
    }
  }
  changes_.emplace(std::move(served), std::move(fixed_names));
  started_ = true;
  if (!options_.dirs.empty() && options_.poll_interval > absl::ZeroDuration()) {
    poller_ = std::thread([this] { Poll(); });
  }
}

void ModelDirRescan::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    started_ = false;
  }
  if (poller_.joinable()) poller_.join();
}

void ModelDirRescan::Poll() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    auto stop = [this] {
      mu_.AssertHeld();
      return stopping_;
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), options_.poll_interval)) break;
    mu_.Unlock();
    Rescan(/*signalled=*/false);
    mu_.Lock();
  }
}

void ModelDirRescan::Say(const std::string& reason) {
  std::fprintf(stderr, "mtserve: --model_dir: %s (what it served is kept)\n", reason.c_str());
}

void ModelDirRescan::Rescan(bool signalled) {
  absl::MutexLock lock(&mu_);
  if (!started_ || options_.dirs.empty()) return;
  const ModelDirChanges::Scan scan = ScanDirectories(options_.dirs, signalled);
  const ModelDirChanges::Begun begun = changes_->Begin(scan);
  for (const std::string& reason : begun.log) Say(reason);
  for (const ModelDirChanges::Retire& gone : begun.retire) {
    std::fprintf(stderr, "mtserve: model %s removed (%s is gone)\n", gone.served.name.c_str(),
                 gone.folder.c_str());
    repository_->Retire(gone.served.slot);
    metrics_->RemoveModelInfo(InfoOf(repository_->catalog()->slots[gone.served.slot]));
  }
  for (const std::string& folder : begun.read) {
    absl::StatusOr<ModelRepository::Slot> slot =
        ReadFolder(scan.folders.at(folder).dir, folder, options_.default_compute_type);
    const ModelDirChanges::Decision decision = changes_->Consider(
        folder, slot.ok() ? absl::StatusOr<std::string>(slot->name) : slot.status());
    if (decision.action == ModelDirChanges::Decision::kRefuse) {
      if (decision.log) Say(decision.reason);
      continue;
    }
    const ModelInfoLabels info = InfoOf(*slot);
    const ModelConfig shape = slot->config;
    const absl::StatusOr<int> added = repository_->Add(std::move(*slot), decision.replaces);
    if (!added.ok()) {
      const std::string reason = absl::StrCat(folder, ": ", added.status().message());
      if (changes_->Failed(folder, reason)) Say(reason);
      continue;
    }
    // Before Refresh, so before any request can name it: slots are added one at a time, here.
    scheduler_->AddModel(shape);
    if (decision.action == ModelDirChanges::Decision::kReplace) {
      metrics_->RemoveModelInfo(InfoOf(repository_->catalog()->slots[decision.replaces]));
    }
    metrics_->SetModelInfo(info);
    changes_->Added(folder, info.model, *added);
    std::fprintf(stderr, "mtserve: model %s %s from %s (loaded when first needed)\n",
                 info.model.c_str(),
                 decision.action == ModelDirChanges::Decision::kReplace ? "replaced" : "added",
                 folder.c_str());
  }
  const ModelDirChanges::Ended ended = changes_->End();
  if (ended.changed) core_->Refresh();
  metrics_->RecordModelRescan(std::string(ended.result()));
}

}  // namespace mtserve
