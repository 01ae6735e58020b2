// Layer normalisation of float32 rows in place: a plain vectorised loop, compiled for AVX-512, AVX2
// and baseline x86-64 and picked at run time, over the rows in parallel on the calling thread's
// OpenMP team when they are many. (oneDNN's layer_normalization primitive computes the same, but
// a decoding step normalises a few rows at a time, ten times a step, and each primitive call cost
// more in argument maps and allocations than the normalisation itself.)
#ifndef MTSERVE_MODEL_KERNELS_LAYER_NORM_ROWS_H_
#define MTSERVE_MODEL_KERNELS_LAYER_NORM_ROWS_H_

#include <cstdint>

namespace mtserve {

// For each of `rows` rows of `dim` floats (dense): x = (x - mean) / sqrt(var + epsilon) * gamma
// + beta, mean and var (the population variance, about the mean) taken over the row.
void LayerNormRows(float* x, int64_t rows, int64_t dim, const float* gamma, const float* beta,
                   float epsilon);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_KERNELS_LAYER_NORM_ROWS_H_
