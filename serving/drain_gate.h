// Draining, written once: a gate that new work passes while the server serves and that refuses it
// once draining starts, counting the work in flight so that the server can wait, up to a
// deadline, for what it let in to finish. The core and every front end take one (the server
// gives them all the same gate, so that new work is refused everywhere at once); what each
// answers when refused stays its own (UNAVAILABLE, HTTP 503).
#ifndef MTSERVE_SERVING_DRAIN_GATE_H_
#define MTSERVE_SERVING_DRAIN_GATE_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mtserve {

// Thread-safe.
class DrainGate {
 public:
  DrainGate() = default;
  DrainGate(const DrainGate&) = delete;
  DrainGate& operator=(const DrainGate&) = delete;

  // Counts one piece of work in flight unless draining; false (nothing counted) while draining.
  bool TryEnter();
  // Counts one piece of work in flight even while draining: work that must be waited for although
  // it will only be refused (a call that answers UNAVAILABLE still runs until it ends).
  void Enter();
  // Ends one piece of work that TryEnter or Enter counted.
  void Leave();

  // From now on TryEnter refuses; the work in flight goes on. Once draining, always draining.
  void StartDraining();
  bool draining() const;

  // Waits until no work is in flight or `deadline` passes; true if none is left.
  bool WaitUntilIdle(absl::Time deadline);
  int in_flight() const;

 private:
  mutable absl::Mutex mutex_;
  bool draining_ ABSL_GUARDED_BY(mutex_) = false;
  int in_flight_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_DRAIN_GATE_H_
