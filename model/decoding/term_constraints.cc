// The length and validity checks of an input's term constraints (term_constraints.h).
#include "model/decoding/term_constraints.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace mtserve {

int MinimumConstrainedTokens(const TermConstraints& constraints) {
  int total = 0;
  for (const TermConstraint& term : constraints.terms) {
    int shortest = INT_MAX;
    for (const std::vector<int>& form : term.forms) {
      shortest = std::min(shortest, static_cast<int>(form.size()));
    }
    if (shortest != INT_MAX) total += shortest;
  }
  return total;
}

absl::Status ValidateTermConstraints(const TermConstraints& constraints, const ModelConfig& config,
                                     int length_bound, int input) {
  const int count = static_cast<int>(constraints.terms.size());
  if (count > kMaxTermConstraints) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", input, " has ", count, " term constraints; the limit is ", kMaxTermConstraints));
  }
  // "input I: term constraint T's [initial ]form F WHY".
  auto check_form = [&](const std::vector<int>& form, int term, absl::string_view which,
                        int index) -> absl::Status {
    auto invalid = [&](auto&&... why) {
      return absl::InvalidArgumentError(absl::StrCat("input ", input, ": term constraint ", term,
                                                     "'s ", which, "form ", index, " ", why...));
    };
    if (form.empty()) return invalid("is empty");
    for (int id : form) {
      if (id < 0 || id >= config.vocab_size) {
        return invalid("holds token id ", id, " outside the vocabulary [0, ", config.vocab_size,
                       ")");
      }
      if (id == config.eos_token_id) return invalid("holds </s> (id ", id, ")");
      if (std::binary_search(config.never_generated_ids.begin(), config.never_generated_ids.end(),
                             id)) {
        return invalid("holds token id ", id,
                       ", which the model never generates (pad or bad_words_ids)");
      }
    }
    return absl::OkStatus();
  };
  for (int t = 0; t < count; ++t) {
    const TermConstraint& term = constraints.terms[t];
    if (term.forms.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", input, ": term constraint ", t, " has no forms"));
    }
    const bool unknown = term.source_begin == -1 && term.source_end == -1;
    if (!unknown && !(term.source_begin >= 0 && term.source_begin < term.source_end)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", input, ": term constraint ", t, "'s source span [", term.source_begin, ", ",
          term.source_end, ") is neither unknown (-1, -1) nor a non-empty range of positions"));
    }
    for (size_t f = 0; f < term.forms.size(); ++f) {
      if (absl::Status status = check_form(term.forms[f], t, "", f); !status.ok()) return status;
    }
    for (size_t f = 0; f < term.initial_forms.size(); ++f) {
      absl::Status status = check_form(term.initial_forms[f], t, "initial ", f);
      if (!status.ok()) return status;
    }
  }
  const int needed = MinimumConstrainedTokens(constraints);
  if (needed > length_bound - 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", input, " may generate at most ", length_bound - 1,
                     " tokens before its </s> (its length bound is ", length_bound,
                     " tokens, from max_length, max_length_factor and max_length_offset), but its "
                     "term constraints need ",
                     needed, " tokens"));
  }
  return absl::OkStatus();
}

}  // namespace mtserve
