// TranslateFile, the gRPC front end of the file jobs (serving/file_jobs.h): the client's header,
// then its file's bytes in chunks, are read on gRPC's callback threads (never more than
// --max_file_bytes of them kept); once the client closes its side the file is submitted as a job
// and the call's own thread follows it (FileJobs::WaitForChange blocks, so never on gRPC's
// threads), writing the job as it progresses, then the translated file in chunks, one write at
// a time. Cancelling the call, or its deadline passing, cancels the job; the job is deleted when
// the call ends, whichever way.
#ifndef MTSERVE_FRONTENDS_GRPC_TRANSLATE_FILE_REACTOR_H_
#define MTSERVE_FRONTENDS_GRPC_TRANSLATE_FILE_REACTOR_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "serving/drain_gate.h"
#include "serving/file_jobs.h"
#include "serving/translation_core.h"

namespace mtserve {

// Counts the calls, to bound them (each holds up to --max_file_bytes while its file arrives), and
// the threads of those that follow their jobs, so that their owner can wait for them to end
// before what they use goes.
class FileCallThreads {
 public:
  explicit FileCallThreads(int max_calls) : max_calls_(max_calls) {}

  // A call begins, unless `max_calls` are under way (then false); EndCall when it is done.
  bool BeginCall();
  void EndCall();
  int max_calls() const { return max_calls_; }

  void Add();
  void Done();
  void WaitUntilNone();

 private:
  absl::Mutex mutex_;
  const int max_calls_;
  int calls_ ABSL_GUARDED_BY(mutex_) = 0;
  int running_ ABSL_GUARDED_BY(mutex_) = 0;
};

// What a TranslateFile call uses; all outlive it (`threads` outlives its thread).
struct FileCallParts {
  TranslationCore* core = nullptr;  // For the API key's check, the limits and the metrics.
  DrainGate* drain = nullptr;       // The call is in flight in it until it is done.
  FileJobs* jobs = nullptr;
  FileCallThreads* threads = nullptr;
};

// The reactor of one TranslateFile call (it deletes itself when the call is done).
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewTranslateFileReactor(
    const FileCallParts& parts, grpc::CallbackServerContext* context);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_GRPC_TRANSLATE_FILE_REACTOR_H_
