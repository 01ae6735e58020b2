#include "serving/fair_share.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace mtserve {
namespace {

// The least of `counts` (0 when there are none).
template <typename Range, typename Count>
int64_t Least(const Range& range, const Count& count) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const auto& entry : range) {
    if (std::optional<int64_t> c = count(entry); c.has_value()) least = std::min(least, *c);
  }
  return least == std::numeric_limits<int64_t>::max() ? 0 : least;
}

}  // namespace

void FairShare::Add(uint64_t flow, const std::string& group) {
  if (Has(flow)) return;
  if (groups_.count(group) == 0) {
    const int64_t least = Least(
        groups_, [](const auto& entry) -> std::optional<int64_t> { return entry.second.served; });
    groups_[group] = {least, next_since_++, 0};
  }
  const int64_t least = Least(flows_, [&](const auto& entry) -> std::optional<int64_t> {
    if (entry.second.group != group) return std::nullopt;
    return entry.second.served;
  });
  flows_[flow] = {group, least, next_since_++};
  ++groups_[group].flows;
}

void FairShare::Remove(uint64_t flow) {
  auto it = flows_.find(flow);
  if (it == flows_.end()) return;
  auto group = groups_.find(it->second.group);
  if (--group->second.flows == 0) groups_.erase(group);
  flows_.erase(it);
}

std::optional<uint64_t> FairShare::Next(const std::function<bool(uint64_t)>& eligible) const {
  std::optional<uint64_t> best;
  std::tuple<int64_t, uint64_t, int64_t, uint64_t> best_rank;
  for (const auto& [id, flow] : flows_) {
    if (eligible && !eligible(id)) continue;
    const Group& group = groups_.at(flow.group);
    const auto rank = std::make_tuple(group.served, group.since, flow.served, flow.since);
    if (!best.has_value() || rank < best_rank) {
      best = id;
      best_rank = rank;
    }
  }
  return best;
}

void FairShare::Served(uint64_t flow) {
  auto it = flows_.find(flow);
  if (it == flows_.end()) return;
  ++it->second.served;
  ++groups_.at(it->second.group).served;
}

}  // namespace mtserve
