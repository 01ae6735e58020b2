// The mtserve.v1.Translator gRPC service: a thin front end over the TranslationCore, on the
// callback (reactor) API, no thread per request (a file call, a job, has one while it follows
// its job: translate_file_reactor.h). It maps messages to core requests and results and statuses
// back. Translate, TranslateStream, Detect and TranslateFile take their messages as raw bytes and
// parse them here, so that a message that does not parse gets INVALID_ARGUMENT saying so (gRPC's
// own parsing answered UNIMPLEMENTED without a word, and ended a stream with OK) and is counted.
#ifndef MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_
#define MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "frontends/grpc/grpc_calls.h"
#include "frontends/grpc/translate_file_reactor.h"
#include "grpcpp/support/byte_buffer.h"
#include "mtserve/v1/translation.grpc.pb.h"
#include "serving/drain_gate.h"
#include "serving/file_jobs.h"
#include "serving/glossaries.h"
#include "serving/translation_core.h"

namespace mtserve {

class TranslateStreamReactor;

using TranslatorService = v1::Translator::WithRawCallbackMethod_Translate<
    v1::Translator::WithRawCallbackMethod_TranslateStream<
        v1::Translator::WithCallbackMethod_ListModels<v1::Translator::WithRawCallbackMethod_Detect<
            v1::Translator::WithCallbackMethod_LoadModel<
                v1::Translator::WithCallbackMethod_UnloadModel<
                    v1::Translator::WithRawCallbackMethod_TranslateFile<
                        v1::Translator::WithRawCallbackMethod_CreateGlossary<
                            v1::Translator::WithCallbackMethod_ListGlossaries<
                                v1::Translator::WithCallbackMethod_GetGlossary<
                                    v1::Translator::WithCallbackMethod_DeleteGlossary<
                                        v1::Translator::Service>>>>>>>>>>>;

class TranslationService final : public TranslatorService {
 public:
  // Every call is counted in flight in `drain` until it is done; once `drain` drains, new streams
  // and ListModels get UNAVAILABLE (and Translate, from the core, which drains with the same
  // gate). TranslateFile makes its jobs in `file_jobs`. `core`, `drain` and `file_jobs` outlive
  // the service.
  // At most `max_file_calls` TranslateFile calls at once (--grpc_max_file_calls). The glossary
  // calls use `glossaries` (outlives the service; null: they are UNIMPLEMENTED).
  TranslationService(TranslationCore* core, DrainGate* drain, FileJobs* file_jobs,
                     int max_file_calls, Glossaries* glossaries = nullptr);
  // Waits for the TranslateFile calls' threads to end (their calls are done: gRPC's server is
  // gone).
  ~TranslationService() override;

  // Open streams read no more texts and end, with UNAVAILABLE, once those they read are
  // answered. Call once `drain` drains.
  void EndStreams();

  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TranslateStream(
      grpc::CallbackServerContext* context) override;
  // A file in, its job's progress and the translated file out
  // (frontends/grpc/translate_file_reactor.h).
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TranslateFile(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  // Answered at once, on gRPC's thread (a detection reads at most 4 KiB of each text).
  grpc::ServerUnaryReactor* Detect(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  // The operators' calls (TranslationCore::LoadModel, UnloadModel). A load is answered once it
  // ends, on the repository's loader thread, never blocking gRPC's.
  grpc::ServerUnaryReactor* LoadModel(grpc::CallbackServerContext* context,
                                      const v1::LoadModelRequest* request,
                                      v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* UnloadModel(grpc::CallbackServerContext* context,
                                        const v1::UnloadModelRequest* request,
                                        v1::ModelInfo* response) override;
  // Stored glossaries (serving/glossaries.h), answered at once on gRPC's thread. CreateGlossary
  // takes its message as raw bytes, bounded by GlossaryValueBounds before it is parsed.
  grpc::ServerUnaryReactor* CreateGlossary(grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListGlossaries(grpc::CallbackServerContext* context,
                                           const v1::ListGlossariesRequest* request,
                                           v1::ListGlossariesResponse* response) override;
  grpc::ServerUnaryReactor* GetGlossary(grpc::CallbackServerContext* context,
                                        const v1::GetGlossaryRequest* request,
                                        v1::Glossary* response) override;
  grpc::ServerUnaryReactor* DeleteGlossary(grpc::CallbackServerContext* context,
                                           const v1::DeleteGlossaryRequest* request,
                                           v1::DeleteGlossaryResponse* response) override;

 private:
  friend class TranslateReactor;
  friend class TranslateStreamReactor;

  // Whether a glossary call may run: UNIMPLEMENTED without glossaries, UNAVAILABLE while
  // draining (then `reactor` is finished).
  bool GlossaryCallAllowed(grpc::ServerUnaryReactor* reactor) const;
  // Registers an open stream for EndStreams; false (not registered) while draining.
  bool StreamStarted(TranslateStreamReactor* stream);
  void StreamEnded(TranslateStreamReactor* stream);

  TranslationCore* const core_;
  DrainGate* const drain_;
  FileJobs* const file_jobs_;
  Glossaries* const glossaries_;
  FileCallThreads file_call_threads_;

  absl::Mutex mutex_;
  std::set<TranslateStreamReactor*> streams_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_GRPC_TRANSLATION_SERVICE_H_
