#include "frontends/proto/proto_mapping.h"

#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "model/model.h"

namespace mtserve {
namespace {

// The eos id of the served model `name`, for counting target tokens.
int EosId(const TranslationCore& core, const std::string& name) {
  const std::shared_ptr<const ModelRepository::Catalog> models = core.models();
  if (models == nullptr) return -1;
  for (const int i : models->served) {
    if (models->slots[i].name == name) return models->slots[i].config.eos_token_id;
  }
  return -1;
}

}  // namespace

void FillTranslation(const TextTranslation& result, bool with_scores, int eos_id,
                     v1::Translation& translation) {
  translation.set_source_tokens(result.source_tokens);
  auto add_ranges = [](absl::Span<const Segment> ranges, auto* out) {
    for (const Segment& range : ranges) {
      v1::TextRange* r = out->Add();
      r->set_begin(static_cast<uint32_t>(range.begin));
      r->set_end(static_cast<uint32_t>(range.end));
    }
  };
  add_ranges(result.sentences, translation.mutable_sentences());
  for (size_t k = 0; k < result.hypotheses.size(); ++k) {
    const Hypothesis& h = result.hypotheses[k];
    v1::Hypothesis* out = translation.add_hypotheses();
    out->set_text(h.text);
    if (k < result.hypothesis_sentences.size()) {
      add_ranges(result.hypothesis_sentences[k], out->mutable_sentences());
    }
    if (k < result.dropped.size()) add_ranges(result.dropped[k], out->mutable_dropped());
    out->set_num_tokens(TargetTokens(h, eos_id));
    out->set_truncated_sentences(static_cast<uint32_t>(h.truncated));
    if (with_scores) {
      out->set_score(h.score);
      out->mutable_token_log_probs()->Assign(h.token_log_probs.begin(), h.token_log_probs.end());
    }
    // Only there when the request asked for it (the engine computes none otherwise).
    out->mutable_alignment()->Assign(h.alignment.begin(), h.alignment.end());
  }
}

namespace {

void FillError(const absl::Status& status, v1::Error& error) {
  error.set_code(static_cast<int>(status.code()));
  error.set_message(std::string(status.message()));
}

// Text `i` of `reply` as a message: its translation, and how it was routed by language.
void FillText(const TranslationCore& core, const TranslationCore::Reply& reply, size_t i,
              bool with_scores, v1::Translation& translation) {
  const RoutedText* routed = i < reply.routed.size() ? &reply.routed[i] : nullptr;
  const std::string& model = routed != nullptr ? routed->model : reply.model;
  FillTranslation(reply.translations[i], with_scores, EosId(core, model), translation);
  if (routed == nullptr) return;
  translation.set_model(routed->model);
  if (routed->detected.has_value()) {
    translation.mutable_detected_language()->set_language(routed->detected->language);
    translation.mutable_detected_language()->set_confidence(
        static_cast<float>(routed->detected->confidence));
  }
  if (!routed->status.ok()) FillError(routed->status, *translation.mutable_error());
}

}  // namespace

v1::TranslateResponse ToTranslateResponse(const TranslationCore& core,
                                          const TranslationCore::Reply& reply, bool with_scores) {
  v1::TranslateResponse response;
  response.set_model(reply.model);
  for (size_t i = 0; i < reply.translations.size(); ++i) {
    FillText(core, reply, i, with_scores, *response.add_translations());
  }
  return response;
}

v1::TranslateStreamResponse ToStreamResponse(const TranslationCore& core, std::string id,
                                             const absl::StatusOr<TranslationCore::Reply>& reply,
                                             bool with_scores) {
  v1::TranslateStreamResponse answer;
  answer.set_id(std::move(id));
  if (!reply.ok()) {
    FillError(reply.status(), *answer.mutable_error());
  } else if (!reply->routed.empty() && !reply->routed.front().status.ok()) {
    FillError(reply->routed.front().status, *answer.mutable_error());
  } else {
    answer.set_model(reply->routed.empty() ? reply->model : reply->routed.front().model);
    FillText(core, *reply, 0, with_scores, *answer.mutable_translation());
  }
  return answer;
}

namespace {

// Model `served`, in slot `slot` of `repository`.
void FillModelInfo(const ModelRepository& repository, const ModelRepository::Slot& served, int slot,
                   bool is_default, const RequestLimits& limits, v1::ModelInfo& info) {
  const ModelConfig& c = served.config;
  info.set_name(served.name);
  info.set_is_default(is_default);
  info.set_source_language(c.source_lang);
  info.set_target_language(c.target_lang);
  info.set_architecture(ArchitectureSummary(c));
  info.set_encoder_layers(c.encoder_layers);
  info.set_decoder_layers(c.decoder_layers);
  info.set_d_model(c.d_model);
  info.set_attention_heads(c.encoder_attention_heads);
  info.set_ffn_dim(c.encoder_ffn_dim);
  info.set_vocab_size(c.vocab_size);
  info.set_compute_type(std::string(ComputeTypeName(served.compute_type)));
  info.set_max_input_tokens(MaxInputTokens(c, limits));
  info.set_max_output_tokens(MaxOutputTokens(c, limits));
  info.set_path(served.dir);
  const ModelRepository::SlotStatus status = repository.status(slot);
  switch (status.state) {
    case ModelRepository::State::kAvailable:
      info.set_state(v1::MODEL_STATE_AVAILABLE);
      break;
    case ModelRepository::State::kLoading:
      info.set_state(v1::MODEL_STATE_LOADING);
      break;
    case ModelRepository::State::kLoaded:
      info.set_state(v1::MODEL_STATE_LOADED);
      break;
    case ModelRepository::State::kFailed:
      info.set_state(v1::MODEL_STATE_FAILED);
      break;
  }
  info.set_failure(status.failure);
  info.set_resident_bytes(static_cast<uint64_t>(status.resident_bytes));
  info.set_estimated_bytes(static_cast<uint64_t>(served.estimated_bytes));
  info.set_unload_pending(status.unload_pending);
}

}  // namespace

absl::StatusOr<v1::ListModelsResponse> ListModels(const TranslationCore& core,
                                                  const std::optional<std::string>& api_key,
                                                  int64_t max_file_bytes) {
  MT_RETURN_IF_ERROR(core.CheckApiKey(api_key, /*charge_request=*/true));
  const ModelRepository* repository = core.repository();
  const std::shared_ptr<const ModelRepository::Catalog> models = core.models();
  if (repository == nullptr || models == nullptr) {
    return absl::UnavailableError("the server is loading its models");
  }
  const RequestLimits& limits = core.limits();
  v1::ListModelsResponse response;
  // The models served now (one replaced or removed from its --model_dir leaves the list at once).
  for (size_t k = 0; k < models->served.size(); ++k) {
    const int slot = models->served[k];
    FillModelInfo(*repository, models->slots[slot], slot, k == 0, limits, *response.add_models());
  }
  v1::RequestLimits* served_limits = response.mutable_limits();
  served_limits->set_max_texts_per_request(limits.max_texts_per_request);
  served_limits->set_max_text_bytes(static_cast<uint32_t>(limits.max_text_bytes));
  served_limits->set_max_beam_size(limits.max_beam_size);
  served_limits->set_max_sampling_topk(limits.max_sampling_topk);
  served_limits->set_max_file_bytes(static_cast<uint64_t>(max_file_bytes));
  return response;
}

v1::ModelInfo ToModelInfo(const TranslationCore& core, int slot) {
  const std::shared_ptr<const ModelRepository::Catalog> models = core.models();
  v1::ModelInfo info;
  FillModelInfo(*core.repository(), models->slots[slot], slot,
                !models->served.empty() && models->served.front() == slot, core.limits(), info);
  return info;
}

v1::DetectResponse ToDetectResponse(const DetectionReply& reply) {
  v1::DetectResponse response;
  for (const std::vector<DetectedLanguage>& text : reply.texts) {
    v1::Detection& detection = *response.add_detections();
    for (const DetectedLanguage& language : text) {
      v1::DetectedLanguage& detected = *detection.add_languages();
      detected.set_language(language.language);
      detected.set_confidence(static_cast<float>(language.confidence));
    }
  }
  return response;
}

v1::FileJob ToFileJobProto(const JobRecord& record, bool with_result_url) {
  v1::FileJob job;
  job.set_id(record.id);
  // The proto's values are JobState's, value for value.
  job.set_state(static_cast<v1::FileJobState>(record.state));
  job.set_sentences_done(static_cast<uint64_t>(record.sentences_done));
  job.set_sentences_total(static_cast<uint64_t>(record.sentences_total));
  if (!record.error.ok()) FillError(record.error, *job.mutable_error());
  if (record.state == JobState::kDone) {
    job.set_file_name(record.result_file_name);
    job.set_media_type(record.result_media_type);
    job.set_result_bytes(static_cast<uint64_t>(record.result_bytes));
    if (with_result_url) job.set_result_url(absl::StrCat("/v1/jobs/", record.id, "/result"));
    for (const ByteRange& range : record.dropped) {
      v1::TextRange* out = job.add_dropped();
      out->set_begin(static_cast<uint32_t>(range.begin));
      out->set_end(static_cast<uint32_t>(range.end));
    }
  }
  auto rfc3339 = [](absl::Time time) {
    return absl::FormatTime(absl::RFC3339_full, time, absl::UTCTimeZone());
  };
  job.set_created(rfc3339(record.created));
  job.set_expires(rfc3339(record.expires));
  return job;
}

}  // namespace mtserve
