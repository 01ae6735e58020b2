// The models a server serves, loaded on demand within a memory budget. Each model has a slot,
// whose index and contents are fixed for the process (--model's order, then --model_dir's, then
// those added while serving: Add), with what is known without loading it (name, directory,
// compute type, config and languages, estimated bytes);
// its Model is loaded when a request first needs it (or at start: LoadNow) and may be unloaded
// when the budget needs room, least recently used first, never while a request holds a Lease
// of it.
//
// The rules:
// - One load at a time, on the repository's loader thread, never on a request's thread: the
//   requests that need a model being loaded wait for that load (each within its deadline), and
//   models already loaded keep serving meanwhile.
// - Before a load, the model's estimated bytes must fit: loaded models without leases are
//   unloaded, least recently used first, until they do. When the models with leases leave no
//   room, the load waits until a lease ends; a request still waiting at its deadline fails
//   UNAVAILABLE naming the budget (--model_memory). A slot whose estimate exceeds the budget
//   alone is refused when the repository is made (Create), naming the model, its size and the
//   flag.
// - Once loaded, a model counts its measured bytes (Options::measure), not the estimate.
// - A failed load fails the requests waiting for it with its reason; the next request for that
//   model tries again, no sooner than Options::retry_after_failure after the failure (until
//   then it gets the same error at once).
// - Unloading drops the repository's reference and tells `unloaded` (the scheduler's workers
//   then drop the translators they keep of it), so the memory goes once the last decode of it
//   ends.
//
// - An operator may load a model (Load, LoadNow) and unload one (Unload): at once when no lease
//   holds it, else once the last lease ends (requests that come meanwhile still take it). A
//   model so unloaded loads again when a request next needs it.
//
// - Slots are only appended. A slot retired (Retire, or replaced by Add: its folder changed or
//   went) is no longer served: its requests holding leases finish on its model, which is then
//   unloaded; a request for it that holds no lease gets UNAVAILABLE (it chose the model just
//   before it went; a retry finds the one serving now).
//
// Thread-safe. The choice of what to unload is ModelBudget's (model_budget.h: plain data, tested
// with explicit times); this class holds the loader thread, the lock and the waiting requests.
#ifndef MTSERVE_SERVING_REPOSITORY_MODEL_REPOSITORY_H_
#define MTSERVE_SERVING_REPOSITORY_MODEL_REPOSITORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "model/compute_type.h"
#include "model/model.h"
#include "model/model_config.h"

namespace mtserve {

class ModelRepository {
 public:
  // What is known of a model without loading it.
  struct Slot {
    std::string name;
    std::string dir;
    ComputeType compute_type = ComputeType::kFloat32;
    ModelConfig config;           // Its config files (LoadModelConfig), read at start.
    int64_t estimated_bytes = 0;  // What the loaded model will hold, in its compute type.
  };

  enum class State { kAvailable, kLoading, kLoaded, kFailed };

  struct SlotStatus {
    State state = State::kAvailable;
    std::string failure;          // kFailed: the last load's error.
    int64_t resident_bytes = 0;   // kLoaded: its measured bytes.
    int leases = 0;               // Requests holding it.
    bool unload_pending = false;  // kLoaded: Unload waits for its leases to end.
  };

  // Every slot made so far, by index, and the slots served now in their order (the default
  // first); a new one is published on each Add and Retire.
  struct Catalog {
    std::vector<Slot> slots;
    std::vector<int> served;
  };

  // Loads a slot's model (Model::Load in production; tests pass their own). Runs on the loader
  // thread (or LoadNow's caller).
  using Loader = std::function<absl::StatusOr<std::shared_ptr<const Model>>(const Slot& slot)>;

  struct Options {
    // Bytes of loaded models at most; 0: no limit (nothing is ever unloaded).
    int64_t memory_budget = 0;
    // After a failed load, requests get its error at once for this long before one tries again.
    absl::Duration retry_after_failure = absl::Seconds(10);
    // The bytes a loaded model holds (null: its slot's estimate).
    std::function<int64_t(const Model& model)> measure;
    // Told, on the loader thread (or Unload's caller), when a slot's model was unloaded, with
    // the bytes it counted (may be null).
    std::function<void(int slot, int64_t bytes)> unloaded;
    // The time, for deadlines, least-recent use and the retry delay.
    std::function<absl::Time()> clock = absl::Now;
  };

  // InvalidArgument naming the model, its estimated size and --model_memory when a slot cannot
  // fit the budget even alone; else a repository with nothing loaded and its loader thread
  // started.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Create(std::vector<Slot> slots,
                                                                 Options options, Loader loader);
  // Stops the loader thread; requests still waiting get UNAVAILABLE.
  ~ModelRepository();

  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // The slots and those served, now.
  std::shared_ptr<const Catalog> catalog() const;

  // Appends `slot` and serves it from now on (loaded when a request first needs it): in the
  // place of served slot `replaces`, which is retired (Retire), or after the others (-1). Its
  // index; InvalidArgument as Create's when it cannot fit the budget alone (then nothing
  // changes).
  absl::StatusOr<int> Add(Slot slot, int replaces = -1);
  // Stops serving `slot`: no longer in the catalog's served list; its waiting requests that hold
  // no lease get UNAVAILABLE, its model (if loaded) is unloaded once its last lease ends.
  void Retire(int slot);

  // Options::memory_budget (0: no limit).
  int64_t memory_budget() const;

  // A model held for a request: loaded, and not unloaded while the lease lives. Its destructor
  // ends the hold (and may let a waiting load proceed).
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    int slot() const { return slot_; }
    const std::shared_ptr<const Model>& model() const { return model_; }

   private:
    friend class ModelRepository;
    Lease(ModelRepository* repository, int slot, std::shared_ptr<const Model> model)
        : repository_(repository), slot_(slot), model_(std::move(model)) {}
    ModelRepository* const repository_;
    const int slot_;
    const std::shared_ptr<const Model> model_;
  };

  using Ready = std::function<void(absl::StatusOr<std::unique_ptr<Lease>> lease)>;

  // Calls `ready` exactly once with a lease of `slot`'s model: at once, on this thread, when it
  // is loaded; else once it is (on the loader thread). Or with an error: the load failed (its
  // error, naming the file and value as Model::Load does); no room in the budget by `deadline`
  // (UNAVAILABLE naming --model_memory); `deadline` passed while the model loaded
  // (DEADLINE_EXCEEDED); the repository stopping, or `slot` retired and not loaded (UNAVAILABLE).
  void Acquire(int slot, absl::Time deadline, Ready ready);

  // Loads `slot`'s model now, waiting for it (start-up: --model and --preload models): the load's
  // error, or UNAVAILABLE when the budget has no room.
  absl::Status LoadNow(int slot);
  // The same without waiting (an operator's load): `done` gets the outcome exactly once, at once
  // on this thread when the model is loaded (or cannot be), else on the loader thread; or
  // DEADLINE_EXCEEDED once `deadline` passes before the load ends (it goes on).
  void Load(int slot, absl::Time deadline, std::function<void(absl::Status)> done);

  // Unloads `slot`'s model (an operator's unload): at once when no lease holds it, else once its
  // last lease ends (status().unload_pending until then). OK with nothing to do when it is not
  // loaded; FAILED_PRECONDITION while it loads; INVALID_ARGUMENT for no such slot.
  absl::Status Unload(int slot);

  // `slot`'s model if it is loaded, else null (the engines' lookup: a decode runs only while a
  // lease of its model lives).
  std::shared_ptr<const Model> Loaded(int slot) const;

  SlotStatus status(int slot) const;
  // Bytes of the loaded models, measured.
  int64_t resident_bytes() const;

 private:
  struct State_;
  ModelRepository(std::vector<Slot> slots, Options options, Loader loader);
  void Release(int slot);

  std::unique_ptr<State_> state_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_REPOSITORY_MODEL_REPOSITORY_H_
