// The state machine of lexically constrained decoding: which of an input's term constraints
// (term_constraints.h) a hypothesis has met, token by token, and which tokens keep the unmet
// ones satisfiable within the input's length bound. A small trie holds all the forms of the
// input's constraints; a hypothesis's progress is a bitmask of the constraints met and the trie
// node of the form it is in the middle of. A token that leaves the trie drops that match (and
// may start a new one); reaching a form's end meets one unmet constraint it satisfies, and the
// next token starts afresh, so the forms placed never overlap. Initial forms only count as a
// hypothesis's first tokens. The searches (beam_search.cc, greedy_search.cc) use it for the
// sentences that have constraints, and never for the others.
#ifndef MTSERVE_MODEL_DECODING_TERM_TRACKER_H_
#define MTSERVE_MODEL_DECODING_TERM_TRACKER_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "model/decoding/term_constraints.h"

namespace mtserve {

// One hypothesis's progress through its input's constraints.
struct TermProgress {
  uint64_t met = 0;  // Bit t: constraint t is met.
  int node = 0;      // The trie node of the match in progress; 0 (the root): none.
  int begin = 0;     // Where the match in progress began (a position in the generated ids).
};

class TermTracker {
 public:
  // `constraints`: validated (ValidateTermConstraints), with at least one constraint.
  explicit TermTracker(const TermConstraints& constraints);

  int terms() const { return terms_; }
  // MinimumConstrainedTokens: Needed at the start.
  int tokens() const { return tokens_; }
  // How far `p` has come: the tokens of the shortest completion it no longer needs, 0 to
  // tokens(). Beam search banks hypotheses by it (as Sockeye does), so that a hypothesis in the
  // middle of a form of several tokens does not compete with those that have none.
  int TokensMet(const TermProgress& p) const { return tokens_ - Needed(p); }
  bool AllMet(const TermProgress& p) const { return p.met == all_; }
  static int MetCount(const TermProgress& p) { return std::popcount(p.met); }

  // The result of one token: the new progress and, when it completed a form, where.
  struct Advanced {
    TermProgress progress;
    std::optional<PlacedTerm> placed;
  };
  // `p` after generating `token` at `position` (its index in the generated ids). Where the
  // token both continues the match in progress and starts another, the match that leaves fewer
  // tokens Needed wins (the one in progress on a tie); where a form of an unmet constraint ends,
  // it meets the constraint that leaves fewest Needed, unless going on towards a longer form
  // leaves fewer still. So a token that can bring Needed down by one always does.
  Advanced Advance(const TermProgress& p, int token, int position) const;

  // The fewest tokens that can still meet every unmet constraint: the sum of their shortest
  // forms, less what the match in progress has already generated of a longer form that it
  // still leads to, when that is no longer than its constraint's shortest (credit for the form
  // that gains most).
  int Needed(const TermProgress& p) const;
  // The same without credit for the match in progress: no token can leave more than this.
  int NeededFromScratch(const TermProgress& p) const { return scratch_needed(p.met); }

  // Whether the next token is restricted when `left` tokens may follow it: only then can some
  // token leave the constraints unsatisfiable, and only tokens of Proposals can be Permitted.
  bool Forced(const TermProgress& p, int left) const { return NeededFromScratch(p) > left; }
  // Whether `token` at `position` keeps every constraint satisfiable with `left` tokens after
  // it; `eos_id` only when all are met.
  bool Permitted(const TermProgress& p, int token, int position, int left, int eos_id) const;

  // Appends the tokens that continue the match in progress towards an unmet constraint.
  void Continuations(const TermProgress& p, std::vector<int>& tokens) const;
  // Appends the tokens that start a form of an unmet constraint at `position`.
  void Starts(const TermProgress& p, int position, std::vector<int>& tokens) const;
  // Both, ascending, each once.
  void Proposals(const TermProgress& p, int position, std::vector<int>& tokens) const;

  // The constraints whose source span is known (bit t: constraint t).
  uint64_t located() const { return located_; }
  // Appends the tokens that continue the match in progress towards an unmet constraint among
  // `terms` (bit t: constraint t), ascending.
  void ContinuationsAmong(const TermProgress& p, uint64_t terms, std::vector<int>& tokens) const;
  // Appends the tokens that start a form at `position` of an unmet constraint among `terms`
  // (bit t: constraint t), ascending.
  void StartsAmong(const TermProgress& p, uint64_t terms, int position,
                   std::vector<int>& tokens) const;

  // `placed` (the last term `ids` placed, ending at ids' end) grown by `token` when its form's
  // ids and `token` are a whole other form of the same constraint (`Rad`, then `es` for
  // `Rades`): a form that begins another is met as soon as it is written, and a piece that glues
  // onto it is otherwise refused (SearchParams::word_continuations).
  std::optional<PlacedTerm> Extended(const PlacedTerm& placed, const std::vector<int>& ids,
                                     int token) const;

  // The unmet constraint whose source span (TermConstraint::source_begin, source_end) holds
  // source position `aligned` (where the decoder's cross-attention weighs most for the token
  // being generated); -1 if none.
  int AlignedTerm(const TermProgress& p, int aligned) const;

  // The bytes it holds, as allocated (itself included).
  size_t memory_bytes() const;
  // The most a tracker of constraints of `sizes` holds: a trie node per token at most, and every
  // vector at most twice what it holds (as push_back and insert grow them). Inline: DecodeMemory,
  // which uses it, is in the library without the searches.
  static int64_t MemoryBound(const TermSizes& sizes);

 private:
  struct End {
    int term;
    int form;
    bool initial;
    int length;
  };
  struct Node {
    int depth = 0;
    std::vector<std::pair<int, int>> children;  // (token, node), ascending by token.
    std::vector<int> ends;                      // Of forms that end here: regular ones first.
    std::vector<int> below;                     // Of forms that end here or deeper.
    uint64_t reach = 0;                         // Constraints with a form ending here or deeper.
    uint64_t reach_initial = 0;                 // The same for initial forms.
  };

  void Insert(const std::vector<int>& form, int term, int index, bool initial);
  // The progress on reaching `node` in a match begun at `begin` (see Advance).
  Advanced Resolve(uint64_t met, int node, int begin, int position) const;
  int Child(int node, int token) const;
  // Whether `node`, in a match begun at `begin`, can still meet a constraint not in `met`.
  bool Useful(int node, int begin, uint64_t met) const {
    const Node& n = nodes_[node];
    return ((n.reach | (begin == 0 ? n.reach_initial : 0)) & ~met) != 0;
  }
  int scratch_needed(uint64_t met) const;

  int terms_ = 0;
  uint64_t all_ = 0;
  int tokens_ = 0;
  std::vector<int> shortest_;  // Per constraint: its shortest (regular) form's length.
  // Per constraint: its source span; (-1, -1) unknown.
  std::vector<std::pair<int, int>> sources_;
  uint64_t located_ = 0;
  std::vector<End> ends_;
  std::vector<Node> nodes_;  // nodes_[0]: the root.
};

inline int64_t TermTracker::MemoryBound(const TermSizes& sizes) {
  // Nodes: the root and one per token at most; children: one per node but the root; ends: one per
  // form; below: one per token of a form.
  const int64_t nodes = 1 + sizes.tokens;
  return static_cast<int64_t>(sizeof(TermTracker)) +
         2 * (sizes.terms * static_cast<int64_t>(sizeof(int) + sizeof(std::pair<int, int>)) +
              sizes.forms * static_cast<int64_t>(sizeof(End)) +
              nodes * static_cast<int64_t>(sizeof(Node)) +
              sizes.tokens * static_cast<int64_t>(sizeof(std::pair<int, int>)) +
              (sizes.forms + sizes.tokens) * static_cast<int64_t>(sizeof(int)));
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_TERM_TRACKER_H_
