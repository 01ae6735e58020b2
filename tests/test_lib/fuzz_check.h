// FUZZ_CHECK for libFuzzer targets (tests/fuzz/): a property that failed is a crash, which
// libFuzzer saves as a reproducer, whatever NDEBUG says.
#ifndef MTSERVE_TESTS_TEST_LIB_FUZZ_CHECK_H_
#define MTSERVE_TESTS_TEST_LIB_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

#endif  // MTSERVE_TESTS_TEST_LIB_FUZZ_CHECK_H_
