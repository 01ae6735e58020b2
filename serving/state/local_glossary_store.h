// The glossary store in the process (glossary_store.h): glossaries in a map under one mutex, by
// their id's selector (serving/state/job_id.h: an id's secret is compared in constant time, so
// that neither a lookup's nor a comparison's timing tells anything of it), and with a directory
// (the server's --glossary_store_dir), each also in a file there that survives a restart.
//
// In a directory, each glossary is `glossary-HEX.json` (HEX: its id's selector), JSON of its id,
// owner, name, languages, creation time and entries, written to `glossary-HEX.tmp` (mode 0600:
// the file holds the id, a capability) then renamed into place, so that a crash leaves the old
// state or the new one. InDirectory reads every such file back (temporary files left by a crash
// are removed); a file that does not read as a glossary fails the start, naming it (rather than
// losing what it held without a word). Only files whose names the store makes are touched.
//
// Thread-safe. Creates and deletes are one at a time (each writes or removes a file outside the
// mutex that Get and List take).
#ifndef MTSERVE_SERVING_STATE_LOCAL_GLOSSARY_STORE_H_
#define MTSERVE_SERVING_STATE_LOCAL_GLOSSARY_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "serving/state/glossary_store.h"

namespace mtserve {

class LocalGlossaryStore : public GlossaryStore {
 public:
  // Glossaries in memory only.
  explicit LocalGlossaryStore(std::function<absl::Time()> now);
  // Glossaries also in files in `directory` (made if missing), those of a previous process read
  // back. FAILED_PRECONDITION naming the directory or the file that cannot be made, listed or
  // read as a glossary. `max_file_bytes` bounds a file read.
  static absl::StatusOr<std::unique_ptr<LocalGlossaryStore>> InDirectory(
      std::string directory, int64_t max_file_bytes, std::function<absl::Time()> now);

  absl::StatusOr<GlossaryInfo> Create(Glossary glossary, int max_per_owner) override;
  std::vector<GlossaryInfo> List(const std::string& owner) const override;
  absl::StatusOr<Glossary> Get(const std::string& owner, const std::string& id) const override;
  absl::Status Delete(const std::string& owner, const std::string& id) override;

 private:
  struct Held {
    std::shared_ptr<const Glossary> glossary;
    std::string secret;
    uint64_t sequence = 0;  // Order of creation (of reading back, by creation time).
  };

  LocalGlossaryStore(std::function<absl::Time()> now, std::string directory);
  // The glossary `id` names if `owner` owns it, or null.
  const Held* FindLocked(const std::string& owner, const std::string& id) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  std::string PathOf(const std::string& selector, bool temporary) const;

  const std::function<absl::Time()> now_;
  const std::string directory_;  // Empty: in memory only.

  absl::Mutex write_mutex_;  // One Create or Delete at a time (a file written or removed).
  mutable absl::Mutex mutex_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::flat_hash_map<std::string, Held> glossaries_ ABSL_GUARDED_BY(mutex_);  // By selector.
};

// The file of a glossary (its JSON), and the glossary of such a file: what InDirectory reads, for
// the store's tests. InvalidArgument naming `what` for bytes that are not one.
std::string GlossaryFileJson(const Glossary& glossary);
absl::StatusOr<Glossary> GlossaryFromJson(absl::string_view json, absl::string_view what);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_LOCAL_GLOSSARY_STORE_H_
