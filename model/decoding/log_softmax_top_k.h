// One pass over a row of logits for a search: the row's log-softmax normaliser (its maximum and
// the log of its sum of exponentials) and its k best columns' log-probabilities together, without
// writing the normalised row. A beam search step needs no more of a row than that; the separate
// log-softmax (LogSoftmax) and top-k (TopK) it replaces wrote the whole normalised row, then read
// it again.
#ifndef MTSERVE_MODEL_DECODING_LOG_SOFTMAX_TOP_K_H_
#define MTSERVE_MODEL_DECODING_LOG_SOFTMAX_TOP_K_H_

namespace mtserve {

// log_softmax(x) = (x - max) - log_sum.
struct LogNormalizer {
  float max;      // -inf for a row of -inf only.
  float log_sum;  // log(sum(exp(x - max))) over the row.

  // -inf for a row of -inf only (where (x - max) has no value).
  float LogProb(float x) const;
};

// Writes min(k, n) columns of `logits` (a row of n values, -inf where masked) and their
// log-probabilities to ids[] and values[], best first (ties: lower column first), as TopK over
// the log-softmax of the row would: -inf columns come only after every finite one, when the row
// has fewer than k. Returns the row's normaliser.
LogNormalizer LogSoftmaxTopK(const float* logits, int n, int k, int* ids, float* values);

// LogSoftmaxTopK as CPUs without AVX-512 run it: plain loops, vectorised by the compiler where
// it can (for tests).
LogNormalizer LogSoftmaxTopKPortable(const float* logits, int n, int k, int* ids, float* values);

// Replaces row[0..n) by its log-probabilities, given the row's normaliser.
void ApplyLogNormalizer(float* row, int n, LogNormalizer normalizer);

}  // namespace mtserve

#endif  // MTSERVE_MODEL_DECODING_LOG_SOFTMAX_TOP_K_H_
