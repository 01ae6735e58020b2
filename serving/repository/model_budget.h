// The memory budget of the model repository (model_repository.h) as decisions only: whether a
// model fits the budget, and which loaded models to unload first so that one can be loaded. No
// threads, no lock and no clock: the repository calls it under its lock with the slots' state and
// the times it read, so the rules are tested with explicit sizes and times (and no model).
//
// The rules:
// - What counts against the budget: each loaded model's measured bytes, and each model being
//   loaded's estimated bytes (its memory is being allocated).
// - A model to load fits as is when what counts plus its estimate is within the budget (always,
//   with no budget).
// - Else loaded models without leases are unloaded, least recently used first (on a tie, the
//   lower slot first), as few as make it fit; a model with a lease is never unloaded.
// - When even unloading every loaded model without a lease would leave too little room, nothing
//   is unloaded: the load waits (a lease's end may make room).
#ifndef MTSERVE_SERVING_REPOSITORY_MODEL_BUDGET_H_
#define MTSERVE_SERVING_REPOSITORY_MODEL_BUDGET_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace mtserve {

class ModelBudget {
 public:
  // What the budget needs to know of one slot.
  struct SlotUse {
    enum class Kind { kNotLoaded, kLoading, kLoaded };
    Kind kind = Kind::kNotLoaded;
    // kLoaded: its measured bytes; kLoading: its estimate; else unused.
    int64_t bytes = 0;
    int leases = 0;  // kLoaded: requests holding it.
    absl::Time last_used =
        absl::InfinitePast();  // kLoaded: when a lease of it last began or ended.
  };

  struct Plan {
    enum class Outcome {
      kFits,         // Load it now; nothing to unload.
      kUnloadFirst,  // Unload `unload` (in that order), then load it.
      kNoRoom,       // The models with leases leave too little room: wait for a lease to end.
    };
    Outcome outcome = Outcome::kFits;
    std::vector<int> unload;  // Slots, least recently used first (kUnloadFirst only).
  };

  // `budget_bytes` 0: no limit.
  explicit ModelBudget(int64_t budget_bytes) : budget_bytes_(budget_bytes) {}

  int64_t budget_bytes() const { return budget_bytes_; }

  // Whether a model of `bytes` fits the budget when nothing else is loaded.
  bool FitsAlone(int64_t bytes) const { return budget_bytes_ == 0 || bytes <= budget_bytes_; }

  // What counts against the budget in `slots`: loaded models' bytes and loading ones' estimates.
  static int64_t Used(const std::vector<SlotUse>& slots);

  // What to do to load slot `slot` (index into `slots`, whose own entry is ignored) whose model
  // is estimated at `estimated_bytes`.
  Plan PlanLoad(const std::vector<SlotUse>& slots, int slot, int64_t estimated_bytes) const;

 private:
  const int64_t budget_bytes_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_REPOSITORY_MODEL_BUDGET_H_
