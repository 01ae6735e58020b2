// Test helpers: write small safetensors files (well-formed or deliberately broken) and decode
// IEEE half floats independently of the code under test.
#ifndef MTSERVE_TESTS_TEST_LIB_SAFETENSORS_WRITER_H_
#define MTSERVE_TESTS_TEST_LIB_SAFETENSORS_WRITER_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/test_util.h"

namespace mtserve::testing {

struct TestTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

inline std::string F32Bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

inline std::string U16Bytes(const std::vector<uint16_t>& values) {
  std::string bytes(values.size() * 2, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The header of `tensors` laid out back to back in order; tests may edit it before writing.
inline nlohmann::json BuildHeader(const std::vector<TestTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const TestTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  return header;
}

inline std::string ConcatBytes(const std::vector<TestTensor>& tensors) {
  std::string data;
  for (const TestTensor& t : tensors) data += t.bytes;
  return data;
}

// 8-byte little-endian header length, header text, data.
inline std::string FileBytes(const std::string& header_text, const std::string& data) {
  std::string out(8, '\0');
  uint64_t size = header_text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  return out + header_text + data;
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << path;
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out) << path;
}

inline void WriteSafetensors(const std::string& path, const std::vector<TestTensor>& tensors) {
  WriteBytes(path, FileBytes(BuildHeader(tensors).dump(), ConcatBytes(tensors)));
}

// binary16 from its definition: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24.
inline float ReferenceHalf(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 31) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    value = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  }
  return static_cast<float>(sign ? -value : value);
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_SAFETENSORS_WRITER_H_
