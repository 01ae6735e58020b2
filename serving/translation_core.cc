#include "serving/translation_core.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/byte_size.h"
#include "base/excerpt.h"
#include "base/status_macros.h"
#include "serving/pivot.h"
#include "serving/request_terms.h"
#include "serving/state/local_sentence_cache.h"
#include "serving/stop_reason.h"
#include "text/document.h"
#include "text/term_matcher.h"
#include "text/utf8.h"

namespace mtserve {
namespace {

// The model label of requests refused before a model was chosen (keeps label values bounded
// whatever names clients send).
constexpr char kNoModel[] = "none";
// The model label of a request whose texts, routed by language, went to several models.
constexpr char kSeveralModels[] = "several";

// Texts are tokenised on these threads: enough that one very long text does not hold up the
// others, few enough to leave the cores to the decoding workers.
constexpr int kTokenizerThreads = 2;

// How errors name text `index` of a translation's or a detection's request.
template <typename Request>
std::string FieldName(const Request& request, size_t index) {
  return request.texts_repeated ? absl::StrCat(request.texts_field, "[", index, "]")
                                : request.texts_field;
}

// `status` said of `where`, unless it is the call's own end (cancelled, past its deadline), which
// is not about any one sentence.
absl::Status Within(absl::string_view where, const absl::Status& status) {
  if (absl::IsCancelled(status) || absl::IsDeadlineExceeded(status)) return status;
  return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
}

// The format of a request's texts (a value CheckFormat let through: the API's TextFormat values
// are DocumentFormat's).
DocumentFormat ToDocumentFormat(int format) { return static_cast<DocumentFormat>(format); }

// The one check of a request's format: a TextFormat value, and a binary one (an office document)
// only for a file's bytes; a text API's caller is told to use the file API.
absl::Status CheckFormat(const TranslationRequest& r) {
  const int format = r.options.format;
  if (format < RequestedOptions::kPlainText || format > RequestedOptions::kEpub) {
    return absl::InvalidArgumentError(absl::StrCat(
        r.format_field, " is ", format,
        "; it must be TEXT_FORMAT_PLAIN (0), TEXT_FORMAT_HTML (1), TEXT_FORMAT_MARKDOWN (2), "
        "TEXT_FORMAT_SRT (3) or TEXT_FORMAT_VTT (4) (the office documents' formats, 5 to 9, are "
        "a file's)"));
  }
  if (IsBinaryFormat(ToDocumentFormat(format)) && !r.file) {
    static constexpr absl::string_view kNames[] = {"DOCX", "PPTX", "ODT", "ODP", "EPUB"};
    return absl::InvalidArgumentError(absl::StrCat(
        r.format_field, " is ", kNames[format - RequestedOptions::kDocx],
        ", an office document's format: a binary file, translated as a file only; send the file to "
        "the file API (HTTP POST /v1/translate_file, gRPC TranslateFile, LibreTranslate's "
        "/translate_file)"));
  }
  return absl::OkStatus();
}

// How a chain of models is named where one model's name would be: "fr-en+en-de".
std::string ChainName(const std::vector<ModelRepository::Slot>& slots,
                      const std::vector<int>& chain) {
  std::vector<std::string> names;
  for (const int m : chain) names.push_back(slots[m].name);
  return absl::StrJoin(names, "+");
}

// OK when the models of `slots` (indexes into `catalog`, the repository's) can be resident at
// once within `repository`'s budget by their estimates, else FAILED_PRECONDITION naming them, their
// sizes and --model_memory. A request holds all the models it needs at once (a pivot's chain, texts
// routed to several models): when they cannot fit together, waiting would not help (the first one's
// lease keeps the last one's load, and every load queued behind it, waiting until the request's
// deadline, or forever without one).
absl::Status FitTogether(const ModelRepository& repository,
                         const std::vector<ModelRepository::Slot>& catalog,
                         const std::set<int>& slots) {
  const int64_t budget = repository.memory_budget();
  if (budget == 0 || slots.size() < 2) return absl::OkStatus();  // One alone always fits.
  int64_t total = 0;
  std::vector<std::string> models;
  for (const int slot : slots) {
    const ModelRepository::Slot& s = catalog[slot];
    total += s.estimated_bytes;
    models.push_back(absl::StrCat(s.name, " (about ", FormatBytes(s.estimated_bytes), ")"));
  }
  if (total <= budget) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the models this request needs at once, ", absl::StrJoin(models, ", "), ", need about ",
      FormatBytes(total),
      " together, more than this server's --model_memory=", AbslUnparseFlag(ByteSize{budget}),
      "; send their texts in separate requests (a pivot translation as its legs by name)"));
}

}  // namespace

// What the core serves: made by StartServing, and anew by Refresh when the repository's models
// change (a request keeps the one it started with).
struct TranslationCore::Serving {
  ModelRepository* repository;
  std::shared_ptr<const ModelRepository::Catalog> catalog;
  // Per slot: its source language's sentence rules (null: texts taken whole).
  std::vector<std::shared_ptr<const SentenceSplitter>> splitters;
  // Over the served slots, in their order: its chains index catalog->served (ToSlots).
  LanguageRoutes routes;
  BatchScheduler* scheduler;

  const std::vector<ModelRepository::Slot>& slots() const { return catalog->slots; }
  // A chain of `routes` as slots.
  std::vector<int> ToSlots(std::vector<int> chain) const {
    for (int& m : chain) m = catalog->served[m];
    return chain;
  }
};

// A request between Translate and its answer; shared by the tasks of its texts.
struct TranslationCore::Pending {
  Request request;
  Done done;
  std::shared_ptr<Call> call;
  const absl::Time start = absl::Now();
  std::string model_name;  // The metrics' label: the model that translates, once chosen.
  std::string api_key;     // The name of the key it presented, when keys are required.
  // A marked-up request's key, charged the characters its texts translate once they are taken
  // apart (Start).
  std::optional<ApiKey> charge_characters;
  bool accepted = false;  // Counted in flight (and its texts as tokenising).
  // What was served when it was accepted, and per text the model (slot) that translates it (-1:
  // none, for a text routed by language that no model reads: routed[i].status says why).
  std::shared_ptr<const Serving> serving;
  int named_model = -1;  // The model the request named (or the default), unless routed.
  // Per text the models that translate it in order: one, or a pivot translation's chain
  // (LanguageRoutes::Route); empty for a text not translated (routed[i].status says why).
  std::vector<std::vector<int>> chains;
  std::vector<RoutedText> routed;  // Per text when routed by language.
  std::set<int> needed;            // The models of all its chains.
  // The decoding options per served model, for those that translate a text.
  std::vector<std::optional<DecodingOptions>> options;
  // What its texts translate a fixed way (serving/request_terms.h), and its matcher per model
  // whose target it is spelled for (text/term_matcher.h), made in Start.
  Terminology terms;
  std::map<int, std::shared_ptr<const TermMatcher>> matchers;

  // Per text: the text taken apart (text/document.h: its sentences' ranges; their ids went to
  // the scheduler) and, as they finish, its sentences' translations. Written before the tasks are
  // queued, read when the last one finishes.
  std::vector<std::unique_ptr<Document>> documents;
  absl::Mutex mutex;
  // The models its texts need, held loaded while it runs (ModelRepository::Lease), by slot.
  std::map<int, std::unique_ptr<ModelRepository::Lease>> leases ABSL_GUARDED_BY(mutex);
  std::vector<std::vector<TranslationResult>> results ABSL_GUARDED_BY(mutex);
  int unanswered ABSL_GUARDED_BY(mutex) = 0;
  int sentences ABSL_GUARDED_BY(mutex) = 0;  // Of all its texts, once they are taken apart.
  absl::Status status ABSL_GUARDED_BY(mutex);
  bool finished ABSL_GUARDED_BY(mutex) = false;

  // The request fails with `error` (unless it already has): its other texts need not run.
  void Fail(absl::Status error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    if (!status.ok()) return;
    status = std::move(error);
    call->Cancel();
  }
  // Tells the call's progress hook, if any, how many sentences have finished.
  void Progress() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    if (call->progress()) call->progress()(sentences - unanswered, sentences);
  }
};

TranslationCore::TranslationCore(const RequestLimits& limits, int max_queued_texts,
                                 int64_t cache_bytes, Metrics* metrics, DrainGate* drain)
    : limits_(limits),
      max_queued_texts_(max_queued_texts),
      metrics_(metrics),
      drain_(drain),
      cache_(std::make_unique<LocalSentenceCache>(cache_bytes)),
      cold_loads_(limits.max_cold_loads_per_minute),
      pool_(kTokenizerThreads) {}

TranslationCore::~TranslationCore() = default;

void TranslationCore::StartServing(std::vector<ServedModel> models, BatchScheduler* scheduler) {
  std::vector<ModelRepository::Slot> slots;
  std::vector<std::shared_ptr<const SentenceSplitter>> splitters;
  for (const ServedModel& served : models) {
    slots.push_back({served.name, served.model->dir(), served.model->compute_type(),
                     served.model->config(), 0});
    splitters.push_back(served.splitter);
  }
  // Nothing to load: each slot's loader hands over the model given.
  absl::StatusOr<std::unique_ptr<ModelRepository>> repository = ModelRepository::Create(
      std::move(slots), {},
      [models](const ModelRepository::Slot& slot) -> absl::StatusOr<std::shared_ptr<const Model>> {
        for (const ServedModel& served : models) {
          if (served.name == slot.name) return served.model;
        }
        return absl::InternalError(absl::StrCat("no model ", slot.name));
      });
  // Without a budget Create cannot fail, nor can handing over a loaded model.
  for (size_t i = 0; i < models.size(); ++i) {
    (*repository)->LoadNow(static_cast<int>(i)).IgnoreError();
  }
  owned_repository_ = *std::move(repository);
  Serve(owned_repository_.get(), std::move(splitters), scheduler);
}

void TranslationCore::StartServing(ModelRepository* repository, BatchScheduler* scheduler) {
  Serve(repository, {}, scheduler);
}

void TranslationCore::Refresh() {
  std::shared_ptr<const Serving> serving;
  {
    absl::ReaderMutexLock lock(&mutex_);
    serving = serving_;
  }
  if (serving != nullptr) Serve(serving->repository, serving->splitters, serving->scheduler);
}

void TranslationCore::Serve(ModelRepository* repository,
                            std::vector<std::shared_ptr<const SentenceSplitter>> splitters,
                            BatchScheduler* scheduler) {
  std::shared_ptr<const ModelRepository::Catalog> catalog = repository->catalog();
  const std::vector<ModelRepository::Slot>& slots = catalog->slots;
  splitters.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    if (splitters[i] != nullptr) continue;
    absl::StatusOr<std::unique_ptr<SentenceSplitter>> splitter =
        SplitterForLanguage(slots[i].config.source_lang);
    // Without ICU's data (never seen) texts are taken whole rather than not at all.
    if (splitter.ok()) splitters[i] = *std::move(splitter);
  }
  std::vector<LanguageRoutes::Pair> pairs;
  for (const int i : catalog->served) {
    pairs.push_back({slots[i].name, slots[i].config.source_lang, slots[i].config.target_lang});
  }
  auto serving = std::make_shared<const Serving>(
      Serving{repository, std::move(catalog), std::move(splitters),
              LanguageRoutes(std::move(pairs), pivot_language_), scheduler});
  absl::MutexLock lock(&mutex_);
  serving_ = std::move(serving);
}

std::shared_ptr<const ModelRepository::Catalog> TranslationCore::models() const {
  absl::ReaderMutexLock lock(&mutex_);
  return serving_ == nullptr ? nullptr : serving_->catalog;
}

std::shared_ptr<const LanguageRoutes> TranslationCore::routes() const {
  absl::ReaderMutexLock lock(&mutex_);
  if (serving_ == nullptr) return nullptr;
  return std::shared_ptr<const LanguageRoutes>(serving_, &serving_->routes);
}

const ModelRepository* TranslationCore::repository() const {
  absl::ReaderMutexLock lock(&mutex_);
  return serving_ == nullptr ? nullptr : serving_->repository;
}

absl::StatusOr<std::shared_ptr<const TranslationCore::Serving>> TranslationCore::CurrentServing()
    const {
  if (drain_->draining()) return absl::UnavailableError("the server is shutting down");
  absl::ReaderMutexLock lock(&mutex_);
  if (serving_ == nullptr) return absl::UnavailableError("the server is loading its models");
  return serving_;
}

absl::StatusOr<int> TranslationCore::FindModel(const Serving& serving, const std::string& name) {
  const std::vector<ModelRepository::Slot>& slots = serving.slots();
  const std::vector<int>& order = serving.catalog->served;
  if (name.empty() && !order.empty()) return order.front();
  for (const int i : order) {
    if (slots[i].name == name) return i;
  }
  std::string served;
  for (const int i : order) absl::StrAppend(&served, served.empty() ? "" : ", ", slots[i].name);
  if (name.empty()) return absl::NotFoundError("this server serves no model now");
  return absl::NotFoundError(
      absl::StrCat("model \"", Excerpt(name), "\" is not served; this server has: ", served));
}

void TranslationCore::RecordRefused(Frontend frontend, const std::string& method,
                                    const absl::Status& status) {
  if (metrics_ == nullptr) return;
  metrics_->RecordRequest(frontend, kNoModel, method, absl::StatusCodeToString(status.code()), 0);
}

absl::Status TranslationCore::CheckApiKey(const std::optional<std::string>& presented,
                                          bool charge_request) const {
  if (authenticator_ == nullptr) return absl::OkStatus();
  absl::StatusOr<ApiKey> key = authenticator_->Authenticate(presented);
  if (!key.ok()) return key.status();
  return charge_request ? authenticator_->Charge(*key, 1, 0) : absl::OkStatus();
}

absl::StatusOr<std::string> TranslationCore::ApiKeyName(
    const std::optional<std::string>& presented) const {
  if (authenticator_ == nullptr) return std::string();
  MT_ASSIGN_OR_RETURN(const ApiKey key, authenticator_->Authenticate(presented));
  return key.name;
}

absl::StatusOr<CharacterUsage> TranslationCore::ApiKeyCharacters(
    const std::optional<std::string>& presented) const {
  if (authenticator_ == nullptr) return CharacterUsage{};
  MT_ASSIGN_OR_RETURN(const ApiKey key, authenticator_->Authenticate(presented));
  return authenticator_->Characters(key);
}

absl::Status TranslationCore::ChooseModels(Pending& pending) const {
  const Request& r = pending.request;
  const size_t texts = r.texts.size();
  if (r.target_language.empty()) {
    if (!r.source_language.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(r.target_field, ": required with ",
                                                     r.source_field, " (or name a model instead)"));
    }
    MT_ASSIGN_OR_RETURN(pending.serving, CurrentServing());
    MT_ASSIGN_OR_RETURN(const int model, FindModel(*pending.serving, r.model));
    pending.named_model = model;
    pending.chains.assign(texts, {model});
    pending.model_name = pending.serving->slots()[model].name;
    return absl::OkStatus();
  }
  if (!r.model.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model and ", r.target_field, ": give one or the other (model \"", Excerpt(r.model), "\", ",
        r.target_field, " \"", Excerpt(r.target_language), "\")"));
  }
  MT_ASSIGN_OR_RETURN(pending.serving, CurrentServing());
  const LanguageRoutes* const routes = &pending.serving->routes;
  const std::vector<ModelRepository::Slot>& slots = pending.serving->slots();
  const std::vector<std::string> sources = routes->SourcesInto(r.target_language);
  if (sources.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(r.target_field, ": no model here translates into ", Excerpt(r.target_language),
                     "; the pairs served: ", routes->Describe()));
  }
  const bool detect = r.source_language.empty() || r.source_language == "auto";
  if (!detect) {
    absl::StatusOr<std::vector<int>> route = routes->Route(r.source_language, r.target_language);
    if (!route.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(r.source_field, ": ", route.status().message()));
    }
    const std::vector<int> chain = pending.serving->ToSlots(*std::move(route));
    pending.chains.assign(texts, chain);
    RoutedText routed;
    routed.model = ChainName(slots, chain);
    pending.routed.assign(texts, routed);
    pending.model_name = routed.model;
    return absl::OkStatus();
  }
  // An office document's bytes are a zip archive: its language is not detected from them. It goes
  // to the only language read into the target, as without a detector, or the caller names it.
  const bool binary = IsBinaryFormat(ToDocumentFormat(r.options.format));
  if (binary && sources.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(r.source_field,
                     " \"auto\": an office document's language is not detected (its text is "
                     "inside a zip archive) and several languages are served into ",
                     Excerpt(r.target_language), " (", absl::StrJoin(sources, ", "),
                     "); give the source language"));
  }
  const LanguageDetector* const detector = binary ? nullptr : detector_.load();
  if (detector == nullptr && sources.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(r.source_field,
                     " \"auto\": language detection is off on this server (its "
                     "--language_model is empty) and several languages are served into ",
                     Excerpt(r.target_language), " (", absl::StrJoin(sources, ", "),
                     "); give the source language"));
  }
  // Detected here, on the caller's thread: a detection reads at most 4 KiB of a text, in tens of
  // microseconds.
  pending.chains.resize(texts);
  pending.routed.resize(texts);
  std::set<std::string> used;
  for (size_t i = 0; i < texts; ++i) {
    LanguageRoutes::Detected detected =
        routes->RouteDetected(r.texts[i], r.target_language, detector);
    RoutedText& routed = pending.routed[i];
    routed.detected = DetectedLanguage{detected.language, detected.confidence};
    if (detected.chain.empty()) {
      routed.status = Within(FieldName(r, i), detected.status);
      continue;
    }
    pending.chains[i] = pending.serving->ToSlots(detected.chain);
    routed.model = ChainName(slots, pending.chains[i]);
    used.insert(routed.model);
  }
  pending.model_name = used.empty() ? kNoModel : used.size() == 1 ? *used.begin() : kSeveralModels;
  return absl::OkStatus();
}

void TranslationCore::Translate(Request request, std::shared_ptr<Call> call, Done done) {
  auto pending = std::make_shared<Pending>();
  pending->request = std::move(request);
  pending->call = std::move(call);
  pending->done = std::move(done);
  pending->model_name = kNoModel;
  const Request& r = pending->request;
  // What can be checked at once, cheaply, is: the caller hears of it without waiting.
  const absl::Status refused = [&]() -> absl::Status {
    // Who is asking comes first: a caller without a key learns nothing else.
    std::optional<ApiKey> key;
    if (authenticator_ != nullptr) {
      MT_ASSIGN_OR_RETURN(key, authenticator_->Authenticate(r.api_key));
      pending->api_key = key->name;
    }
    const int texts = static_cast<int>(r.texts.size());
    MT_RETURN_IF_ERROR(CheckTextCount(r.texts.size(), r.texts_field, limits_));
    MT_RETURN_IF_ERROR(CheckFormat(r));
    // A binary file's bytes (an office document: a zip archive) are not text.
    const bool binary = IsBinaryFormat(ToDocumentFormat(r.options.format));
    for (size_t i = 0; i < r.texts.size(); ++i) {
      MT_RETURN_IF_ERROR(CheckTextBytes(
          r.texts[i], FieldName(r, i),
          r.max_text_bytes > 0 ? r.max_text_bytes : limits_.max_text_bytes, r.max_text_bytes_flag));
      if (!binary) MT_RETURN_IF_ERROR(CheckUtf8(r.texts[i], FieldName(r, i)));
    }
    MT_RETURN_IF_ERROR(ChooseModels(*pending));
    const std::vector<ModelRepository::Slot>& slots = pending->serving->slots();
    pending->options.resize(slots.size());
    // The options checked against each model that translates, and the one named even for no text.
    auto check_options = [&](int m) -> absl::Status {
      if (m < 0 || pending->options[m].has_value()) return absl::OkStatus();
      MT_ASSIGN_OR_RETURN(pending->options[m],
                          ToDecodingOptions(r.options, slots[m].config, limits_));
      return absl::OkStatus();
    };
    MT_RETURN_IF_ERROR(check_options(pending->named_model));
    // A plain text is charged its characters; a marked-up one (HTML, Markdown, subtitles, office
    // documents) those of the text it translates, without its markup, once it is taken apart
    // (Start).
    const bool marked_up = r.options.format != RequestedOptions::kPlainText;
    int64_t characters = 0;
    for (size_t i = 0; i < r.texts.size(); ++i) {
      if (pending->chains[i].empty()) continue;
      for (const int m : pending->chains[i]) MT_RETURN_IF_ERROR(check_options(m));
      if (!marked_up) characters += CountCharacters(r.texts[i]);
    }
    // The languages of its translations, for a stored glossary's.
    std::set<std::pair<std::string, std::string>> pairs;
    for (const std::vector<int>& chain : pending->chains) {
      if (chain.empty()) continue;
      pairs.insert(
          {slots[chain.front()].config.source_lang, slots[chain.back()].config.target_lang});
    }
    MT_ASSIGN_OR_RETURN(pending->terms, RequestTerminology(r, limits_.terms, glossaries_,
                                                           {pairs.begin(), pairs.end()}));
    // Charged once the request is known to be valid, for the texts it translates.
    if (key.has_value()) {
      MT_RETURN_IF_ERROR(authenticator_->Charge(*key, 1, characters));
      if (marked_up) pending->charge_characters = key;
    }
    absl::MutexLock lock(&mutex_);
    // Every model of its texts' chains is held while it runs (Acquire); one neither loaded nor
    // loading costs its caller a cold load.
    for (const std::vector<int>& chain : pending->chains) {
      pending->needed.insert(chain.begin(), chain.end());
    }
    MT_RETURN_IF_ERROR(
        FitTogether(*pending->serving->repository, pending->serving->slots(), pending->needed));
    for (const int slot : pending->needed) {
      const ModelRepository::State state = pending->serving->repository->status(slot).state;
      if (state != ModelRepository::State::kAvailable && state != ModelRepository::State::kFailed) {
        continue;
      }
      MT_RETURN_IF_ERROR(cold_loads_.Take(pending->api_key, absl::Now()));
    }
    if (waiting_texts_ + texts > max_queued_texts_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the translation queue is full (", waiting_texts_,
          " texts waiting to be queued, --max_queued_texts ", max_queued_texts_, "); retry later"));
    }
    waiting_texts_ += texts;
    // Counted even if draining began since FindModel: it was let in then.
    drain_->Enter();
    pending->accepted = true;
    return absl::OkStatus();
  }();
  if (!refused.ok()) {
    Finish(*pending, refused);
    return;
  }
  if (metrics_ != nullptr) metrics_->InFlightRequests(pending->model_name).Increment();
  Acquire(std::move(pending));
}

void TranslationCore::Acquire(std::shared_ptr<Pending> pending) {
  const std::set<int>& needed = pending->needed;
  if (needed.empty()) {
    pool_.Run([this, pending] { Start(pending); });
    return;
  }
  // Each model's lease comes at once when it is loaded, else once it is (on the repository's
  // loader thread); the last one starts the request.
  auto left = std::make_shared<std::atomic<int>>(static_cast<int>(needed.size()));
  for (const int slot : needed) {
    pending->serving->repository->Acquire(
        slot, pending->request.deadline,
        [this, pending, left, slot](absl::StatusOr<std::unique_ptr<ModelRepository::Lease>> lease) {
          {
            absl::MutexLock lock(&pending->mutex);
            if (lease.ok()) {
              pending->leases[slot] = *std::move(lease);
            } else {
              pending->Fail(Within(absl::StrCat("model ", pending->serving->slots()[slot].name),
                                   lease.status()));
            }
          }
          if (left->fetch_sub(1) != 1) return;
          absl::Status failed;
          {
            absl::MutexLock lock(&pending->mutex);
            failed = pending->status;
          }
          if (failed.ok()) {
            pool_.Run([this, pending] { Start(pending); });
          } else {
            Admitted(static_cast<int>(pending->request.texts.size()));
            Finish(*pending, failed);
          }
        });
  }
}

void TranslationCore::Start(std::shared_ptr<Pending> pending) {
  const Request& r = pending->request;
  const int texts = static_cast<int>(r.texts.size());
  BatchScheduler* const scheduler = pending->serving->scheduler;
  const std::vector<ModelRepository::Slot>& slots = pending->serving->slots();
  // The models held for it, by slot (their leases were all given before it started).
  std::map<int, std::shared_ptr<const Model>> loaded;
  {
    absl::MutexLock lock(&pending->mutex);
    for (const auto& [slot, lease] : pending->leases) loaded[slot] = lease->model();
  }
  const DocumentFormat format = ToDocumentFormat(r.options.format);
  // What the sentence cache knows each model by: its content, not its slot or name.
  std::map<int, std::string> cache_identities;
  for (const auto& [slot, model] : loaded) cache_identities[slot] = ModelCacheIdentity(*model);
  // A text's rules: its first model's, with the language its last model writes (for the language
  // tags of office documents).
  auto rules = [&](const std::vector<int>& chain) {
    const int model = chain.front();
    SentenceRules rules;
    rules.splitter = r.options.split_sentences ? pending->serving->splitters[model].get() : nullptr;
    rules.tokenizer = &loaded.at(model)->tokenizer();
    rules.max_tokens = MaxInputTokens(slots[model].config, limits_);
    rules.subtitle_layout = limits_.subtitle_layout;
    rules.target_language = LanguageTag(slots[chain.back()].config.target_lang);
    const auto matcher = pending->matchers.find(chain.back());
    if (matcher != pending->matchers.end()) rules.terms = matcher->second.get();
    rules.ignore_tags = r.options.ignore_tags;
    return rules;
  };
  // Polled between sentences and pieces: a long text stops costing soon after its caller goes.
  const std::function<bool()> stopped = [call = pending->call, deadline = r.deadline] {
    return call->cancelled() || absl::Now() >= deadline;
  };
  pending->documents.resize(texts);
  // The sentences to decode (those not answered from the cache), per model, made into tasks as
  // the scheduler admits them.
  struct Miss {
    int text;
    size_t sentence;
    std::optional<std::string> key;  // In the cache.
    DecodingOptions options;
    std::shared_ptr<const TermConstraints> constraints;  // The terms it must write, if any.
  };
  std::vector<std::vector<Miss>> misses(slots.size());
  struct Hit {
    int text;
    size_t sentence;
    TranslationResult result;
    bool alignment = false;
  };
  std::vector<Hit> hits;
  // Sentences in all (those of pivoted texts are answered once their last leg is).
  int sentences = 0;
  auto stop_reason = [&](absl::string_view when) {
    return StopReason(pending->call->cancelled(), r.deadline, absl::Now(), when);
  };
  const absl::Status prepared = [&]() -> absl::Status {
    MT_RETURN_IF_ERROR(stop_reason("before translation started"));
    // The terms spelled for each model that writes a translation (a chain's last: pivoting
    // applies them on the leg into the requested language).
    // Tags kept as written inside sentences (DeepL's ignore_tags) are terms too.
    if (!pending->terms.empty() || !r.options.ignore_tags.empty()) {
      for (const std::vector<int>& chain : pending->chains) {
        if (chain.empty() || pending->matchers.count(chain.back()) > 0) continue;
        MT_ASSIGN_OR_RETURN(pending->matchers[chain.back()],
                            CompileTerminology(pending->terms, loaded.at(chain.back())->tokenizer(),
                                               r.terms_field));
      }
    }
    for (int i = 0; i < texts; ++i) {
      if (pending->chains[i].empty()) continue;  // Not translated: no document, no translation.
      const int model = pending->chains[i].front();
      const std::string field = FieldName(r, i);
      absl::StatusOr<std::unique_ptr<Document>> document =
          PrepareDocument(r.texts[i], format, rules(pending->chains[i]), stopped);
      // Taking a long text apart takes time: the caller may have gone meanwhile (then the
      // document stopped part way, and is not used).
      MT_RETURN_IF_ERROR(stop_reason("before translation started"));
      if (!document.ok()) {
        // INVALID_ARGUMENT for a text its format refuses (UNIMPLEMENTED for a format this build
        // does not translate yet), said of the text.
        return absl::Status(document.status().code(),
                            absl::StrCat(field, ": ", document.status().message()));
      }
      pending->documents[i] = *std::move(document);
      Document& text = *pending->documents[i];
      const ModelConfig& config = slots[model].config;
      const int last = pending->chains[i].back();
      sentences += static_cast<int>(text.sentences().size());
      for (size_t j = 0; j < text.sentences().size(); ++j) {
        const SourceSentence& sentence = text.sentences()[j];
        // HTML's inline markup and the runs of characters the model cannot spell are placed by
        // the decoder's alignment (text/document.h); dropped from the answer unless asked for.
        // Through a chain, each leg's alignment is needed for the last's, and for where the
        // last writes the sentence's terms (serving/pivot.h).
        DecodingOptions options = *pending->options[model];
        if (text.NeedsAlignment(j) || (last != model && (pending->options[last]->return_alignment ||
                                                         sentence.terms != nullptr))) {
          options.return_alignment = true;
        }
        // Its terms are written by the chain's last model (the first leg of a pivot has none).
        std::shared_ptr<const TermConstraints> constraints;
        if (last == model) constraints = ConstraintsOf(sentence.terms);
        if (constraints != nullptr) options = ConstrainedOptions(options);
        MT_RETURN_IF_ERROR(CheckDecodable(static_cast<int>(sentence.ids.size()), options,
                                          constraints.get(), config, limits_,
                                          text.SentenceName(field, j)));
        std::optional<std::string> key =
            SentenceCacheKey(cache_identities.at(model), options, sentence.ids, constraints.get());
        if (std::optional<TranslationResult> cached = LookUpCache(key)) {
          hits.push_back({i, j, *std::move(cached), options.return_alignment});
          continue;
        }
        misses[model].push_back({i, j, std::move(key), options, std::move(constraints)});
      }
    }
    if (pending->charge_characters.has_value()) {
      int64_t characters = 0;
      for (const std::unique_ptr<Document>& document : pending->documents) {
        if (document != nullptr) characters += document->characters();
      }
      MT_RETURN_IF_ERROR(authenticator_->Charge(*pending->charge_characters, 0, characters));
    }
    return absl::OkStatus();
  }();
  if (!prepared.ok()) {
    Admitted(texts);
    Finish(*pending, prepared);
    return;
  }
  // A QueuedRequest per model that has sentences to decode.
  std::vector<int> models;
  for (size_t m = 0; m < misses.size(); ++m) {
    if (!misses[m].empty()) models.push_back(static_cast<int>(m));
  }
  // Cached first legs of pivoted sentences go on to their next leg.
  std::vector<Hit> first_legs;
  int unanswered = sentences;
  {
    absl::MutexLock lock(&pending->mutex);
    pending->results.resize(texts);
    for (int i = 0; i < texts; ++i) {
      if (pending->documents[i] != nullptr) {
        pending->results[i].resize(pending->documents[i]->sentences().size());
      }
    }
    for (Hit& hit : hits) {
      if (pending->chains[hit.text].size() > 1) {
        first_legs.push_back(std::move(hit));
        continue;
      }
      pending->results[hit.text][hit.sentence] = std::move(hit.result);
      --unanswered;
    }
    pending->unanswered = unanswered;
    pending->sentences = sentences;
    pending->Progress();
  }
  for (Hit& hit : first_legs) {
    pool_.Run([this, pending, hit = std::move(hit)]() mutable {
      NextLeg(pending, hit.text, hit.sentence, 1, std::move(hit.result), hit.alignment);
    });
  }
  if (models.empty()) {
    Admitted(texts);
    if (unanswered == 0) Answer(*pending);
    return;
  }
  // The texts are admitted once the last sentence of every model's request is.
  auto requests_left = std::make_shared<std::atomic<int>>(static_cast<int>(models.size()));
  auto admitted = [this, requests_left, texts] {
    if (requests_left->fetch_sub(1) == 1) Admitted(texts);
  };
  for (const int model : models) {
    auto sentences = std::make_shared<std::vector<Miss>>(std::move(misses[model]));
    const int count = static_cast<int>(sentences->size());
    QueuedRequest request;
    request.group = pending->api_key;
    request.model_name = slots[model].name;
    request.texts = count;
    request.deadline = r.deadline;
    request.cancelled = [call = pending->call] { return call->cancelled(); };
    // Called by the scheduler, under its lock, once per sentence in order: cheap.
    request.make = [this, pending, sentences, model, admitted](int k) {
      Miss& miss = (*sentences)[k];
      const int i = miss.text;
      const size_t j = miss.sentence;
      // Joining needs only the sentences' ranges: their ids go to the task.
      TranslationTask task =
          TaskFor(*pending, model, std::move(pending->documents[i]->sentences()[j].ids),
                  miss.options, std::move(miss.constraints));
      task.done = [this, pending, i, j, key = std::move(miss.key),
                   aligned =
                       miss.options.return_alignment](absl::StatusOr<TranslationResult> result) {
        if (result.ok()) CacheResult(key, *result);
        if (result.ok() && pending->chains[i].size() > 1) {
          // The next leg tokenises: on the core's threads, not the decoding worker's.
          pool_.Run([this, pending, i, j, aligned, first = *std::move(result)]() mutable {
            NextLeg(pending, i, j, 1, std::move(first), aligned);
          });
          return;
        }
        SentenceDone(*pending, i, j, std::move(result));
      };
      if (static_cast<size_t>(k) + 1 == sentences->size()) admitted();
      return task;
    };
    absl::Status submitted = scheduler->Submit(std::move(request));
    if (!submitted.ok()) {  // Nothing of this model's was queued: no task of it will answer.
      admitted();
      {
        absl::MutexLock lock(&pending->mutex);
        pending->Fail(submitted);
        pending->unanswered -= count;
        if (pending->unanswered > 0) continue;
      }
      Answer(*pending);
    }
  }
}

TranslationTask TranslationCore::TaskFor(const Pending& pending, int model,
                                         std::vector<int> source_ids,
                                         const DecodingOptions& options,
                                         std::shared_ptr<const TermConstraints> constraints) {
  TranslationTask task;
  task.model = model;
  task.model_name = pending.serving->slots()[model].name;
  task.source_ids = std::move(source_ids);
  task.constraints = std::move(constraints);
  task.options = options;
  task.deadline = pending.request.deadline;
  task.cancelled = [call = pending.call] { return call->cancelled(); };
  return task;
}

std::optional<TranslationResult> TranslationCore::LookUpCache(
    const std::optional<std::string>& key) {
  if (!key.has_value()) return std::nullopt;
  std::optional<TranslationResult> cached = cache_->Lookup(*key);
  if (metrics_ != nullptr) metrics_->RecordCacheLookup(cached.has_value());
  return cached;
}

void TranslationCore::CacheResult(const std::optional<std::string>& key,
                                  const TranslationResult& result) {
  if (!key.has_value() || result.hypotheses.empty()) return;
  cache_->Insert(*key, result);
  const SentenceCache::Stats stats = cache_->stats();
  if (metrics_ != nullptr) metrics_->SetCacheSize(stats.entries, stats.bytes);
}

void TranslationCore::SentenceDone(Pending& pending, int text, size_t sentence,
                                   absl::StatusOr<TranslationResult> result) {
  {
    absl::MutexLock lock(&pending.mutex);
    if (result.ok()) {
      pending.results[text][sentence] = *std::move(result);
    } else {
      pending.Fail(
          Within(pending.documents[text]->SentenceName(FieldName(pending.request, text), sentence),
                 result.status()));
    }
    --pending.unanswered;
    pending.Progress();
    if (pending.unanswered > 0) return;
  }
  Answer(pending);
}

// One leg of a pivoted sentence under way: its bridge text's pieces and their results.
struct TranslationCore::Bridge {
  TranslationResult previous;  // The legs before's result.
  BridgeText text;             // What this leg reads of it (`document`'s text).
  std::unique_ptr<Document> document;
  std::shared_ptr<const Model> from, to;   // The models of the leg before and of this one.
  std::vector<TranslationResult> results;  // Per piece of `document`.
  std::atomic<int> left = 0;               // Pieces not decoded yet.
  absl::Mutex mutex;
  absl::Status status ABSL_GUARDED_BY(mutex);
};

void TranslationCore::NextLeg(std::shared_ptr<Pending> pending, int i, size_t j, size_t leg,
                              TranslationResult previous, bool aligned) {
  const std::vector<int>& chain = pending->chains[i];
  const int model = chain[leg];
  const ModelRepository::Slot& slot = pending->serving->slots()[model];
  auto bridge = std::make_shared<Bridge>();
  bridge->previous = std::move(previous);
  std::shared_ptr<const Model> source;  // The chain's first model, which read the sentence.
  {
    absl::MutexLock lock(&pending->mutex);
    // Held until the request is answered, which waits for this sentence.
    source = pending->leases.at(chain.front())->model();
    bridge->from = pending->leases.at(chain[leg - 1])->model();
    bridge->to = pending->leases.at(model)->model();
  }
  const std::string name = pending->documents[i]->SentenceName(FieldName(pending->request, i), j);
  // The runs of characters the first model cannot spell go into the bridge from the sentence's
  // bytes: a plain text's own (a marked-up document's sentences are in its runs, not at hand
  // here: their runs stay out of the bridge, listed in `dropped`).
  absl::string_view sentence;
  if (pending->request.options.format == RequestedOptions::kPlainText) {
    const Segment range = pending->documents[i]->sentences()[j].range;
    sentence =
        absl::string_view(pending->request.texts[i]).substr(range.begin, range.end - range.begin);
  }
  const absl::Status prepared = [&]() -> absl::Status {
    MT_RETURN_IF_ERROR(StopReason(pending->call->cancelled(), pending->request.deadline,
                                  absl::Now(), "between the legs of a pivot translation"));
    bridge->text =
        MakeBridgeText(bridge->previous, sentence, source->tokenizer(), bridge->from->tokenizer());
    MT_ASSIGN_OR_RETURN(bridge->document, PrepareBridge(bridge->text, bridge->to->tokenizer(),
                                                        MaxInputTokens(slot.config, limits_)));
    return absl::OkStatus();
  }();
  if (!prepared.ok()) {
    SentenceDone(*pending, i, j, prepared);
    return;
  }
  std::vector<SourceSentence>& pieces = bridge->document->sentences();
  bridge->results.resize(pieces.size());
  // The sentence's terms are written on the last leg, into the requested language, by the
  // bridge's first piece (a bridge is one piece unless cut at the model's token limit), each
  // where the legs before translated its source (their alignment, serving/pivot.h).
  if (leg + 1 == chain.size() && !pieces.empty()) {
    pieces.front().terms = BridgeTerms(pending->documents[i]->sentences()[j].terms,
                                       bridge->previous, bridge->from->tokenizer(), bridge->text,
                                       *bridge->document, bridge->to->tokenizer());
  }
  struct Piece {
    size_t index;
    std::optional<std::string> key;
    DecodingOptions options;
    std::shared_ptr<const TermConstraints> constraints;
  };
  std::vector<Piece> misses;
  for (size_t k = 0; k < pieces.size(); ++k) {
    DecodingOptions options = *pending->options[model];
    if (aligned || bridge->document->NeedsAlignment(k)) options.return_alignment = true;
    std::shared_ptr<const TermConstraints> constraints = ConstraintsOf(pieces[k].terms);
    if (constraints != nullptr) options = ConstrainedOptions(options);
    const absl::Status fits = CheckDecodable(static_cast<int>(pieces[k].ids.size()), options,
                                             constraints.get(), slot.config, limits_, name);
    if (!fits.ok()) {
      SentenceDone(*pending, i, j, fits);
      return;
    }
    std::optional<std::string> key = SentenceCacheKey(ModelCacheIdentity(*bridge->to), options,
                                                      pieces[k].ids, constraints.get());
    if (std::optional<TranslationResult> cached = LookUpCache(key)) {
      bridge->results[k] = *std::move(cached);
      continue;
    }
    misses.push_back({k, std::move(key), options, std::move(constraints)});
  }
  if (misses.empty()) {
    FinishLeg(std::move(pending), i, j, leg, std::move(bridge), aligned);
    return;
  }
  bridge->left.store(static_cast<int>(misses.size()));
  auto sentences = std::make_shared<std::vector<Piece>>(std::move(misses));
  QueuedRequest request;
  request.group = pending->api_key;
  request.model_name = slot.name;
  request.texts = static_cast<int>(sentences->size());
  request.deadline = pending->request.deadline;
  request.cancelled = [call = pending->call] { return call->cancelled(); };
  request.make = [this, pending, sentences, bridge, model, i, j, leg, aligned](int n) {
    Piece& piece = (*sentences)[n];
    TranslationTask task =
        TaskFor(*pending, model, std::move(bridge->document->sentences()[piece.index].ids),
                piece.options, std::move(piece.constraints));
    task.done = [this, pending, bridge, i, j, leg, aligned, k = piece.index,
                 key = std::move(piece.key)](absl::StatusOr<TranslationResult> result) {
      if (result.ok()) {
        CacheResult(key, *result);
        bridge->results[k] = *std::move(result);
      } else {
        absl::MutexLock lock(&bridge->mutex);
        if (bridge->status.ok()) bridge->status = result.status();
      }
      if (bridge->left.fetch_sub(1) != 1) return;
      pool_.Run([this, pending, bridge, i, j, leg, aligned] {
        FinishLeg(pending, i, j, leg, bridge, aligned);
      });
    };
    return task;
  };
  absl::Status submitted = pending->serving->scheduler->Submit(std::move(request));
  if (!submitted.ok()) SentenceDone(*pending, i, j, submitted);
}

void TranslationCore::FinishLeg(std::shared_ptr<Pending> pending, int i, size_t j, size_t leg,
                                std::shared_ptr<Bridge> bridge, bool aligned) {
  {
    absl::MutexLock lock(&bridge->mutex);
    if (!bridge->status.ok()) {
      SentenceDone(*pending, i, j, bridge->status);
      return;
    }
  }
  const int model = pending->chains[i][leg];
  const Tokenizer& tokenizer = bridge->to->tokenizer();
  TranslationResult composed =
      ComposeLegs(bridge->previous, bridge->from->tokenizer(), bridge->text, *bridge->document,
                  JoinDocument(*bridge->document, std::move(bridge->results),
                               pending->options[model]->num_hypotheses, tokenizer),
                  tokenizer);
  if (leg + 1 < pending->chains[i].size()) {
    NextLeg(std::move(pending), i, j, leg + 1, std::move(composed), aligned);
    return;
  }
  SentenceDone(*pending, i, j, std::move(composed));
}

void TranslationCore::Admitted(int texts) {
  absl::MutexLock lock(&mutex_);
  waiting_texts_ -= texts;
}

void TranslationCore::Answer(Pending& pending) {
  absl::StatusOr<Reply> answer;
  {
    absl::MutexLock lock(&pending.mutex);
    if (pending.status.ok()) {
      Reply reply;
      // The model named, or the one routed texts went to (those that no model reads have none),
      // or the chain of models of a pivot translation ("fr-en+en-de").
      std::set<std::vector<int>> chains(pending.chains.begin(), pending.chains.end());
      chains.erase(std::vector<int>());
      if (pending.named_model >= 0) {
        reply.model = pending.serving->slots()[pending.named_model].name;
      } else if (chains.size() == 1) {
        reply.model = ChainName(pending.serving->slots(), *chains.begin());
      }
      for (size_t i = 0; i < pending.documents.size(); ++i) {
        if (pending.chains[i].empty()) {
          reply.translations.emplace_back();
          continue;
        }
        const int m = pending.chains[i].front();
        // A pivoted text was read by its chain's first model and written by its last.
        const int last = pending.chains[i].back();
        const DecodingOptions& options = *pending.options[last];
        TextTranslation& joined = reply.translations.emplace_back(
            JoinDocument(*pending.documents[i], std::move(pending.results[i]),
                         options.num_hypotheses, pending.leases.at(m)->model()->tokenizer(),
                         pending.leases.at(last)->model()->tokenizer()));
        if (!options.return_alignment) {
          for (Hypothesis& h : joined.hypotheses) h.alignment.clear();
        }
      }
      reply.routed = std::move(pending.routed);
      answer = std::move(reply);
    } else {
      answer = pending.status;
    }
  }
  Finish(pending, std::move(answer));
}

void TranslationCore::Finish(Pending& pending, absl::StatusOr<Reply> reply) {
  // Its models are no longer held once it is answered (destroyed after `done`, outside the lock).
  std::map<int, std::unique_ptr<ModelRepository::Lease>> leases;
  {
    absl::MutexLock lock(&pending.mutex);
    if (pending.finished) return;
    pending.finished = true;
    leases.swap(pending.leases);
  }
  if (metrics_ != nullptr) {
    metrics_->RecordRequest(pending.request.frontend, pending.model_name, pending.request.method,
                            absl::StatusCodeToString(reply.status().code()),
                            absl::ToDoubleSeconds(absl::Now() - pending.start));
    if (pending.accepted) metrics_->InFlightRequests(pending.model_name).Decrement();
  }
  // Nothing of this core or of `pending` is touched once `done` has answered (see LoadModel).
  DrainGate* const drain = pending.accepted ? drain_ : nullptr;
  pending.done(std::move(reply));
  if (drain != nullptr) drain->Leave();
}

absl::StatusOr<DetectionReply> TranslationCore::Detect(const DetectionRequest& request) {
  const absl::Time start = absl::Now();
  const absl::StatusOr<DetectionReply> reply = [&]() -> absl::StatusOr<DetectionReply> {
    // Who is asking comes first, as for Translate; charged once the request is known valid.
    std::optional<ApiKey> key;
    if (authenticator_ != nullptr) {
      MT_ASSIGN_OR_RETURN(key, authenticator_->Authenticate(request.api_key));
    }
    const LanguageDetector* const detector = detector_.load();
    if (detector == nullptr) {
      return absl::UnimplementedError(
          "language detection is off on this server (its --language_model is empty)");
    }
    MT_ASSIGN_OR_RETURN(const std::shared_ptr<const Serving> serving, CurrentServing());
    const LanguageRoutes* const routes = &serving->routes;
    MT_RETURN_IF_ERROR(CheckTextCount(request.texts.size(), request.texts_field, limits_));
    for (size_t i = 0; i < request.texts.size(); ++i) {
      const std::string field = FieldName(request, i);
      MT_RETURN_IF_ERROR(CheckTextBytes(request.texts[i], field, limits_));
      MT_RETURN_IF_ERROR(CheckUtf8(request.texts[i], field));
    }
    std::vector<std::string> candidates;
    if (!request.all_languages) {
      candidates = routes->SourcesInto(request.target);
      if (candidates.empty() && !request.target.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("target: no model here translates into ",
                                                       Excerpt(request.target),
                                                       "; the pairs served: ", routes->Describe()));
      }
    }
    if (key.has_value()) MT_RETURN_IF_ERROR(authenticator_->Charge(*key, 1, 0));
    const int max_results = request.max_results == 0 ? 5 : static_cast<int>(request.max_results);
    DetectionReply reply;
    for (const std::string& text : request.texts) {
      std::vector<DetectedLanguage>& detected = reply.texts.emplace_back();
      for (const LanguageGuess& guess : detector->Detect(text, candidates, max_results)) {
        detected.push_back({guess.language, 100 * guess.probability});
      }
    }
    return reply;
  }();
  if (metrics_ != nullptr) {
    metrics_->RecordRequest(request.frontend, kNoModel, request.method,
                            absl::StatusCodeToString(reply.status().code()),
                            absl::ToDoubleSeconds(absl::Now() - start));
  }
  return reply;
}

absl::StatusOr<int> TranslationCore::CheckModelCall(const ModelCall& call,
                                                    std::shared_ptr<const Serving>& serving,
                                                    std::string& key_name) const {
  if (authenticator_ == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(call.method,
                     " exists only on a server with API keys (--api_keys_file), for keys with "
                     "admin=true"));
  }
  MT_ASSIGN_OR_RETURN(const ApiKey key, authenticator_->Authenticate(call.api_key));
  key_name = key.name;
  if (!key.admin) {
    return absl::PermissionDeniedError(
        absl::StrCat("the API key \"", key.name, "\" lacks the admin attribute (admin=true in ",
                     "--api_keys_file), which ", call.method, " needs"));
  }
  MT_RETURN_IF_ERROR(authenticator_->Charge(key, 1, 0));
  MT_ASSIGN_OR_RETURN(serving, CurrentServing());
  if (call.model.empty()) {
    return absl::InvalidArgumentError("name: required (a model's name, as ListModels gives it)");
  }
  return FindModel(*serving, call.model);
}

void TranslationCore::EndModelCall(const ModelCall& call, const std::string& model,
                                   const std::string& key_name, absl::Time start,
                                   const absl::Status& status) const {
  // The model's name comes from the request (and errors may quote it): control characters are
  // blanked, so that a line of the log is one call.
  auto one_line = [](std::string text) {
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    return text;
  };
  if (!key_name.empty()) {
    std::fprintf(stderr, "mtserve: %s of model \"%s\" by API key %s: %s\n", call.method.c_str(),
                 one_line(Excerpt(call.model)).c_str(), key_name.c_str(),
                 one_line(status.ToString()).c_str());
  }
  if (metrics_ != nullptr) {
    metrics_->RecordRequest(call.frontend, model, call.method,
                            absl::StatusCodeToString(status.code()),
                            absl::ToDoubleSeconds(absl::Now() - start));
  }
}

void TranslationCore::LoadModel(ModelCall call, ModelCallDone done) {
  const absl::Time start = absl::Now();
  std::shared_ptr<const Serving> serving;
  std::string key_name;
  const absl::StatusOr<int> slot = CheckModelCall(call, serving, key_name);
  if (!slot.ok()) {
    EndModelCall(call, kNoModel, key_name, start, slot.status());
    done(slot.status());
    return;
  }
  // In flight until answered, as a translation is. Nothing of this core is touched once `done`
  // has answered: the caller may then destroy it (the gate outlives it).
  drain_->Enter();
  const absl::Time deadline = call.deadline;
  serving->repository->Load(*slot, deadline,
                            [this, drain = drain_, serving, call = std::move(call), key_name, start,
                             slot = *slot, done = std::move(done)](absl::Status status) {
                              EndModelCall(call, serving->slots()[slot].name, key_name, start,
                                           status);
                              if (status.ok()) {
                                done(slot);
                              } else {
                                done(status);
                              }
                              drain->Leave();
                            });
}

absl::StatusOr<int> TranslationCore::UnloadModel(const ModelCall& call) {
  const absl::Time start = absl::Now();
  std::shared_ptr<const Serving> serving;
  std::string key_name;
  const absl::StatusOr<int> slot = CheckModelCall(call, serving, key_name);
  if (!slot.ok()) {
    EndModelCall(call, kNoModel, key_name, start, slot.status());
    return slot.status();
  }
  const absl::Status status = serving->repository->Unload(*slot);
  EndModelCall(call, serving->slots()[*slot].name, key_name, start, status);
  if (!status.ok()) return status;
  return *slot;
}

}  // namespace mtserve
