// A shortlist file's bytes through both parsers (Shortlist::ParseVocabularyMap, ParseLexical:
// what FindInModelDirectory runs on vmap.txt and lex.s2t) with a small vocabulary: any bytes give
// an InvalidArgument or a list whose every id is the vocabulary's, and whose candidates for any
// sentence come out sorted, unique and within it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "model/shortlist.h"
#include "model/vocab.h"
#include "tests/test_lib/fuzz_check.h"

namespace {

const mtserve::Vocab& SmallVocab() {
  static const mtserve::Vocab* const vocab = new mtserve::Vocab(
      *mtserve::Vocab::Parse(R"({"</s>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "\u2581x": 5,
                                 "\u2581y": 6, "NULL": 7, "<pad>": 8})",
                             "vocab.json"));
  return *vocab;
}

bool SortedUniqueIds(const std::vector<int>& ids, int size) {
  return std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<int>()) == ids.end() &&
         (ids.empty() || (ids.front() >= 0 && ids.back() < size));
}

void Check(const absl::StatusOr<mtserve::Shortlist>& list) {
  if (!list.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(list.status()));
    return;
  }
  const int size = SmallVocab().size();
  FUZZ_CHECK(SortedUniqueIds(list->always(), size));
  FUZZ_CHECK(list->skipped_pieces() >= 0 && list->memory_bytes() > 0);
  // Every id, then each id repeated: all unigrams and n-grams of one piece.
  for (const std::vector<int>& source :
       {std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}, std::vector<int>(20, 2),
        std::vector<int>{5, 6, 5, 6, 2, 3, 4, 2, 3, 4}, std::vector<int>{}}) {
    std::vector<int> ids;
    list->Candidates(source, ids);
    FUZZ_CHECK(SortedUniqueIds(ids, size));
    FUZZ_CHECK(std::includes(ids.begin(), ids.end(), list->always().begin(), list->always().end()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  Check(mtserve::Shortlist::ParseVocabularyMap(text, "vmap.txt", SmallVocab()));
  Check(mtserve::Shortlist::ParseLexical(text, "lex.s2t", SmallVocab(),
                                         {.first = 2, .best = 2, .threshold = 0.1f}));
  return 0;
}
