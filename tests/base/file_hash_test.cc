// HashFiles: equal for the same bytes under any folder, different when a byte, a file's presence
// or which name holds which bytes changes.
#include "base/file_hash.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(FileHashTest, SameBytesAnywhereHashAlike) {
  const std::string a = testing::FreshTempDir("file_hash_a");
  const std::string b = testing::FreshTempDir("file_hash_b");
  for (const std::string& dir : {a, b}) {
    Write(dir + "/x", "first file");
    Write(dir + "/y", std::string(3 << 20, 'y'));  // Longer than one read.
  }
  const absl::StatusOr<std::string> hash_a = HashFiles(a, {"x", "y", "absent"});
  ASSERT_TRUE(hash_a.ok()) << hash_a.status();
  EXPECT_EQ(hash_a->size(), 32u);
  EXPECT_EQ(*HashFiles(b, {"x", "y", "absent"}), *hash_a);
}

TEST(FileHashTest, AnyChangeHashesOtherwise) {
  const std::string dir = testing::FreshTempDir("file_hash_change");
  Write(dir + "/x", "ab");
  Write(dir + "/y", "cd");
  const std::string original = *HashFiles(dir, {"x", "y"});
  // Another order of names, or a name more.
  EXPECT_NE(*HashFiles(dir, {"y", "x"}), original);
  EXPECT_NE(*HashFiles(dir, {"x", "y", "z"}), original);
  // The bytes moved from one file to the other.
  Write(dir + "/x", "abc");
  Write(dir + "/y", "d");
  EXPECT_NE(*HashFiles(dir, {"x", "y"}), original);
  // One byte changed in a large file.
  std::string large(2 << 20, 'q');
  Write(dir + "/x", large);
  const std::string before = *HashFiles(dir, {"x"});
  large[(1 << 20) + 5] = 'r';
  Write(dir + "/x", large);
  EXPECT_NE(*HashFiles(dir, {"x"}), before);
  // Absent and empty are not the same.
  Write(dir + "/e", "");
  EXPECT_NE(*HashFiles(dir, {"e"}), *HashFiles(dir, {"absent"}));
}

}  // namespace
}  // namespace mtserve
