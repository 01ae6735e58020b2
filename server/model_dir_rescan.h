// Re-reads the --model_dir directories while serving, on SIGHUP and every --model_dir_poll: a new
// checkpoint folder becomes a new model (loaded when first needed); a folder removed retires its
// model; a folder changed (its files' names, sizes or modification times) retires its model and
// serves the new files under the name (ModelRepository::Add, Retire: requests holding the old
// model finish on it). A folder seen by polling is adopted only once two scans in a row see it
// the same (a checkpoint still being copied is not picked up); a SIGHUP adopts what it sees. A
// folder that no longer scans (a bad mtserve.json, a multi-target checkpoint, a name another
// model has) keeps what it served, and so do the folders of a directory that cannot be read; the
// reason is logged once while it lasts. --model models are not re-read.
// What to do is decided by ModelDirChanges (model_dir_changes.h); this class reads the files and
// carries it out on the repository, the scheduler, the core and the metrics.
#ifndef MTSERVE_SERVER_MODEL_DIR_RESCAN_H_
#define MTSERVE_SERVER_MODEL_DIR_RESCAN_H_

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/compute_type.h"
#include "server/model_dir_changes.h"
#include "server/model_specs.h"
#include "serving/batch_scheduler.h"
#include "serving/metrics.h"
#include "serving/repository/model_repository.h"
#include "serving/translation_core.h"

namespace mtserve {

class ModelDirRescan {
 public:
  struct Options {
    std::vector<std::string> dirs;  // --model_dir.
    ComputeType default_compute_type = ComputeType::kFloat32;
    absl::Duration poll_interval = absl::ZeroDuration();  // Zero: no polling.
  };
  explicit ModelDirRescan(Options options) : options_(std::move(options)) {}
  ~ModelDirRescan() { Stop(); }

  // Starts re-reading for the served models `specs` (the repository's first slots, in order):
  // polling on a thread of its own, and Rescan.
  void Start(const std::vector<ModelSpec>& specs, ModelRepository* repository,
             BatchScheduler* scheduler, TranslationCore* core, Metrics* metrics);
  // Stops polling; later Rescans do nothing.
  void Stop();

  // Scans the directories now and applies what changed (`signalled`: a SIGHUP, which adopts a
  // folder at once; else only once two scans saw it the same).
  void Rescan(bool signalled);

 private:
  void Poll();
  // Prints why a scan failed (what it served is kept).
  static void Say(const std::string& reason);

  const Options options_;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  ModelRepository* repository_ ABSL_GUARDED_BY(mu_) = nullptr;
  BatchScheduler* scheduler_ ABSL_GUARDED_BY(mu_) = nullptr;
  TranslationCore* core_ ABSL_GUARDED_BY(mu_) = nullptr;
  Metrics* metrics_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::optional<ModelDirChanges> changes_ ABSL_GUARDED_BY(mu_);  // Made by Start.
  std::thread poller_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVER_MODEL_DIR_RESCAN_H_
