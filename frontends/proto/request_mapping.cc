#include "frontends/proto/request_mapping.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mtserve {

RequestedOptions ToRequested(const v1::DecodingOptions& proto) {
  RequestedOptions options;
  options.beam_size = proto.beam_size();
  options.num_hypotheses = proto.num_hypotheses();
  if (proto.has_length_penalty()) options.length_penalty = proto.length_penalty();
  options.sampling_topk = proto.sampling_topk();
  if (proto.has_sampling_temperature()) options.sampling_temperature = proto.sampling_temperature();
  if (proto.has_seed()) options.seed = proto.seed();
  options.max_length = proto.max_length();
  options.min_length = proto.min_length();
  options.return_scores = proto.return_scores();
  options.return_alignment = proto.return_alignment();
  options.split_sentences = !proto.has_split_sentences() || proto.split_sentences();
  options.shortlist = !proto.has_shortlist() || proto.shortlist();
  options.format = proto.format();
  for (const v1::GlossaryEntry& entry : proto.glossary()) {
    options.terms.glossary.push_back(
        {entry.source(), std::vector<std::string>(entry.targets().begin(), entry.targets().end())});
  }
  options.glossary_id = proto.glossary_id();
  options.terms.ignore_case = proto.glossary_ignore_case();
  options.terms.keep.assign(proto.keep().begin(), proto.keep().end());
  // As sent: ValidateTerminology refuses a value that names no pattern.
  for (const int pattern : proto.keep_patterns()) {
    options.terms.keep_patterns.push_back(static_cast<KeepPattern>(pattern));
  }
  return options;
}

namespace {

// The fields a TranslateRequest and a stream's TranslateStreamRequest share (all but the texts).
template <typename Message>
TranslationRequest WithoutTexts(const Message& message, absl::Time deadline, std::string method,
                                Frontend frontend) {
  TranslationRequest request;
  request.model = message.model();
  request.source_language = message.source_language();
  request.target_language = message.target_language();
  request.options = ToRequested(message.options());
  request.deadline = deadline;
  request.method = std::move(method);
  request.frontend = frontend;
  return request;
}

}  // namespace

TranslationRequest ToCoreRequest(v1::TranslateRequest& message, absl::Time deadline,
                                 std::string method, Frontend frontend) {
  TranslationRequest request = WithoutTexts(message, deadline, std::move(method), frontend);
  request.texts.assign(std::make_move_iterator(message.mutable_texts()->begin()),
                       std::make_move_iterator(message.mutable_texts()->end()));
  return request;
}

TranslationRequest ToCoreRequest(v1::TranslateStreamRequest& message, absl::Time deadline,
                                 std::string method, Frontend frontend) {
  TranslationRequest request = WithoutTexts(message, deadline, std::move(method), frontend);
  request.texts.push_back(std::move(*message.mutable_text()));
  request.texts_field = "text";
  request.texts_repeated = false;
  return request;
}

TranslationRequest ToCoreRequest(const v1::FileHeader& header, absl::Time deadline,
                                 std::string method, Frontend frontend) {
  TranslationRequest request = WithoutTexts(header, deadline, std::move(method), frontend);
  request.texts_field = "file";
  request.texts_repeated = false;
  return request;
}

absl::StatusOr<std::string> ClaimedFormatName(const v1::FileHeader& header,
                                              absl::string_view field) {
  if (!header.has_format()) return "";
  switch (header.format()) {
    case v1::TEXT_FORMAT_PLAIN:
      return "text";
    case v1::TEXT_FORMAT_HTML:
      return "html";
    case v1::TEXT_FORMAT_MARKDOWN:
      return "markdown";
    case v1::TEXT_FORMAT_SRT:
      return "srt";
    case v1::TEXT_FORMAT_VTT:
      return "vtt";
    case v1::TEXT_FORMAT_DOCX:
      return "docx";
    case v1::TEXT_FORMAT_PPTX:
      return "pptx";
    case v1::TEXT_FORMAT_ODT:
      return "odt";
    case v1::TEXT_FORMAT_ODP:
      return "odp";
    case v1::TEXT_FORMAT_EPUB:
      return "epub";
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": ", static_cast<int>(header.format()),
      " is not a TextFormat (TEXT_FORMAT_PLAIN, _HTML, _MARKDOWN, _SRT, _VTT, _DOCX, _PPTX, _ODT, "
      "_ODP or _EPUB: 0 to 9)"));
}

DetectionRequest ToCoreRequest(v1::DetectRequest& message, std::string method, Frontend frontend) {
  DetectionRequest request;
  request.texts.assign(std::make_move_iterator(message.mutable_texts()->begin()),
                       std::make_move_iterator(message.mutable_texts()->end()));
  request.target = message.target();
  request.all_languages = message.all_languages();
  request.max_results = message.max_results();
  request.method = std::move(method);
  request.frontend = frontend;
  return request;
}

}  // namespace mtserve
