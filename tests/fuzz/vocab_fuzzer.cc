// vocab.json's bytes through Vocab::Parse, what Vocab::Load runs on the file: any bytes give a
// vocabulary whose ids and pieces agree, or an InvalidArgument.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "model/vocab.h"
#include "tests/test_lib/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<mtserve::Vocab> vocab = mtserve::Vocab::Parse(
      absl::string_view(reinterpret_cast<const char*>(data), size), "vocab.json");
  if (!vocab.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(vocab.status()));
    return 0;
  }
  FUZZ_CHECK(vocab->size() <= (1 << 24));
  for (int id = 0; id < vocab->size(); ++id) {
    const std::string& piece = vocab->Piece(id);
    // An id without a piece (a gap) has the empty piece, which may also be a real piece's.
    if (!piece.empty()) FUZZ_CHECK(vocab->Find(piece) == id);
  }
  FUZZ_CHECK(vocab->Piece(-1).empty() && vocab->Piece(vocab->size()).empty());
  return 0;
}
