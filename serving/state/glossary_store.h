// The glossary store's interface: glossaries created through the APIs (DeepL's glossary routes,
// the native API), each owned by the API key that made it ("" when keys are off: then every
// glossary is everyone's), found by an unguessable id (serving/state/job_id.h's ids). A
// glossary is immutable once made: changing one is deleting it and making another, as in DeepL's
// API. LocalGlossaryStore keeps them in the process and, with a directory, in files there that
// survive a restart; a store shared by replicas implements the same interface.
//
// Glossaries read from the server's directory of read-only files (serving/glossary_files.h) are
// not in a store: serving/glossaries.h puts both together.
//
// Implementations are thread-safe.
#ifndef MTSERVE_SERVING_STATE_GLOSSARY_STORE_H_
#define MTSERVE_SERVING_STATE_GLOSSARY_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "text/terminology.h"

namespace mtserve {

// What a glossary is, without its entries.
struct GlossaryInfo {
  std::string id;
  std::string name;
  std::string source_language;  // The models' codes ("en", "de").
  std::string target_language;
  int64_t entry_count = 0;
  absl::Time created;
  std::string owner;       // The API key's name; "" for a glossary everyone may use.
  bool read_only = false;  // From the server's directory of glossary files: never deleted here.
};

struct Glossary {
  GlossaryInfo info;
  std::vector<GlossaryEntry> entries;  // Each source once, in the order given.
};

class GlossaryStore {
 public:
  virtual ~GlossaryStore() = default;

  // Stores `glossary` (its info's id and created are set here) and returns its info.
  // RESOURCE_EXHAUSTED if its owner already has `max_per_owner` glossaries (naming the limit);
  // UNAVAILABLE if it cannot be kept (the directory cannot be written).
  virtual absl::StatusOr<GlossaryInfo> Create(Glossary glossary, int max_per_owner) = 0;
  // The glossaries of `owner`, oldest first.
  virtual std::vector<GlossaryInfo> List(const std::string& owner) const = 0;
  // The glossary `id` if `owner` owns it; NOT_FOUND otherwise (whether or not another owner has
  // one of that id: an id is a capability only for its owner).
  virtual absl::StatusOr<Glossary> Get(const std::string& owner, const std::string& id) const = 0;
  // Deletes it; NOT_FOUND as Get.
  virtual absl::Status Delete(const std::string& owner, const std::string& id) = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STATE_GLOSSARY_STORE_H_
