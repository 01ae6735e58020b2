// The length and validity checks of an input's term constraints (term_constraints.h).
#include "model/decoding/term_constraints.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace mtserve {

TermSizes SizesOf(const TermConstraints& constraints) {
  TermSizes sizes;
  sizes.terms = static_cast<int64_t>(constraints.terms.size());
  for (const TermConstraint& term : constraints.terms) {
    for (const auto* forms : {&term.forms, &term.initial_forms}) {
      sizes.forms += static_cast<int64_t>(forms->size());
      for (const std::vector<int>& form : *forms) sizes.tokens += static_cast<int64_t>(form.size());
    }
  }
  return sizes;
}

size_t MemoryBytes(const TermConstraints& constraints) {
  size_t bytes = sizeof(TermConstraints) + constraints.terms.capacity() * sizeof(TermConstraint);
  for (const TermConstraint& term : constraints.terms) {
    for (const auto* forms : {&term.forms, &term.initial_forms}) {
      bytes += forms->capacity() * sizeof(std::vector<int>);
      for (const std::vector<int>& form : *forms) bytes += form.capacity() * sizeof(int);
    }
  }
  return bytes;
}

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
                                     const DecodingOptions& options, int source_tokens) {
  const int count = static_cast<int>(constraints.terms.size());
  if (count > kMaxTermConstraints) {
    return absl::InvalidArgumentError(absl::StrCat(count, " term constraints; the limit is ",
                                                   kMaxTermConstraints, " per sentence"));
  }
  // "term constraint T's [initial ]form F WHY".
  auto check_form = [&](const std::vector<int>& form, int term, absl::string_view which,
                        int index) -> absl::Status {
    auto invalid = [&](auto&&... why) {
      return absl::InvalidArgumentError(
          absl::StrCat("term constraint ", term, "'s ", which, "form ", index, " ", why...));
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
      return absl::InvalidArgumentError(absl::StrCat("term constraint ", t, " has no forms"));
    }
    const bool unknown = term.source_begin == -1 && term.source_end == -1;
    if (!unknown && !(term.source_begin >= 0 && term.source_begin < term.source_end)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "term constraint ", t, "'s source span [", term.source_begin, ", ", term.source_end,
          ") is neither unknown (-1, -1) nor a non-empty range of positions"));
    }
    for (size_t f = 0; f < term.forms.size(); ++f) {
      if (absl::Status status = check_form(term.forms[f], t, "", f); !status.ok()) return status;
    }
    for (size_t f = 0; f < term.initial_forms.size(); ++f) {
      absl::Status status = check_form(term.initial_forms[f], t, "initial ", f);
      if (!status.ok()) return status;
    }
  }
  // Room for the terms and </s>.
  const int bound = InputMaxLength(options, EffectiveMaxLength(options, config), source_tokens) - 1;
  const int needed = MinimumConstrainedTokens(constraints);
  if (needed <= bound) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "its terms need ", needed, " tokens of translation; a translation of it may have ", bound,
      " (max_length ", EffectiveMaxLength(options, config), ", or max_length_factor ",
      options.max_length_factor, " times its ", source_tokens,
      " source tokens plus max_length_offset ", options.max_length_offset, ", less its </s>)"));
}

}  // namespace mtserve
