// The k largest values of a float row, best first (ties: lower index first).
#ifndef MTSERVE_MODEL_KERNELS_TOP_K_H_
#define MTSERVE_MODEL_KERNELS_TOP_K_H_

namespace mtserve {

// Writes min(k, n) ids and values to ids[] and values[], sorted by decreasing value. Values that
// are -inf are never returned unless the row has fewer than k finite values.
void TopK(const float* row, int n, int k, int* ids, float* values);

// The best `count` (up to k; none when k is 0) of the values offered so far, kept sorted
// decreasingly in ids[] and values[] (ties: the first offered first) by insertion: for the few
// candidates a beam search wants, with most of a row skipped unread (Admits), the fastest way.
struct TopKInsertion {
  int k;
  int* ids;
  float* values;
  int count = 0;

  // Offers row[i] as candidate i.
  void Offer(const float* row, int i) {
    const float v = row[i];
    if (count == k && !(v > values[k - 1])) return;
    int pos = count < k ? count++ : k - 1;
    while (pos > 0 && values[pos - 1] < v) {
      values[pos] = values[pos - 1];
      ids[pos] = ids[pos - 1];
      --pos;
    }
    values[pos] = v;
    ids[pos] = i;
  }
  // Whether a value of `max` could enter.
  bool Admits(float max) const { return count < k || max > values[k - 1]; }
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_TOP_K_H_
