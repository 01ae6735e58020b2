// Where a worker's time goes: per-phase timers of the engine (the encoder, the decoder's
// self-attention, cross-attention, feed-forward and vocabulary projection, logits and top-k,
// search bookkeeping), with each phase's calls and the multiply-adds its matrix products did.
//
// Off by default and free when off: a ComputeContext made while profiling is off has no
// PhaseProfile, and a ScopedPhase then costs one branch. Profiling is switched on for the
// process by EnablePhaseProfiles (mttranslate --profile) or the environment variable
// MTSERVE_PROFILE=1; ComputeContexts made afterwards keep a table each, read with a steady clock
// at the edges of phases only (never per row), and add it to the process's totals
// (CollectedPhaseProfiles, which mttranslate prints) when they are destroyed.
//
// Time is exclusive: a phase entered inside another (logits processing inside a search step)
// stops the outer one's clock until it ends, so the phases add up to the time spent in any of
// them, and a search step's own time is what its decoder, logits and top-k leave.
#ifndef MTSERVE_MODEL_OPS_PHASE_PROFILE_H_
#define MTSERVE_MODEL_OPS_PHASE_PROFILE_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "model/ops/compute_context.h"

namespace mtserve {

enum class Phase : int {
  kEncoder,          // The whole encoder, its embeddings included.
  kCrossKeyValues,   // Each sentence's cross-attention keys and values, once, as it joins.
  kEmbeddings,       // The decoder's target embeddings.
  kSelfAttention,    // QKV projection, attention over the cache, output projection, norm.
  kCrossAttention,   // Query projection, attention over the source, output projection, norm.
  kFeedForward,      // Both layers and the norm.
  kVocabProjection,  // The output projection to logits.
  kShortlist,        // A lexical shortlist's projection rebuilt, and its masks applied.
  kLogits,           // Suppressed tokens, then the log-softmax where sampling needs it.
  kTopK,             // Beam candidates or the greedy token with their log-softmax (one pass),
                     // or the sampled token.
  kSearch,           // The rest of a search step: hypotheses, beams, terms.
};
inline constexpr int kNumPhases = static_cast<int>(Phase::kSearch) + 1;

// A short name for tables ("self_attention").
std::string_view PhaseName(Phase phase);

struct PhaseStats {
  int64_t nanoseconds = 0;
  int64_t calls = 0;  // Times the phase was entered.
  int64_t macs = 0;   // Multiply-adds of its matrix products, from their shapes.
};
using PhaseTable = std::array<PhaseStats, kNumPhases>;

// One ComputeContext's table (see the top comment).
class PhaseProfile {
 public:
  PhaseProfile() = default;
  // Adds the table to the process's totals.
  ~PhaseProfile();
  PhaseProfile(const PhaseProfile&) = delete;
  PhaseProfile& operator=(const PhaseProfile&) = delete;

  const PhaseTable& table() const { return table_; }

  // Adds `macs` to the running phase (nothing outside every phase).
  void AddMacs(int64_t macs) {
    if (current_ >= 0) table_[current_].macs += macs;
  }
  // For kernels that take no ComputeContext: the profile whose phase the calling thread is in
  // (null outside every phase, and always with profiling off). Not within a parallel region.
  static PhaseProfile* Active();

 private:
  friend class ScopedPhase;
  // Stops the clock of the phase running (if any), starts `phase`'s (counting a call if `call`);
  // returns the one stopped (-1: none).
  int Enter(int phase, bool call);
  // Stops the running phase's clock and starts `outer`'s (-1: none).
  void Leave(int outer);

  PhaseTable table_{};
  int current_ = -1;
  int64_t since_ = 0;  // When the running phase's clock last started.
};

// Switches profiling on (or off) for the ComputeContexts made from now on; those made before keep
// what they had.
void EnablePhaseProfiles(bool enabled = true);
// Whether ComputeContexts made now profile: as EnablePhaseProfiles last said, else whether
// MTSERVE_PROFILE=1 was set.
bool PhaseProfilesEnabled();
// The sum of the tables of every profiled ComputeContext destroyed so far.
PhaseTable CollectedPhaseProfiles();

// Counts the scope's time (to its end or the next Switch) and one call to `phase` in `ctx`'s
// profile; one branch when it has none.
class ScopedPhase {
 public:
  ScopedPhase(ComputeContext& ctx, Phase phase) : profile_(ctx.phase_profile()), first_(phase) {
    if (profile_ != nullptr) outer_ = profile_->Enter(static_cast<int>(phase), true);
  }
  ~ScopedPhase() {
    if (profile_ != nullptr) profile_->Leave(outer_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

  // Ends the running phase and counts the rest of the scope to `phase`, with one call unless it
  // is the phase the scope began with (resumed): one line between two steps of a function, where
  // a block around each would restructure it.
  void Switch(Phase phase) {
    if (profile_ != nullptr) profile_->Enter(static_cast<int>(phase), phase != first_);
  }

 private:
  PhaseProfile* const profile_;
  const Phase first_;
  int outer_ = -1;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_PHASE_PROFILE_H_
