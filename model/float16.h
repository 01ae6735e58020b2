// Scalar IEEE 754 binary16 and bfloat16 to float conversion. The bulk conversion in
// safetensors.cc uses F16C when the CPU has it; these are its portable fallback and reference.
#ifndef MTSERVE_MODEL_FLOAT16_H_
#define MTSERVE_MODEL_FLOAT16_H_

#include <bit>
#include <cstdint>

namespace mtserve {

inline float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    // Inf, or NaN with its payload kept and the quiet bit set, as F16C's vcvtph2ps does.
    bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
  } else if (exponent != 0) {
    // Rebias the exponent from 15 to 127.
    bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  } else {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    bits = sign | std::bit_cast<uint32_t>(static_cast<float>(mantissa) * 0x1p-24f);
  }
  return std::bit_cast<float>(bits);
}

// bfloat16 is the top half of a float.
inline float BFloat16ToFloat(uint16_t bf16) {
  return std::bit_cast<float>(static_cast<uint32_t>(bf16) << 16);
}

}  // namespace mtserve

#endif  // MTSERVE_MODEL_FLOAT16_H_
