#include "serving/drain_gate.h"

namespace mtserve {

bool DrainGate::TryEnter() {
  absl::MutexLock lock(&mutex_);
  if (draining_) return false;
  ++in_flight_;
  return true;
}

void DrainGate::Enter() {
  absl::MutexLock lock(&mutex_);
  ++in_flight_;
}

void DrainGate::Leave() {
  absl::MutexLock lock(&mutex_);
  --in_flight_;
}

void DrainGate::StartDraining() {
  absl::MutexLock lock(&mutex_);
  draining_ = true;
}

bool DrainGate::draining() const {
  absl::MutexLock lock(&mutex_);
  return draining_;
}

bool DrainGate::WaitUntilIdle(absl::Time deadline) {
  absl::MutexLock lock(&mutex_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return in_flight_ == 0; };
  return mutex_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

int DrainGate::in_flight() const {
  absl::MutexLock lock(&mutex_);
  return in_flight_;
}

}  // namespace mtserve
