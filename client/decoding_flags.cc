#include "client/decoding_flags.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, model, "",
          "[translate, translate-file, bench] Model name as `mtclient models` lists it; empty: the "
          "server's "
          "default model.");
ABSL_FLAG(int, beam_size, 1, "[translate, bench] Beam size; 1 is greedy search (or sampling).");
ABSL_FLAG(int, num_hypotheses, 1,
          "[translate, bench] Translations per input, best first (at most --beam_size); "
          "translate writes them on consecutive lines.");
ABSL_FLAG(double, length_penalty, 1.0,
          "[translate, bench] Beam scores are log-prob / length^length_penalty.");
ABSL_FLAG(int, sampling_topk, 1,
          "[translate, bench] Sample among the k most likely tokens (beam_size 1 only).");
ABSL_FLAG(double, sampling_temperature, 1.0, "[translate, bench] Sampling temperature, > 0.");
ABSL_FLAG(int64_t, seed, -1,
          "[translate, bench] Sampling seed: the same seed gives the same output. -1: random.");
ABSL_FLAG(int, max_length, 0,
          "[translate, bench] Maximum generated tokens, </s> included; 0: the model's default "
          "(capped by the server).");
ABSL_FLAG(int, min_length, 0,
          "[translate, bench] Minimum generated tokens before </s> may end a translation.");
ABSL_FLAG(bool, split_sentences, true,
          "[translate, bench] Let the server split each text into sentences (false: each text is "
          "one sentence, for input segmented already).");
ABSL_FLAG(bool, with_scores, false,
          "[translate, bench] Ask for scores; translate prefixes each translation with its score "
          "and a tab, as mttranslate does.");

namespace mtserve {
namespace {

// Counts must fit the message's uint32 fields.
absl::StatusOr<uint32_t> NonNegative(const char* name, int value) {
  if (value < 0) return absl::InvalidArgumentError(absl::StrCat("--", name, " must be >= 0"));
  return static_cast<uint32_t>(value);
}

}  // namespace

absl::StatusOr<v1::DecodingOptions> DecodingOptionsFromFlags() {
  v1::DecodingOptions options;
  struct Count {
    const char* name;
    int value;
    void (v1::DecodingOptions::*set)(uint32_t);
  };
  const Count counts[] = {
      {"beam_size", absl::GetFlag(FLAGS_beam_size), &v1::DecodingOptions::set_beam_size},
      {"num_hypotheses", absl::GetFlag(FLAGS_num_hypotheses),
       &v1::DecodingOptions::set_num_hypotheses},
      {"sampling_topk", absl::GetFlag(FLAGS_sampling_topk),
       &v1::DecodingOptions::set_sampling_topk},
      {"max_length", absl::GetFlag(FLAGS_max_length), &v1::DecodingOptions::set_max_length},
      {"min_length", absl::GetFlag(FLAGS_min_length), &v1::DecodingOptions::set_min_length},
  };
  for (const Count& count : counts) {
    absl::StatusOr<uint32_t> value = NonNegative(count.name, count.value);
    if (!value.ok()) return value.status();
    (options.*count.set)(*value);
  }
  const double length_penalty = absl::GetFlag(FLAGS_length_penalty);
  const double temperature = absl::GetFlag(FLAGS_sampling_temperature);
  if (!std::isfinite(length_penalty) || !std::isfinite(temperature)) {
    return absl::InvalidArgumentError("--length_penalty and --sampling_temperature must be finite");
  }
  options.set_length_penalty(static_cast<float>(length_penalty));
  options.set_sampling_temperature(static_cast<float>(temperature));
  if (const int64_t seed = absl::GetFlag(FLAGS_seed); seed >= 0) {
    options.set_seed(static_cast<uint64_t>(seed));
  }
  options.set_return_scores(absl::GetFlag(FLAGS_with_scores));
  options.set_split_sentences(absl::GetFlag(FLAGS_split_sentences));
  return options;
}

}  // namespace mtserve
