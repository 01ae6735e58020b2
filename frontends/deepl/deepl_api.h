// DeepL's HTTP API (https://developers.deepl.com/docs, version 2) on the TranslationCore, so that
// DeepL's client libraries and the tools built on them work with mtserve by changing their server
// URL:
//
//   POST /v2/translate             {text, source_lang, target_lang, tag_handling, ...} as JSON or
//                                  a form -> {"translations": [{detected_source_language, text}]}
//   GET  /v2/languages?type=source|target
//                                  [{language, name(, supports_formality)}], the served languages
//   GET  /v2/usage                 {character_count, character_limit}: the key's characters today
//   POST /v2/glossaries            {name, source_lang, target_lang, entries, entries_format}
//   GET  /v2/glossaries, GET|DELETE /v2/glossaries/{id}, GET /v2/glossaries/{id}/entries (TSV)
//   GET  /v2/glossary-language-pairs
//   POST /v2/document              a file (multipart/form-data) -> {document_id, document_key}
//   POST /v2/document/{id}         {document_key} -> {document_id, status, ...}
//   POST /v2/document/{id}/result  {document_key} -> the translated file
//
// This is only the mapping between DeepL's shapes and the core's (and the glossaries' and file
// jobs'); the core checks every limit and option, as for the native API. The HTTP front end reads
// the body, runs the calls and writes the answers made here. DeepL's codes are mapped onto the
// models' (deepl_request.h's ModelLanguageOfDeepL) and back, upper-cased.
#ifndef MTSERVE_FRONTENDS_DEEPL_DEEPL_API_H_
#define MTSERVE_FRONTENDS_DEEPL_DEEPL_API_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontends/deepl/deepl_request.h"
#include "serving/auth/api_key_quota.h"
#include "serving/glossaries.h"
#include "serving/state/glossary_store.h"
#include "serving/state/job_store.h"
#include "serving/translation_core.h"
#include "text/terminology.h"

namespace mtserve {

// The key's check before a body's other fields are read (TranslationCore::CheckApiKey, charging
// nothing), worded for DeepL's clients when no key was given.
absl::Status DeepLCheckKey(const TranslationCore& core, const std::optional<std::string>& key);

// The JSON answer to `request`: each text's translation, with the source language given or
// detected (the model's source when one model serves the target), upper-cased, and its
// billed_characters when asked for. DeepL's API has no error per text: a text that was not
// translated (routed by detection to no model) is the request's error.
absl::StatusOr<std::string> DeepLTranslateAnswer(const DeepLTranslateRequest& request,
                                                 const TranslationCore& core,
                                                 const TranslationCore::Reply& reply);

// GET /v2/languages: `type` "source" (or "") lists every language a served model (or chain)
// translates from, "target" every language one translates into, as DeepL's codes (a target
// English is EN-GB and EN-US, Portuguese PT-BR and PT-PT) with their names and, for targets,
// supports_formality (false: mtserve has no formality). INVALID_ARGUMENT for another type;
// UNAVAILABLE while the models load.
absl::StatusOr<std::string> DeepLLanguages(const TranslationCore& core, absl::string_view type);

// GET /v2/usage: {"character_count": the key's characters today, "character_limit": its
// characters_per_day, or kDeepLNoCharacterLimit without one}.
inline constexpr int64_t kDeepLNoCharacterLimit = 1000000000000;  // As DeepL's own unlimited plans.
std::string DeepLUsageAnswer(const CharacterUsage& usage);

// GET /v2/glossary-language-pairs: every pair of languages served, as glossaries take them.
absl::StatusOr<std::string> DeepLGlossaryPairs(const TranslationCore& core);

// The glossary a /v2/glossaries request makes: its entries parsed (text/glossary_file.h) within
// `limits` (the glossaries' own: entries, forms and bytes), a source listed twice refused as DeepL
// refuses it. INVALID_ARGUMENT naming entries and the line.
absl::StatusOr<Glossary> DeepLGlossaryOf(const DeepLGlossaryRequest& request,
                                         const GlossaryLimits& limits);

// A glossary as DeepL answers it: {glossary_id, name, ready, source_lang, target_lang,
// creation_time, entry_count}; and the list {"glossaries": [...]}.
std::string DeepLGlossaryJson(const GlossaryInfo& info);
std::string DeepLGlossaryListJson(const std::vector<GlossaryInfo>& glossaries);

// A file job's id as DeepL's pair: document_id (its first half) and document_key (the rest). The
// id is a capability (serving/state/job_id.h), so neither half alone finds the job.
std::string DeepLDocumentAnswer(absl::string_view job_id);
std::string DeepLJobId(absl::string_view document_id, absl::string_view document_key);

// {document_id, status (queued, translating, done or error), error_message} of a job.
std::string DeepLDocumentStatus(absl::string_view document_id, const JobRecord& record);

// DeepL's error answer: {"message": ...}, and its HTTP status: 400 for a bad request, 403 for a
// missing or unknown key (or one not allowed), 404 for what is not there, 456 over a key's
// characters_per_day, 429 over its requests_per_minute or when the server is too busy, and
// mtserve's own otherwise (413 for a body over the limit, 503 while loading or draining, 504 past
// a deadline).
int DeepLHttpStatus(const absl::Status& status);
std::string DeepLErrorJson(const absl::Status& status);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_DEEPL_DEEPL_API_H_
