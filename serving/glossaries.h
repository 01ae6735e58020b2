// Every glossary a caller may use, and the one place they are managed: those created through the
// APIs (a GlossaryStore, serving/state/glossary_store.h), each owned by the API key that made it,
// and those of the server's directory of read-only glossary files (--glossary_dir: DeepL's TSV or
// CSV entries, text/glossary_file.h, re-read when they change and on SIGHUP), which every caller
// may use. With API keys off, every glossary is everyone's. Front ends (the native API, DeepL's
// glossary routes) call these with the key the call presented; the serving core resolves a
// request's glossary_id through Get.
//
// Thread-safe.
#ifndef MTSERVE_SERVING_GLOSSARIES_H_
#define MTSERVE_SERVING_GLOSSARIES_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/file_reloader.h"
#include "serving/auth/api_key_auth.h"
#include "serving/state/glossary_store.h"
#include "text/terminology.h"

namespace mtserve {

struct GlossaryLimits {
  int max_entries = 10000;           // Entries per glossary (--max_glossary_entries).
  int max_glossaries_per_key = 100;  // (--max_glossaries_per_key).
  TerminologyLimits terms;           // Each entry's bounds (its max_entries is ignored here).
};

class Glossaries {
 public:
  // `store` and `auth` (null when keys are off) outlive this. `pair_served(source, target)`
  // says whether some model (or chain of models) translates `source` into `target`: a glossary of
  // a pair nobody translates is refused. `files_dir` ("" for none) is read now: an unreadable
  // directory or a malformed file fails the start, naming the file and line. The directory is
  // checked for changes every `poll_interval` (the server's --reload_interval; infinite: only
  // Reload). Its files are not checked against the pairs served (models come and go with
  // --model_dir): a glossary of a pair nobody translates is simply never used.
  static absl::StatusOr<std::unique_ptr<Glossaries>> Start(
      GlossaryStore* store, const ApiKeyAuthenticator* auth, GlossaryLimits limits,
      std::function<bool(const std::string&, const std::string&)> pair_served,
      std::string files_dir, absl::Duration poll_interval = absl::Seconds(10));

  // Each authenticates `api_key` first (UNAUTHENTICATED / PERMISSION_DENIED as translations are).
  // Create validates the entries (ValidateTerminology with the limits: INVALID_ARGUMENT naming the
  // entry and the limit) and the pair.
  absl::StatusOr<GlossaryInfo> Create(const std::optional<std::string>& api_key, Glossary glossary);
  absl::StatusOr<std::vector<GlossaryInfo>> List(const std::optional<std::string>& api_key) const;
  absl::StatusOr<Glossary> Get(const std::optional<std::string>& api_key,
                               const std::string& id) const;
  absl::Status Delete(const std::optional<std::string>& api_key, const std::string& id);
  // Re-reads the files directory (SIGHUP); on error the glossaries read before stay.
  absl::Status Reload();

  const GlossaryLimits& limits() const { return limits_; }

 private:
  using Served = std::function<bool(const std::string&, const std::string&)>;
  // The files' glossaries, by id.
  using Files = std::map<std::string, std::shared_ptr<const Glossary>>;

  Glossaries(GlossaryStore* store, const ApiKeyAuthenticator* auth, GlossaryLimits limits,
             Served pair_served)
      : store_(store), auth_(auth), limits_(limits), pair_served_(std::move(pair_served)) {}
  // The owner a call's key makes: its name, or "" with keys off.
  absl::StatusOr<std::string> Owner(const std::optional<std::string>& api_key) const;
  // Reads the files `paths` (of the directory, with their `contents`) in place of those before.
  absl::Status ApplyFiles(const std::vector<std::string>& paths,
                          const std::vector<std::string>& contents);
  std::shared_ptr<const Files> files() const;

  GlossaryStore* const store_;
  const ApiKeyAuthenticator* const auth_;
  const GlossaryLimits limits_;
  const Served pair_served_;
  mutable absl::Mutex mutex_;
  std::shared_ptr<const Files> files_ ABSL_GUARDED_BY(mutex_) = std::make_shared<const Files>();
  std::unique_ptr<FileReloader> reloader_;  // None without a files directory.
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_GLOSSARIES_H_
