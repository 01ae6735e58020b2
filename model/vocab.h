// vocab.json of a Marian checkpoint: the joint piece → id table shared by source and target.
#ifndef MTSERVE_MODEL_VOCAB_H_
#define MTSERVE_MODEL_VOCAB_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtserve {

class Vocab {
 public:
  // Errors (naming the file) for a missing file, invalid JSON, a non-integer or negative id, or
  // two pieces with one id.
  static absl::StatusOr<Vocab> Load(const std::string& path);
  // The same from the file's bytes `text` (errors name `path`): what Load runs on what it read.
  static absl::StatusOr<Vocab> Parse(absl::string_view text, const std::string& path);

  int size() const { return static_cast<int>(pieces_.size()); }  // Largest id + 1.
  std::optional<int> Find(absl::string_view piece) const;
  // The piece of `id`, or an empty string for an id with no piece.
  const std::string& Piece(int id) const;

 private:
  absl::flat_hash_map<std::string, int> ids_;
  std::vector<std::string> pieces_;
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_VOCAB_H_
