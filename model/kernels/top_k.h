// The k largest values of a float row, best first (ties: lower index first).
#ifndef MTSERVE_MODEL_KERNELS_TOP_K_H_
#define MTSERVE_MODEL_KERNELS_TOP_K_H_

namespace mtserve {

// Writes min(k, n) ids and values to ids[] and values[], sorted by decreasing value. Values that
// are -inf are never returned unless the row has fewer than k finite values.
void TopK(const float* row, int n, int k, int* ids, float* values);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_TOP_K_H_
