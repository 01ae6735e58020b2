// The mtserve.v1.Translator gRPC service: a thin front end over the TranslationCore, on the
// callback (reactor) API, no thread per request. It maps messages to core requests and results
// and statuses back. Translate and TranslateStream take their messages as raw bytes and parse
// them here, so that a message that does not parse gets INVALID_ARGUMENT saying so (gRPC's own
// parsing answered UNIMPLEMENTED without a word, and ended a stream with OK) and is counted.
#ifndef MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_
#define MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/byte_buffer.h"
#include "mtserve/v1/translation.grpc.pb.h"
#include "serving/translation_core.h"

namespace mtserve {

class TranslateStreamReactor;

using TranslatorService = v1::Translator::WithRawCallbackMethod_Translate<
    v1::Translator::WithRawCallbackMethod_TranslateStream<
        v1::Translator::WithCallbackMethod_ListModels<v1::Translator::Service>>>;

class TranslationService final : public TranslatorService {
 public:
  explicit TranslationService(TranslationCore* core);

  // New streams get UNAVAILABLE from now on (the core refuses new requests once it drains too);
  // open streams read no more texts and end, with UNAVAILABLE, once those they read are answered.
  void StartDraining();
  // Waits until no call is in flight or `deadline` passes; true if none is left.
  bool WaitUntilIdle(absl::Time deadline);

  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TranslateStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;

 private:
  friend class TranslateReactor;
  friend class TranslateStreamReactor;

  void CallStarted();
  void CallEnded();
  // Registers an open stream for draining; false (not registered) while draining.
  bool StreamStarted(TranslateStreamReactor* stream);
  void StreamEnded(TranslateStreamReactor* stream);

  TranslationCore* const core_;

  absl::Mutex mutex_;
  int calls_ ABSL_GUARDED_BY(mutex_) = 0;
  bool draining_ ABSL_GUARDED_BY(mutex_) = false;
  std::set<TranslateStreamReactor*> streams_ ABSL_GUARDED_BY(mutex_);
};

// A gRPC status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_
