// Which loaded models make room for a load (model_budget.h).
#include "serving/repository/model_budget.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mtserve {
namespace {

// What `use` counts against the budget.
int64_t Counted(const ModelBudget::SlotUse& use) {
  return use.kind == ModelBudget::SlotUse::Kind::kNotLoaded ? 0 : use.bytes;
}

}  // namespace

int64_t ModelBudget::Used(const std::vector<SlotUse>& slots) {
  int64_t used = 0;
  for (const SlotUse& use : slots) used += Counted(use);
  return used;
}

ModelBudget::Plan ModelBudget::PlanLoad(const std::vector<SlotUse>& slots, int slot,
                                        int64_t estimated_bytes) const {
  Plan plan;
  if (budget_bytes_ == 0) return plan;
  int64_t used = 0;
  std::vector<int> idle;  // Loaded models without leases: what may be unloaded.
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    if (i == slot) continue;
    used += Counted(slots[i]);
    if (slots[i].kind == SlotUse::Kind::kLoaded && slots[i].leases == 0) idle.push_back(i);
  }
  if (used + estimated_bytes <= budget_bytes_) return plan;

  std::stable_sort(idle.begin(), idle.end(),
                   [&slots](int a, int b) { return slots[a].last_used < slots[b].last_used; });
  for (int i : idle) {
    plan.unload.push_back(i);
    used -= slots[i].bytes;
    if (used + estimated_bytes <= budget_bytes_) {
      plan.outcome = Plan::Outcome::kUnloadFirst;
      return plan;
    }
  }
  plan.unload.clear();
  plan.outcome = Plan::Outcome::kNoRoom;
  return plan;
}

}  // namespace mtserve
