// The trie of an input's constraint forms and a hypothesis's progress through it
// (term_tracker.h).
#include "model/decoding/term_tracker.h"

#include <algorithm>
#include <climits>

namespace mtserve {

TermTracker::TermTracker(const TermConstraints& constraints)
    : terms_(static_cast<int>(constraints.terms.size())),
      all_(terms_ == 64 ? ~uint64_t{0} : (uint64_t{1} << terms_) - 1) {
  nodes_.emplace_back();
  for (int t = 0; t < terms_; ++t) {
    const TermConstraint& term = constraints.terms[t];
    int shortest = INT_MAX;
    for (size_t f = 0; f < term.forms.size(); ++f) {
      shortest = std::min(shortest, static_cast<int>(term.forms[f].size()));
      Insert(term.forms[f], t, static_cast<int>(f), false);
    }
    shortest_.push_back(shortest == INT_MAX ? 0 : shortest);
    sources_.emplace_back(term.source_begin, term.source_end);
    if (term.source_begin >= 0) located_ |= uint64_t{1} << t;
    for (size_t f = 0; f < term.initial_forms.size(); ++f) {
      Insert(term.initial_forms[f], t, static_cast<int>(f), true);
    }
  }
  tokens_ = scratch_needed(0);
  // At a node where several forms end, a regular form counts before an initial one, then the
  // constraints in order.
  for (Node& node : nodes_) {
    std::stable_sort(node.ends.begin(), node.ends.end(),
                     [&](int a, int b) { return !ends_[a].initial && ends_[b].initial; });
  }
}

void TermTracker::Insert(const std::vector<int>& form, int term, int index, bool initial) {
  const int end = static_cast<int>(ends_.size());
  ends_.push_back({term, index, initial, static_cast<int>(form.size())});
  const uint64_t bit = uint64_t{1} << term;
  int node = 0;
  for (int token : form) {
    int child = Child(node, token);
    if (child < 0) {
      child = static_cast<int>(nodes_.size());
      nodes_.emplace_back();
      nodes_[child].depth = nodes_[node].depth + 1;
      std::vector<std::pair<int, int>>& children = nodes_[node].children;
      children.insert(std::lower_bound(children.begin(), children.end(), std::make_pair(token, 0)),
                      {token, child});
    }
    node = child;
    Node& n = nodes_[node];
    (initial ? n.reach_initial : n.reach) |= bit;
    n.below.push_back(end);
  }
  nodes_[node].ends.push_back(end);
}

int TermTracker::Child(int node, int token) const {
  const std::vector<std::pair<int, int>>& children = nodes_[node].children;
  const auto it =
      std::lower_bound(children.begin(), children.end(), std::make_pair(token, INT_MIN));
  return it != children.end() && it->first == token ? it->second : -1;
}

int TermTracker::scratch_needed(uint64_t met) const {
  int needed = 0;
  for (uint64_t unmet = all_ & ~met; unmet != 0; unmet &= unmet - 1) {
    needed += shortest_[std::countr_zero(unmet)];
  }
  return needed;
}

int TermTracker::Needed(const TermProgress& p) const {
  const int from_scratch = scratch_needed(p.met);
  if (p.node == 0) return from_scratch;
  const Node& node = nodes_[p.node];
  int credit = 0;
  for (int e : node.below) {
    const End& end = ends_[e];
    // Forms that end at the node itself were passed over (Resolve).
    if (end.length == node.depth || (p.met >> end.term & 1) != 0 || (end.initial && p.begin != 0)) {
      continue;
    }
    credit = std::max(credit, shortest_[end.term] - (end.length - node.depth));
  }
  return from_scratch - credit;
}

TermTracker::Advanced TermTracker::Resolve(uint64_t met, int node, int begin, int position) const {
  Advanced result;
  result.progress.met = met;
  bool deeper = false;
  for (const auto& [token, child] : nodes_[node].children)
    deeper = deeper || Useful(child, begin, met);
  if (deeper) {
    result.progress.node = node;
    result.progress.begin = begin;
  }
  // The first form that leaves fewest Needed, if going on leaves no fewer.
  const int going_on = Needed(result.progress);
  int best = -1;
  int best_needed = 0;
  for (int e : nodes_[node].ends) {
    const End& end = ends_[e];
    if ((met >> end.term & 1) != 0 || (end.initial && begin != 0)) continue;
    const int needed = scratch_needed(met | uint64_t{1} << end.term);
    if (best < 0 || needed < best_needed) {
      best = e;
      best_needed = needed;
    }
  }
  if (best >= 0 && best_needed <= going_on) {
    const End& end = ends_[best];
    result.progress = {met | uint64_t{1} << end.term, 0, 0};
    result.placed = PlacedTerm{end.term, end.form, end.initial, begin, position + 1};
  }
  return result;
}

TermTracker::Advanced TermTracker::Advance(const TermProgress& p, int token, int position) const {
  int continued = p.node != 0 ? Child(p.node, token) : -1;
  if (continued > 0 && !Useful(continued, p.begin, p.met)) continued = -1;
  int started = Child(0, token);
  if (started > 0 && !Useful(started, position, p.met)) started = -1;
  if (continued > 0) {
    Advanced result = Resolve(p.met, continued, p.begin, position);
    if (started > 0) {
      Advanced restarted = Resolve(p.met, started, position, position);
      if (Needed(restarted.progress) < Needed(result.progress)) return restarted;
    }
    return result;
  }
  if (started > 0) return Resolve(p.met, started, position, position);
  Advanced result;  // No match in progress.
  result.progress.met = p.met;
  return result;
}

std::optional<PlacedTerm> TermTracker::Extended(const PlacedTerm& placed,
                                                const std::vector<int>& ids, int token) const {
  if (placed.end != static_cast<int>(ids.size())) return std::nullopt;
  int node = 0;
  for (int i = placed.begin; i < placed.end && node >= 0; ++i) node = Child(node, ids[i]);
  if (node >= 0) node = Child(node, token);
  if (node < 0) return std::nullopt;
  for (int e : nodes_[node].ends) {  // Regular forms first.
    const End& end = ends_[e];
    if (end.term == placed.term && (!end.initial || placed.begin == 0)) {
      return PlacedTerm{end.term, end.form, end.initial, placed.begin, placed.end + 1};
    }
  }
  return std::nullopt;
}

bool TermTracker::Permitted(const TermProgress& p, int token, int position, int left,
                            int eos_id) const {
  if (token == eos_id) return AllMet(p);
  if (!Forced(p, left)) return true;
  return Needed(Advance(p, token, position).progress) <= left;
}

void TermTracker::Continuations(const TermProgress& p, std::vector<int>& tokens) const {
  if (p.node == 0) return;
  for (const auto& [token, child] : nodes_[p.node].children) {
    if (Useful(child, p.begin, p.met)) tokens.push_back(token);
  }
}

void TermTracker::Starts(const TermProgress& p, int position, std::vector<int>& tokens) const {
  for (const auto& [token, child] : nodes_[0].children) {
    if (Useful(child, position, p.met)) tokens.push_back(token);
  }
}

void TermTracker::Proposals(const TermProgress& p, int position, std::vector<int>& tokens) const {
  const size_t first = tokens.size();
  Continuations(p, tokens);
  Starts(p, position, tokens);
  std::sort(tokens.begin() + first, tokens.end());
  tokens.erase(std::unique(tokens.begin() + first, tokens.end()), tokens.end());
}

int TermTracker::AlignedTerm(const TermProgress& p, int aligned) const {
  if (aligned < 0) return -1;
  for (int t = 0; t < terms_; ++t) {
    if ((p.met >> t & 1) == 0 && sources_[t].first <= aligned && aligned < sources_[t].second) {
      return t;
    }
  }
  return -1;
}

void TermTracker::ContinuationsAmong(const TermProgress& p, uint64_t terms,
                                     std::vector<int>& tokens) const {
  if (p.node == 0) return;
  const uint64_t wanted = terms & ~p.met;
  for (const auto& [token, child] : nodes_[p.node].children) {
    const Node& n = nodes_[child];
    if (((n.reach | (p.begin == 0 ? n.reach_initial : 0)) & wanted) != 0) tokens.push_back(token);
  }
}

void TermTracker::StartsAmong(const TermProgress& p, uint64_t terms, int position,
                              std::vector<int>& tokens) const {
  const uint64_t wanted = terms & ~p.met;
  for (const auto& [token, child] : nodes_[0].children) {
    const Node& n = nodes_[child];
    if (((n.reach | (position == 0 ? n.reach_initial : 0)) & wanted) != 0) {
      tokens.push_back(token);
    }
  }
}

size_t TermTracker::memory_bytes() const {
  size_t bytes = sizeof(TermTracker) + shortest_.capacity() * sizeof(int) +
                 sources_.capacity() * sizeof(std::pair<int, int>) +
                 ends_.capacity() * sizeof(End) + nodes_.capacity() * sizeof(Node);
  for (const Node& node : nodes_) {
    bytes += node.children.capacity() * sizeof(std::pair<int, int>) +
             (node.ends.capacity() + node.below.capacity()) * sizeof(int);
  }
  return bytes;
}

}  // namespace mtserve
