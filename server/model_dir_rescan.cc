// The --model_dir re-reading (model_dir_rescan.h).
#include "server/model_dir_rescan.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

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
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    std::error_code e;
    if (!entry.is_regular_file(e)) continue;
    const auto size = entry.file_size(e);
    const auto time = entry.last_write_time(e).time_since_epoch().count();
    entries.push_back(absl::StrCat(entry.path().filename().string(), " ", size, " ", time, "\n"));
  }
  if (error) return "";
  std::sort(entries.begin(), entries.end());
  std::string files;
  for (const std::string& entry : entries) files += entry;
  return files;
}

ModelInfoLabels InfoOf(const ModelRepository::Slot& slot) {
  return {slot.name, slot.config.source_lang, slot.config.target_lang,
          ArchitectureSummary(slot.config), std::string(ComputeTypeName(slot.compute_type))};
}

}  // namespace

void ModelDirRescan::Start(const std::vector<ModelSpec>& specs, ModelRepository* repository,
                           BatchScheduler* scheduler, TranslationCore* core, Metrics* metrics) {
  absl::MutexLock lock(&mu_);
  repository_ = repository;
  scheduler_ = scheduler;
  core_ = core;
  metrics_ = metrics;
  const std::shared_ptr<const ModelRepository::Catalog> catalog = repository->catalog();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].model_dir.empty()) continue;
    served_[specs[i].dir] = {static_cast<int>(i), ListFiles(specs[i].dir),
                             InfoOf(catalog->slots[i])};
  }
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

void ModelDirRescan::Rescan(bool signalled) {
  absl::MutexLock lock(&mu_);
  if (!started_ || options_.dirs.empty()) return;
  bool failed = false;
  bool changed = false;
  auto say = [&](const std::string& folder, const std::string& message) {
    failed = true;
    if (logged_[folder] == message) return;  // Said once, not at every poll.
    logged_[folder] = message;
    std::fprintf(stderr, "mtserve: --model_dir: %s (what it served is kept)\n", message.c_str());
  };
  // What every directory holds now; a directory that cannot be read keeps its folders.
  std::map<std::string, std::string> now;
  std::map<std::string, std::string> dir_of;  // The --model_dir of each folder of `now`.
  std::set<std::string> unreadable_dirs;
  for (const std::string& dir : options_.dirs) {
    absl::StatusOr<std::vector<std::string>> folders = ModelFolders(dir);
    if (!folders.ok()) {
      say(dir, std::string(folders.status().message()));
      unreadable_dirs.insert(std::filesystem::path(dir).lexically_normal().string());
      continue;
    }
    logged_.erase(dir);
    for (const std::string& folder : *folders) {
      now[folder] = ListFiles(folder);
      dir_of[folder] = dir;
    }
  }
  std::shared_ptr<const ModelRepository::Catalog> catalog = repository_->catalog();
  // The names served, but by the folders that change now.
  std::set<std::string> names;
  for (const int i : catalog->served) names.insert(catalog->slots[i].name);

  // Folders gone.
  for (auto it = served_.begin(); it != served_.end();) {
    const std::string parent =
        std::filesystem::path(it->first).parent_path().lexically_normal().string();
    if (now.contains(it->first) || unreadable_dirs.contains(parent)) {
      ++it;
      continue;
    }
    std::fprintf(stderr, "mtserve: model %s removed (%s is gone)\n", it->second.info.model.c_str(),
                 it->first.c_str());
    repository_->Retire(it->second.slot);
    metrics_->RemoveModelInfo(it->second.info);
    names.erase(it->second.info.model);
    it = served_.erase(it);
    changed = true;
  }
  // Folders new or changed.
  for (const auto& [folder, files] : now) {
    const auto known = served_.find(folder);
    if (known != served_.end() && known->second.files == files) continue;
    const bool stable = seen_[folder] == files;
    seen_[folder] = files;
    if (!signalled && !stable) continue;  // Seen the same on the next scan first.
    absl::StatusOr<ModelSpec> spec = ScanModelFolder(dir_of[folder], folder);
    if (!spec.ok()) {
      say(folder, std::string(spec.status().message()));
      continue;
    }
    spec->compute_type = spec->compute_type.value_or(options_.default_compute_type);
    const std::string old_name = known != served_.end() ? known->second.info.model : "";
    if (spec->name != old_name && names.contains(spec->name)) {
      say(folder, absl::StrCat(folder, ": another model is named \"", spec->name, "\""));
      continue;
    }
    absl::Status added = [&]() -> absl::Status {
      MT_RETURN_IF_ERROR(CheckComputeTypeSupported(*spec->compute_type));
      MT_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(spec->dir));
      MT_ASSIGN_OR_RETURN(const int64_t bytes, EstimateModelBytes(spec->dir, *spec->compute_type));
      ModelRepository::Slot slot{spec->name, spec->dir, *spec->compute_type, std::move(config),
                                 bytes};
      const ModelInfoLabels info = InfoOf(slot);
      const ModelConfig shape = slot.config;
      MT_ASSIGN_OR_RETURN(
          const int added_slot,
          repository_->Add(std::move(slot), known != served_.end() ? known->second.slot : -1));
      // Before Refresh, so before any request can name it: slots are added one at a time, here.
      scheduler_->AddModel(shape);
      if (known != served_.end()) metrics_->RemoveModelInfo(known->second.info);
      metrics_->SetModelInfo(info);
      names.erase(old_name);
      names.insert(info.model);
      std::fprintf(stderr, "mtserve: model %s %s from %s (loaded when first needed)\n",
                   info.model.c_str(), known != served_.end() ? "replaced" : "added",
                   folder.c_str());
      served_[folder] = {added_slot, files, info};
      return absl::OkStatus();
    }();
    if (!added.ok()) {
      say(folder, absl::StrCat(folder, ": ", added.message()));
      continue;
    }
    logged_.erase(folder);
    changed = true;
  }
  for (auto it = seen_.begin(); it != seen_.end();) {
    it = now.contains(it->first) ? std::next(it) : seen_.erase(it);
  }
  if (changed) core_->Refresh();
  metrics_->RecordModelRescan(failed ? "failed" : changed ? "changed" : "unchanged");
}

}  // namespace mtserve
