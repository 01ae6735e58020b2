// The transport-neutral serving core: what every front end calls (gRPC, HTTP). It owns
// the served models, checks requests (request_limits.h: every limit in one place), tokenises them
// on its own threads, hands their texts to the BatchScheduler, gathers the results, and counts
// requests in the metrics. A front end maps its messages to a Request, calls Translate, and maps
// the Reply or the absl::Status (the code is the gRPC one; the message names the field and the
// limit) back.
#ifndef MTSERVE_SERVING_TRANSLATION_CORE_H_
#define MTSERVE_SERVING_TRANSLATION_CORE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/task_pool.h"
#include "model/model.h"
#include "model/translator.h"
#include "serving/auth/api_key_auth.h"
#include "serving/batch_scheduler.h"
#include "serving/drain_gate.h"
#include "serving/glossaries.h"
#include "serving/language_routes.h"
#include "serving/metrics.h"
#include "serving/repository/cold_load_limit.h"
#include "serving/repository/model_repository.h"
#include "serving/request_limits.h"
#include "serving/state/sentence_cache.h"
#include "serving/translation_request.h"
#include "text/language_detector.h"
#include "text/sentence_splitter.h"
#include "text/text_translation.h"

namespace mtserve {

struct ServedModel {
  std::string name;
  std::shared_ptr<const Model> model;
  // Its source language's sentence rules; StartServing makes it.
  std::shared_ptr<const SentenceSplitter> splitter;
};

class TranslationCore {
 public:
  // What a front end hands the core and gets back (translation_request.h).
  using Request = TranslationRequest;
  using Reply = TranslationReply;

  // Runs exactly once per Translate call, on a core or worker thread (or, for a request refused
  // at once, on the calling thread), with every text's translation or the first error.
  using Done = std::function<void(absl::StatusOr<Reply>)>;

  // A request in progress, made by the front end (it may cancel before Translate returns).
  class Call {
   public:
    // Stops the request: texts not yet decoding never are, the others leave their decodes at the
    // next step, and Done gets CANCELLED (or DEADLINE_EXCEEDED close to the deadline).
    void Cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load(); }

    // Told the request's progress: `done` of its `total` sentences (of all its texts) have
    // finished. Set before Translate (else never called). Called first once its texts are taken
    // apart (those answered from the cache done), then as each sentence finishes, ending at
    // done == total before Done runs; one call at a time, in order, on the core's or the workers'
    // threads under the request's lock: it must be quick and must not call the core.
    using Progress = std::function<void(int64_t done, int64_t total)>;
    void OnProgress(Progress progress) { progress_ = std::move(progress); }
    const Progress& progress() const { return progress_; }

   private:
    std::atomic<bool> cancelled_ = false;
    Progress progress_;
  };

  // `max_queued_texts` bounds the texts accepted whose sentences are not all admitted to the
  // scheduler's queue yet (being split and tokenised, or waiting for their turn); the scheduler's
  // queue has the same bound, in sentences. `cache_bytes` bounds the sentence cache (0: none).
  // Requests get UNAVAILABLE once `drain` drains, and each request accepted is counted in flight
  // in it until its Done has run; `drain` outlives the core.
  TranslationCore(const RequestLimits& limits, int max_queued_texts, int64_t cache_bytes,
                  Metrics* metrics, DrainGate* drain);
  ~TranslationCore();

  // From now on every request needs a key of `authenticator` and is charged to it (call before
  // serving; it outlives the core).
  void RequireApiKeys(ApiKeyAuthenticator* authenticator) { authenticator_ = authenticator; }
  bool requires_api_keys() const { return authenticator_ != nullptr; }
  // For calls that are not a Request (ListModels, a stream's start): OK when no keys are
  // required; else UNAUTHENTICATED unless `presented` is a key of the file, and with
  // `charge_request`, RESOURCE_EXHAUSTED when one more request is over its limit.
  absl::Status CheckApiKey(const std::optional<std::string>& presented, bool charge_request) const;
  // The name of the key `presented` ("" when no keys are required), charging nothing:
  // UNAUTHENTICATED as CheckApiKey.
  absl::StatusOr<std::string> ApiKeyName(const std::optional<std::string>& presented) const;
  // What the key `presented` has used of its characters today and its daily limit, charging
  // nothing (none used and no limit when no keys are required): UNAUTHENTICATED as CheckApiKey.
  absl::StatusOr<CharacterUsage> ApiKeyCharacters(const std::optional<std::string>& presented) const;

  // Stored glossaries, which requests name by glossary_id (call before serving; they outlive the
  // core). Without them a glossary_id is refused as not found.
  void UseGlossaries(const Glossaries* glossaries) { glossaries_ = glossaries; }

  // Language detection with `detector` (before StartServing, while Detect answers UNAVAILABLE;
  // it outlives the core). Without one, Detect answers UNIMPLEMENTED.
  void UseLanguageDetector(const LanguageDetector* detector) { detector_.store(detector); }

  // Of the shortest chains of models that translate a pair no model serves (pivot translation:
  // LanguageRoutes::Route), those through `language` first (call before StartServing; default
  // LanguageRoutes::kDefaultPivot).
  void UsePivotLanguage(std::string language) { pivot_language_ = std::move(language); }

  // The languages of `request`'s texts, ranked, at once (a detection reads at most 4 KiB of a
  // text, in tens of microseconds): errors as Translate's (the key, the texts' count, bytes and
  // UTF-8, a target no model translates into), UNAVAILABLE while loading or draining. Charged as
  // one request and no characters.
  absl::StatusOr<DetectionReply> Detect(const DetectionRequest& request);

  // Until this is called requests get UNAVAILABLE (models loading). Serves `repository`'s models
  // (it outlives the core), loading each when a request first needs it: the first is the
  // default. `scheduler` was made for the same slots, its engines finding each slot's model in
  // the repository. Each model's texts are split into sentences by the rules of its source
  // language (root rules when it has none ICU knows).
  void StartServing(ModelRepository* repository, BatchScheduler* scheduler);
  // The same for models already loaded (a repository of them, without a budget, owned by the
  // core), `scheduler` made with the same models in the same order.
  void StartServing(std::vector<ServedModel> models, BatchScheduler* scheduler);

  // Translates `request`; `call` cancels it. Its format must be a TextFormat value, and an office
  // document's (a binary file) only for a file (Request::file), which is not held to UTF-8 and
  // whose language "auto" does not detect; each text's document gets the language its chain's
  // last model writes (SentenceRules::target_language).
  void Translate(Request request, std::shared_ptr<Call> call, Done done);

  // An operator's call on one model (LoadModel, UnloadModel).
  struct ModelCall {
    std::string model;                             // Its name; required.
    std::optional<std::string> api_key;            // As presented (PresentedApiKey).
    absl::Time deadline = absl::InfiniteFuture();  // LoadModel's.
    Frontend frontend = Frontend::kGrpc;           // The metrics' labels.
    std::string method;
  };
  // The slot of the model called (its state is then the repository's to tell), or the error.
  using ModelCallDone = std::function<void(absl::StatusOr<int> slot)>;

  // The operators' calls exist only with API keys (RequireApiKeys): without them, UNIMPLEMENTED.
  // Then UNAUTHENTICATED for no key or one the file does not have; PERMISSION_DENIED for a key
  // without the admin attribute (naming the key's name); RESOURCE_EXHAUSTED over the key's
  // requests_per_minute (charged as one request); UNAVAILABLE while loading or draining;
  // INVALID_ARGUMENT without a model's name; NOT_FOUND naming a model not served. Each call that
  // passes the key's checks is logged with the key's name and its outcome, and counted in the
  // request metrics under `method`.
  //
  // LoadModel loads the model as a request's load does (idle models unloaded, least recently used
  // first, to make room) by `deadline` (DEADLINE_EXCEEDED after; the load goes on): the load's
  // error, or UNAVAILABLE naming --model_memory at once when the models in use leave no room.
  // `done` runs once, on this thread or the repository's loader thread.
  void LoadModel(ModelCall call, ModelCallDone done);
  // UnloadModel unloads the model at once, or once the requests holding it end (ModelRepository::
  // Unload; FAILED_PRECONDITION while it loads). A request for it later loads it again.
  absl::StatusOr<int> UnloadModel(const ModelCall& call);

  // Counts a request that a front end refused before it could become a Request (a message that
  // does not parse, say).
  void RecordRefused(Frontend frontend, const std::string& method, const absl::Status& status);

  // The repository's models have changed (ModelRepository::Add, Retire; the scheduler was told
  // of the slots added): requests from now on see them. Requests under way finish with the
  // models they started with.
  void Refresh();

  // The repository of the served models, with their states (null while loading).
  const ModelRepository* repository() const;
  // The models served now, the default first (null while loading).
  std::shared_ptr<const ModelRepository::Catalog> models() const;
  // How texts are routed by language (null while loading).
  std::shared_ptr<const LanguageRoutes> routes() const;
  const RequestLimits& limits() const { return limits_; }

 private:
  struct Serving;
  struct Pending;
  struct Bridge;

  // What is served, or UNAVAILABLE while loading or draining.
  absl::StatusOr<std::shared_ptr<const Serving>> CurrentServing() const;
  void Serve(ModelRepository* repository,
             std::vector<std::shared_ptr<const SentenceSplitter>> splitters,
             BatchScheduler* scheduler);
  // The slot of model `name` (empty: the default): NOT_FOUND if not served.
  static absl::StatusOr<int> FindModel(const Serving& serving, const std::string& name);
  // The checks of an operator's call (LoadModel): its model's slot, with what is served and the
  // key's name.
  absl::StatusOr<int> CheckModelCall(const ModelCall& call, std::shared_ptr<const Serving>& serving,
                                     std::string& key_name) const;
  // Logs (when the key is known) and counts an operator's call on `model` (the metrics' label)
  // that ended with `status`.
  void EndModelCall(const ModelCall& call, const std::string& model, const std::string& key_name,
                    absl::Time start, const absl::Status& status) const;
  // Holds the models `pending`'s texts need (loading them if they are not), then starts it.
  void Acquire(std::shared_ptr<Pending> pending);
  // The served model of each text of `pending` (by name, or by languages: routing and detection),
  // or why the request is refused.
  absl::Status ChooseModels(Pending& pending) const;
  // Splits and tokenises the texts of `pending` and hands them to the scheduler as one request,
  // a task per sentence, made as the scheduler's queue admits them (on the pool's threads).
  void Start(std::shared_ptr<Pending> pending);
  // Sentence `sentence` of text `text` of `pending` is translated (through every model of its
  // chain), or failed: answers `pending` if it was the last.
  // The task decoding `source_ids` with `model` and `options` for `pending`, writing the terms
  // `constraints` (null: none).
  static TranslationTask TaskFor(const Pending& pending, int model, std::vector<int> source_ids,
                                 const DecodingOptions& options,
                                 std::shared_ptr<const TermConstraints> constraints);
  // The cached translation under `key` (none without a key), counted in the metrics.
  std::optional<TranslationResult> LookUpCache(const std::optional<std::string>& key);
  // Caches `result` under `key` (if any, and if it has hypotheses).
  void CacheResult(const std::optional<std::string>& key, const TranslationResult& result);
  void SentenceDone(Pending& pending, int text, size_t sentence,
                    absl::StatusOr<TranslationResult> result);
  // A sentence of a pivoted text (its chain has several models) through leg `leg` (>= 1) of its
  // chain, from `previous`, the legs before's result (serving/pivot.h): its bridge text tokenised
  // for the leg's model, decoded (or found in the cache) piece by piece, then joined and composed
  // with `previous`; then the next leg, or SentenceDone. `aligned`: whether the sentence needs the
  // decoder's alignment (then every leg is decoded with it).
  void NextLeg(std::shared_ptr<Pending> pending, int text, size_t sentence, size_t leg,
               TranslationResult previous, bool aligned);
  void FinishLeg(std::shared_ptr<Pending> pending, int text, size_t sentence, size_t leg,
                 std::shared_ptr<Bridge> bridge, bool aligned);
  // Answers `pending` from its sentences' results once the last has finished.
  void Answer(Pending& pending);
  // Answers `pending` once, with `reply` or its error.
  void Finish(Pending& pending, absl::StatusOr<Reply> reply);
  // `texts` accepted texts have all their sentences admitted to the scheduler, or never will.
  void Admitted(int texts);

  const RequestLimits limits_;
  const int max_queued_texts_;
  Metrics* const metrics_;
  DrainGate* const drain_;
  ApiKeyAuthenticator* authenticator_ = nullptr;
  const Glossaries* glossaries_ = nullptr;
  std::atomic<const LanguageDetector*> detector_ = nullptr;
  std::string pivot_language_ = LanguageRoutes::kDefaultPivot;
  // In the process today (LocalSentenceCache); a store shared by replicas later.
  std::unique_ptr<SentenceCache> cache_;

  // The repository StartServing made of loaded models.
  std::unique_ptr<ModelRepository> owned_repository_;

  mutable absl::Mutex mutex_;
  std::shared_ptr<const Serving> serving_ ABSL_GUARDED_BY(mutex_);  // Null while loading.
  // Models each caller had loaded lately (limits_.max_cold_loads_per_minute).
  ColdLoadLimit cold_loads_ ABSL_GUARDED_BY(mutex_);
  // Texts accepted whose sentences are not all admitted to the scheduler's queue.
  int waiting_texts_ ABSL_GUARDED_BY(mutex_) = 0;

  // Last: its threads run tasks that use the members above, and stop first.
  TaskPool pool_;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_TRANSLATION_CORE_H_
