// Whose turn it is: the scheduler serves requests' sentences in turn, so that a request of a
// thousand sentences advances alongside one of a single sentence instead of ahead of it, and when
// API keys are on, keys take turns first and each key's requests share its turns. Decisions only:
// no tasks, no threads, no clock (batching_policy.h holds the sentences and asks it whose next).
//
// The rule (start-time fair queueing with equal weights, counted in sentences): every active
// group and every active flow (a request's sentences waiting in one queue) counts the sentences
// served to it. The next sentence goes to the group served least, and within it to its flow
// served least; ties go to the one that became active first. A group or flow that becomes active
// starts at the least count among those already active, so it takes its turn after each of them
// has had one more, not before they have had as many as it missed. While groups stay active,
// the sentences they are served differ by at most one (less what a group could not take: see
// Next's `eligible`).
#ifndef MTSERVE_SERVING_FAIR_SHARE_H_
#define MTSERVE_SERVING_FAIR_SHARE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace mtserve {

class FairShare {
 public:
  // Flow `flow` of `group` has sentences waiting from now on (it must not be active).
  void Add(uint64_t flow, const std::string& group);
  // Flow `flow` has none left; its group leaves with its last flow.
  void Remove(uint64_t flow);
  // Whether `flow` is active.
  bool Has(uint64_t flow) const { return flows_.count(flow) > 0; }

  // The active flow to serve next among those for which `eligible` holds (all when null), or
  // nullopt when there is none.
  std::optional<uint64_t> Next(const std::function<bool(uint64_t)>& eligible = nullptr) const;
  // One sentence of active flow `flow` was served.
  void Served(uint64_t flow);

  bool empty() const { return flows_.empty(); }
  int flows() const { return static_cast<int>(flows_.size()); }

 private:
  struct Group {
    int64_t served = 0;
    uint64_t since = 0;  // Order of becoming active.
    int flows = 0;
  };
  struct Flow {
    std::string group;
    int64_t served = 0;
    uint64_t since = 0;
  };

  std::map<std::string, Group> groups_;
  std::map<uint64_t, Flow> flows_;
  uint64_t next_since_ = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_FAIR_SHARE_H_
