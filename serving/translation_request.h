// What a front end hands the serving core and gets back: a request (its texts, the decoding
// options as the caller sent them, the deadline, who asked and through which front end) and its
// reply. Plain values only, so that the parsers that build requests from untrusted bytes
// (frontends/proto/request_mapping, frontends/libretranslate/libretranslate_request) need this
// header and base/ alone: not the core, its scheduler, metrics, auth or cache, and no model/
// header. The checks of a request against the limits and the model live in request_limits.h,
// which includes this header (never the other way round); TranslationCore (translation_core.h)
// takes the request and answers with the reply.
#ifndef MTSERVE_SERVING_TRANSLATION_REQUEST_H_
#define MTSERVE_SERVING_TRANSLATION_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "text/terminology.h"

namespace mtserve {

// One text's translation (text/text_translation.h). Only declared here: a request's parsers never
// touch a reply, and the code that makes or reads one includes text/text_translation.h.
struct TextTranslation;

// The front end a request came through: the `frontend` label of the request metrics
// (metrics.h's FrontendName), with these two values only.
enum class Frontend { kGrpc, kHttp };

// Decoding options as a caller sent them (the API's DecodingOptions): 0 or unset means the
// documented default. Here rather than in request_limits.h because parsers fill it; their bounds
// (request_limits.h's ToDecodingOptions) need the model's config.
struct RequestedOptions {
  // What the texts are (the API's TextFormat, text/document.h's DocumentFormat). `format` holds
  // the caller's value as sent, so that the core can refuse a value that is none of these, or a
  // binary format for a text that is not a file (TranslationRequest::file), naming it.
  enum Format : int {
    kPlainText = 0,
    kHtml = 1,      // HTML documents (text/html_document.h).
    kMarkdown = 2,  // Markdown documents (text/markdown_document.h).
    kSrt = 3,       // Subtitle files (text/subtitle_document.h): SubRip,
    kVtt = 4,       // and WebVTT.
    // Office documents (text/office/): files only.
    kDocx = 5,
    kPptx = 6,
    kOdt = 7,
    kOdp = 8,
    kEpub = 9,
  };

  uint32_t beam_size = 0;
  uint32_t num_hypotheses = 0;
  std::optional<float> length_penalty;
  uint32_t sampling_topk = 0;
  std::optional<float> sampling_temperature;
  std::optional<uint64_t> seed;
  uint32_t max_length = 0;
  uint32_t min_length = 0;
  bool return_scores = false;
  bool return_alignment = false;
  // With the model's lexical shortlist (DecodingOptions::shortlist).
  bool shortlist = true;
  // Whether texts are split into sentences (default) or taken as one sentence each.
  bool split_sentences = true;
  int format = kPlainText;
  // Terms translated a fixed way (text/terminology.h), and a stored glossary's id whose entries
  // join `terms.glossary` (serving/glossaries.h).
  Terminology terms;
  std::string glossary_id;
  // HTML's (and XML's) elements whose content is kept as written, as if they had
  // translate="no": DeepL's ignore_tags (names compared ignoring ASCII case).
  std::vector<std::string> ignore_tags;
};

struct TranslationRequest {
  // Which model translates: by name (empty: the default model), or, with `target_language` set,
  // by languages: each text goes to the model that reads `source_language` into
  // `target_language`; a source of "auto" (or empty) detects each text's language on its own
  // (LanguageRoutes::RouteDetected). Either a model or a target, not both.
  std::string model;
  std::string source_language;
  std::string target_language;
  std::vector<std::string> texts;
  RequestedOptions options;
  absl::Time deadline = absl::InfiniteFuture();
  // How errors name the texts: `texts_field`[i] for a repeated field, `texts_field` alone for
  // a front end's single-text field (a stream message's `text`).
  std::string texts_field = "texts";
  bool texts_repeated = true;
  // How errors name the languages' fields, and the format's.
  std::string source_field = "source_language";
  std::string target_field = "target_language";
  std::string format_field = "options.format";
  // What precedes the names of the terminology's fields in errors ("options." for the native API:
  // "options.glossary[2].targets[0]", "options.glossary_id").
  std::string terms_field = "options.";
  // The front end's name for the call, for the metrics' method label.
  std::string method;
  Frontend frontend = Frontend::kGrpc;  // The metrics' frontend label.
  // The API key the call presented (PresentedApiKey), checked when keys are required.
  std::optional<std::string> api_key;
  // The bytes a text may have at most, and how errors name that limit: 0 for the server's
  // --max_text_bytes; a file's (serving/file_jobs.h) is --max_file_bytes.
  int64_t max_text_bytes = 0;
  std::string max_text_bytes_flag = "--max_text_bytes";
  // Whether the text is a file's bytes (serving/file_jobs.h, its one text): only a file may be of
  // a binary format (an office document), and such a file is not held to UTF-8.
  bool file = false;
};

// A detect call: which language each text is in (text/language_detector.h).
struct DetectionRequest {
  std::vector<std::string> texts;
  // The languages ranked: those the served models read into `target`, or, with `target` empty,
  // every language a served model reads; with `all_languages`, every language the detector
  // knows.
  std::string target;
  bool all_languages = false;
  uint32_t max_results = 0;  // Languages per text at most; 0: 5.
  // As TranslationRequest's.
  std::string texts_field = "texts";
  bool texts_repeated = true;
  std::string method;
  Frontend frontend = Frontend::kGrpc;
  std::optional<std::string> api_key;
};

// One language of a text and how likely: the detector's probability as a percentage (0 to 100),
// LibreTranslate's `confidence`.
struct DetectedLanguage {
  std::string language;
  double confidence = 0;
};

struct DetectionReply {
  // Per text, best first; empty for a text with no letters (no language).
  std::vector<std::vector<DetectedLanguage>> texts;
};

// How a text routed by language went (TranslationRequest's target_language).
struct RoutedText {
  std::string model;  // The model that translated it; empty when it was not translated.
  // With source "auto": the language chosen and the detector's confidence in it (0 when it was
  // not detected: no letters, or the only language served into the target with detection off).
  std::optional<DetectedLanguage> detected;
  // Why this text was not translated (its translation is then empty); the others were.
  absl::Status status;
};

struct TranslationReply {
  // The model that translated the texts; empty when texts routed by language went to several.
  std::string model;
  std::vector<TextTranslation> translations;  // One per text, in order.
  // Per text, in order, for a request routed by language; empty otherwise.
  std::vector<RoutedText> routed;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_TRANSLATION_REQUEST_H_
