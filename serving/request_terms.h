// A request's terminology, from what it sent to what each sentence's decode is given: its own
// glossary entries and kept terms checked (text/terminology.h's limits), a stored glossary it names
// joined to them (serving/glossaries.h). (A sentence's terms are decoded with
// model/decoding/term_constraints.h's ConstrainedOptions; the engine refuses those that cannot fit
// its length bound, ValidateTermConstraints, and the sentence's error names it.)
#ifndef MTSERVE_SERVING_REQUEST_TERMS_H_
#define MTSERVE_SERVING_REQUEST_TERMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "serving/glossaries.h"
#include "serving/translation_request.h"

namespace mtserve {

// The terminology `request` translates with: its own (checked against `limits`), then the
// entries of the stored glossary its glossary_id names (through `glossaries`, null when the
// server has none, with the request's API key) whose source it does not list itself (sources
// compared by SourceKey: ignoring case with ignore_case). NOT_FOUND naming the field for an
// unknown id; INVALID_ARGUMENT when the glossary's languages are not those of every text's
// translation (`pairs`: each translated text's source and target languages, as its chain's first
// model reads and last model writes), or, with ignore_case, when two of its sources differ only
// in case (a glossary is stored with its case; such sources would be one term).
absl::StatusOr<Terminology> RequestTerminology(
    const TranslationRequest& request, const TerminologyLimits& limits,
    const Glossaries* glossaries, const std::vector<std::pair<std::string, std::string>>& pairs);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_REQUEST_TERMS_H_
