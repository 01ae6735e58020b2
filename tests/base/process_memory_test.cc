#include "base/process_memory.h"

#include <cstdint>
#include <cstring>
#include <memory>

#include "gtest/gtest.h"

namespace mtserve {
namespace {

TEST(ProcessMemoryTest, GrowsByWhatIsTouchedAndShrinksWhenFreed) {
  const int64_t before = ResidentAnonymousBytes();
  ASSERT_GT(before, 0);
  constexpr int64_t kBytes = 64 << 20;
  // Large enough that malloc maps it on its own and unmaps it when freed.
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);
  const int64_t touched = ResidentAnonymousBytes();
  EXPECT_GE(touched - before, kBytes - (1 << 20));
  EXPECT_LE(touched - before, kBytes + (4 << 20));
  block.reset();
  EXPECT_LE(ResidentAnonymousBytes() - before, 4 << 20);
}

}  // namespace
}  // namespace mtserve
