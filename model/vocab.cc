#include "model/vocab.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"

namespace mtserve {

absl::StatusOr<Vocab> Vocab::Load(const std::string& path) {
  // The largest OPUS-MT vocabularies (about 250k pieces) take a few megabytes.
  constexpr size_t kMaxBytes = 256 << 20;
  MT_ASSIGN_OR_RETURN(const std::string text, ReadRegularFile(path, kMaxBytes));
  return Parse(text, path);
}

absl::StatusOr<Vocab> Vocab::Parse(absl::string_view text, const std::string& path) {
  MT_ASSIGN_OR_RETURN(const nlohmann::json json, ParseJson(text, path));
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": expected a JSON object mapping pieces to ids, got ", DescribeJson(json)));
  }

  // Ids index a table, so a stray huge id would allocate gigabytes; real vocabularies stay far
  // below this (the largest OPUS-MT ones have ~250k pieces).
  constexpr int64_t kMaxId = int64_t{1} << 24;
  std::vector<std::pair<const std::string*, int>> entries;
  entries.reserve(json.size());
  int max_id = -1;
  for (auto it = json.cbegin(); it != json.cend(); ++it) {
    // The key is a reference into `json`, which outlives `entries`.
    const std::string& piece = it.key();
    const nlohmann::json& value = it.value();
    // Floats such as 3.0 are rejected too: HF writes ids as integers, so anything else means the
    // file is not a vocabulary.
    if (!value.is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": id of piece '", Excerpt(piece),
                                                     "' is not an integer: ", DescribeJson(value)));
    }
    const bool in_range = value.is_number_unsigned()
                              ? value.get<uint64_t>() < kMaxId
                              : (value.get<int64_t>() >= 0 && value.get<int64_t>() < kMaxId);
    if (!in_range) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": id of piece '", Excerpt(piece),
                                                     "' is negative or too large: ", value.dump()));
    }
    const int id = value.get<int>();
    entries.emplace_back(&piece, id);
    max_id = std::max(max_id, id);
  }

  Vocab vocab;
  vocab.ids_.reserve(entries.size());
  // size() is largest id + 1 even when ids have gaps; the gaps have empty pieces.
  vocab.pieces_.resize(static_cast<size_t>(max_id + 1));
  std::vector<bool> seen(vocab.pieces_.size(), false);
  for (const auto& [piece, id] : entries) {
    if (seen[id]) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": id ", id, " is used by both '",
                                                     Excerpt(vocab.pieces_[id]), "' and '",
                                                     Excerpt(*piece), "'"));
    }
    seen[id] = true;
    vocab.pieces_[id] = *piece;
    vocab.ids_.emplace(*piece, id);
  }
  return vocab;
}

std::optional<int> Vocab::Find(absl::string_view piece) const {
  auto it = ids_.find(piece);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string& Vocab::Piece(int id) const {
  static const std::string* const kEmpty = new std::string();
  if (id < 0 || id >= size()) return *kEmpty;
  return pieces_[id];
}

}  // namespace mtserve
