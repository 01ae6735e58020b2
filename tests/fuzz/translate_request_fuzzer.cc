// A Translate request's bytes through the path both front ends take before a text is split: the
// HTTP body as JSON (http_json.h) and the gRPC message as binary protobuf, each mapped by
// ToCoreRequest and checked as TranslationCore::Translate checks it (options against the limits and
// the embedded model's config, each text's size and UTF-8). Any bytes give options the engine can
// decode with, or an InvalidArgument. The same bytes as a TranslateFile stream's message: its
// header's options likewise, its format claim a format's name or an InvalidArgument. (The
// splitting of texts and HTML: their own targets; a file's format: file_format's.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "frontends/http/http_json.h"
#include "frontends/proto/request_mapping.h"
#include "model/model_config.h"
#include "mtserve/v1/translation.pb.h"
#include "serving/request_limits.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/utf8.h"

namespace {

using mtserve::DecodingOptions;

const mtserve::ModelConfig& EmbeddedConfig() {
  static const mtserve::ModelConfig* const config = [] {
    absl::StatusOr<mtserve::ModelConfig> loaded =
        mtserve::LoadModelConfig(MTSERVE_DEFAULT_MODEL_DIR);
    FUZZ_CHECK(loaded.ok());
    return new mtserve::ModelConfig(*std::move(loaded));
  }();
  return *config;
}

void CheckCoreRequest(const mtserve::TranslationRequest& request) {
  const mtserve::RequestLimits limits;  // The server's defaults.
  const mtserve::ModelConfig& config = EmbeddedConfig();
  const absl::StatusOr<DecodingOptions> options =
      mtserve::ToDecodingOptions(request.options, config, limits);
  if (options.ok()) {
    const DecodingOptions& o = *options;
    FUZZ_CHECK(o.beam_size >= 1 && o.beam_size <= limits.max_beam_size &&
               o.beam_size <= config.vocab_size);
    FUZZ_CHECK(o.num_hypotheses >= 1 && o.num_hypotheses <= o.beam_size);
    FUZZ_CHECK(o.sampling_topk >= 1 && o.sampling_topk <= limits.max_sampling_topk &&
               o.sampling_topk <= config.vocab_size);
    FUZZ_CHECK(o.sampling_topk == 1 || o.beam_size == 1);
    FUZZ_CHECK(std::isfinite(o.length_penalty));
    FUZZ_CHECK(std::isfinite(o.sampling_temperature) && o.sampling_temperature > 0);
    FUZZ_CHECK(o.max_length >= 1 && o.max_length <= mtserve::MaxOutputTokens(config, limits));
    FUZZ_CHECK(o.min_length >= 0 && o.min_length <= o.max_length);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(options.status()));
  }
  for (const std::string& text : request.texts) {
    const absl::Status size = mtserve::CheckTextBytes(text, "texts[0]", limits);
    FUZZ_CHECK(size.ok() == (static_cast<int64_t>(text.size()) <= limits.max_text_bytes));
    const absl::Status utf8 = mtserve::CheckUtf8(text, "texts[0]");
    FUZZ_CHECK(utf8.ok() || absl::IsInvalidArgument(utf8));
  }
}

void CheckRequest(mtserve::v1::TranslateRequest& message) {
  CheckCoreRequest(mtserve::ToCoreRequest(message, absl::InfiniteFuture(), "Translate",
                                          mtserve::Frontend::kHttp));
}

// A TranslateFile stream's header: its options as a text's, its format claim a name or an
// InvalidArgument.
void CheckFileHeader(const mtserve::v1::FileHeader& header) {
  CheckCoreRequest(mtserve::ToCoreRequest(header, absl::InfiniteFuture(), "TranslateFile",
                                          mtserve::Frontend::kGrpc));
  const absl::StatusOr<std::string> format = mtserve::ClaimedFormatName(header, "header.format");
  if (format.ok()) {
    FUZZ_CHECK(format->empty() == !header.has_format());
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(format.status()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // On the stack the server parses it on (an HTTP request thread's, the smallest).
  mtserve::RunOnRequestThreadStack([bytes] {
    mtserve::v1::TranslateRequest from_json;
    const absl::Status parsed =
        mtserve::ParseJson(bytes, "the request body",
                           mtserve::RequestValueBounds(mtserve::RequestLimits{}), from_json);
    if (parsed.ok()) {
      CheckRequest(from_json);
    } else {
      FUZZ_CHECK(absl::IsInvalidArgument(parsed));
    }
    mtserve::v1::TranslateRequest from_proto;
    if (from_proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      CheckRequest(from_proto);
    }
    mtserve::v1::TranslateFileRequest file_part;
    if (file_part.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
        file_part.has_header()) {
      CheckFileHeader(file_part.header());
    }
  });
  return 0;
}
