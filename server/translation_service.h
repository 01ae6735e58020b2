// The mtserve.v1.Translator gRPC service on the callback (reactor) API: no thread per request.
// It validates and tokenises requests, hands their texts to the BatchScheduler, and answers from
// the workers' completion callbacks. All translation work lives in the scheduler and the engine.
#ifndef MTSERVE_SERVER_TRANSLATION_SERVICE_H_
#define MTSERVE_SERVER_TRANSLATION_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/model.h"
#include "mtserve/v1/translation.grpc.pb.h"
#include "server/batch_scheduler.h"
#include "server/metrics.h"
#include "server/request_limits.h"

namespace mtserve {

struct ServedModel {
  std::string name;
  std::shared_ptr<const Model> model;
};

class TranslationService final : public v1::Translator::CallbackService {
 public:
  TranslationService(const RequestLimits& limits, Metrics* metrics);

  // Until this is called requests get UNAVAILABLE (models loading). The first model is the
  // default. `scheduler` was made with the same models, in the same order.
  void StartServing(std::vector<ServedModel> models, BatchScheduler* scheduler);
  // New requests get UNAVAILABLE from now on; those in flight go on.
  void StartDraining();
  // Waits until no request is in flight or `deadline` passes; true if none is left.
  bool WaitUntilIdle(absl::Time deadline);

  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const v1::TranslateRequest* request,
                                      v1::TranslateResponse* response) override;
  grpc::ServerBidiReactor<v1::TranslateStreamRequest, v1::TranslateStreamResponse>* TranslateStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;

 private:
  friend class TranslateReactor;
  friend class TranslateStreamReactor;

  // The model index for `name` (empty: the default): NOT_FOUND if not served, UNAVAILABLE while
  // loading or draining.
  absl::StatusOr<int> FindModel(const std::string& name) const;
  const ServedModel& model(int index) const;

  // Texts with the same options for one model, ready for the scheduler: validates the options
  // and encodes the texts. Empty texts are not included; `positions` says where each task's
  // text was in `texts`.
  absl::StatusOr<std::vector<TranslationTask>> MakeTasks(
      int model_index, const v1::DecodingOptions& options,
      const std::vector<const std::string*>& texts, const std::string& field,
      std::vector<int>& positions) const;
  absl::Status Submit(std::vector<TranslationTask> tasks);

  // Calls in flight, for draining.
  void CallStarted();
  void CallEnded();
  // The per-model in-flight gauge: requests (or streamed texts) being answered.
  void TrackInFlight(const std::string& model, int change);
  // Counts a finished request (or streamed text) in the metrics.
  void Record(const std::string& model, const std::string& method, const absl::Status& status,
              absl::Time start);

  const RequestLimits limits_;
  Metrics* const metrics_;

  mutable absl::Mutex mutex_;
  std::vector<ServedModel> models_ ABSL_GUARDED_BY(mutex_);
  BatchScheduler* scheduler_ ABSL_GUARDED_BY(mutex_) = nullptr;
  bool draining_ ABSL_GUARDED_BY(mutex_) = false;
  int in_flight_ ABSL_GUARDED_BY(mutex_) = 0;
};

// A gRPC status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The result as the API returns it.
void FillTranslation(const TranslationResult& result, bool with_scores, int eos_id,
                     v1::Translation& translation);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_TRANSLATION_SERVICE_H_
