// Which vocabulary id each column of a decoder step's logits stands for: every id in order, or
// those of a lexical shortlist's projection (VocabularySelection).
#ifndef MTSERVE_MODEL_DECODING_OUTPUT_COLUMNS_H_
#define MTSERVE_MODEL_DECODING_OUTPUT_COLUMNS_H_

#include <cmath>

namespace mtserve {

struct OutputColumns {
  int count = 0;                   // Columns of a row.
  const int* ids = nullptr;        // Column -> id (-1: padding); null: column c is id c.
  const int* column_of = nullptr;  // Id -> column (-1: not computed); null: id i is column i.

  int Id(int column) const { return ids == nullptr ? column : ids[column]; }
  int Column(int id) const { return id < 0 || column_of == nullptr ? id : column_of[id]; }
  // A row's value for `id`, -inf where its column was not computed.
  float Of(const float* row, int id) const {
    const int column = Column(id);
    return column < 0 ? -INFINITY : row[column];
  }
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_OUTPUT_COLUMNS_H_
