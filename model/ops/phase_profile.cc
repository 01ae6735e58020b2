#include "model/ops/phase_profile.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/synchronization/mutex.h"

namespace mtserve {
namespace {

std::atomic<int> enabled{-1};  // As EnablePhaseProfiles last said; -1: not called.

struct Totals {
  absl::Mutex mutex;
  PhaseTable table ABSL_GUARDED_BY(mutex){};
};

Totals& ProcessTotals() {
  static Totals* const totals = new Totals;  // Never destroyed: contexts may outlive main.
  return *totals;
}

// The profile whose phase the calling thread is in, for PhaseProfile::Active.
thread_local PhaseProfile* active_profile = nullptr;

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kEncoder:
      return "encoder";
    case Phase::kCrossKeyValues:
      return "cross_key_values";
    case Phase::kEmbeddings:
      return "embeddings";
    case Phase::kSelfAttention:
      return "self_attention";
    case Phase::kCrossAttention:
      return "cross_attention";
    case Phase::kFeedForward:
      return "feed_forward";
    case Phase::kVocabProjection:
      return "vocab_projection";
    case Phase::kShortlist:
      return "shortlist";
    case Phase::kLogits:
      return "logits_softmax";
    case Phase::kTopK:
      return "top_k";
    case Phase::kSearch:
      return "search";
  }
  return "unknown";
}

PhaseProfile::~PhaseProfile() {
  Totals& totals = ProcessTotals();
  absl::MutexLock lock(&totals.mutex);
  for (int p = 0; p < kNumPhases; ++p) {
    totals.table[p].nanoseconds += table_[p].nanoseconds;
    totals.table[p].calls += table_[p].calls;
    totals.table[p].macs += table_[p].macs;
  }
}

PhaseProfile* PhaseProfile::Active() { return active_profile; }

int PhaseProfile::Enter(int phase, bool call) {
  const int64_t now = Now();
  const int outer = current_;
  if (outer >= 0) table_[outer].nanoseconds += now - since_;
  since_ = now;
  current_ = phase;
  if (call) ++table_[phase].calls;
  active_profile = this;
  return outer;
}

void PhaseProfile::Leave(int outer) {
  const int64_t now = Now();
  table_[current_].nanoseconds += now - since_;
  since_ = now;
  current_ = outer;
  if (outer < 0) active_profile = nullptr;
}

void EnablePhaseProfiles(bool on) { enabled = on ? 1 : 0; }

bool PhaseProfilesEnabled() {
  const int set = enabled;
  if (set >= 0) return set == 1;
  const char* value = std::getenv("MTSERVE_PROFILE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

PhaseTable CollectedPhaseProfiles() {
  Totals& totals = ProcessTotals();
  absl::MutexLock lock(&totals.mutex);
  return totals.table;
}

}  // namespace mtserve
