// A keys file (--api_keys_file, serving/auth/api_keys.h) for in-process tests: one key, alice's,
// with the attributes a test gives it.
#ifndef MTSERVE_TESTS_TEST_LIB_API_KEY_FILES_H_
#define MTSERVE_TESTS_TEST_LIB_API_KEY_FILES_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace mtserve::testing {

// The key a client presents, and the name the file gives it.
inline constexpr char kAliceKey[] = "alice-key";

// The file's line for alice's key with `attributes` ("characters_per_day=20").
inline std::string AliceKeysFile(absl::string_view attributes) {
  // SHA-256 of "alice-key" (printf %s alice-key | sha256sum).
  return absl::StrCat(
      "alice sha256:72ee9d4355ccb9d3a4c9dbf37382e38e75c1b1a225b5bd1f729ee91bbda30c20 ", attributes,
      "\n");
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_API_KEY_FILES_H_
