// The --ready_file's content and its atomic write (server/ready_file.h): a reader sees the old
// file or the new one, whole, never a part; nothing is left behind, on success or failure.
#include "server/ready_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The names in `dir`, without "." and "..".
std::vector<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  closedir(d);
  return {names.begin(), names.end()};
}

TEST(ReadyFileTest, ContentIsOneJsonLineWithNullForListenersOff) {
  const std::string content = ReadyFileContent("loading", {50051, std::nullopt, 9464});
  EXPECT_EQ(content, R"({"state":"loading","grpc":50051,"http":null,"metrics":9464})"
                     "\n");
  const nlohmann::json json = nlohmann::json::parse(content);
  EXPECT_EQ(json["state"], "loading");
  EXPECT_EQ(json["grpc"], 50051);
  EXPECT_TRUE(json["http"].is_null());
  EXPECT_EQ(json["metrics"], 9464);

  const nlohmann::json serving = nlohmann::json::parse(ReadyFileContent("serving", {1, 2, 3}));
  EXPECT_EQ(serving,
            nlohmann::json({{"state", "serving"}, {"grpc", 1}, {"http", 2}, {"metrics", 3}}));
}

// Written, then replaced; only the file itself is left in the directory, readable by all.
TEST(ReadyFileTest, WritesAndReplacesLeavingNothingElse) {
  testing::TempDir dir;
  const std::string path = dir.File("ready.json");
  ASSERT_TRUE(WriteFileAtomically(path, "first\n").ok());
  EXPECT_EQ(Read(path), "first\n");
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer\n").ok());
  EXPECT_EQ(Read(path), "second, longer\n");
  ASSERT_TRUE(WriteFileAtomically(path, "3\n").ok());
  EXPECT_EQ(Read(path), "3\n");
  EXPECT_THAT(Names(dir.path().string()), ElementsAre("ready.json"));
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644);
}

// The new content goes into another file that replaces the old one: a reader that opened the old
// file keeps reading it whole (a write in place would change or cut it under the reader).
TEST(ReadyFileTest, ReplacesTheFileInsteadOfWritingIntoIt) {
  testing::TempDir dir;
  const std::string path = dir.File("ready.json");
  const std::string loading = ReadyFileContent("loading", {1, 2, 3});
  ASSERT_TRUE(WriteFileAtomically(path, loading).ok());
  const int old_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(old_fd, 0);
  ASSERT_TRUE(WriteFileAtomically(path, "x\n").ok());
  char buffer[256];
  const ssize_t n = pread(old_fd, buffer, sizeof(buffer), 0);
  close(old_fd);
  EXPECT_EQ(std::string(buffer, n > 0 ? n : 0), loading);
  EXPECT_EQ(Read(path), "x\n");
}

// Readers polling while the file is rewritten see one of the contents, whole, every time.
TEST(ReadyFileTest, ReadersNeverSeeAPart) {
  testing::TempDir dir;
  const std::string path = dir.File("ready.json");
  const std::string a = ReadyFileContent("loading", {1, std::nullopt, std::nullopt});
  const std::string b = ReadyFileContent("serving", {50051, 8080, 9464}) + std::string(4096, ' ');
  ASSERT_TRUE(WriteFileAtomically(path, a).ok());
  std::atomic<bool> done = false;
  std::atomic<int> reads = 0, torn = 0;
  std::thread reader([&] {
    while (!done) {
      const std::string seen = Read(path);
      if (seen != a && seen != b) ++torn;
      ++reads;
    }
  });
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(WriteFileAtomically(path, i % 2 ? a : b).ok());
  done = true;
  reader.join();
  EXPECT_GT(reads, 0);
  EXPECT_EQ(torn, 0);
}

// A directory that does not exist: the error names the file, and nothing is created.
TEST(ReadyFileTest, MissingDirectoryFailsNamingTheFile) {
  testing::TempDir dir;
  const std::string path = dir.File("missing/ready.json");
  const absl::Status status = WriteFileAtomically(path, "x\n");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("No such file or directory"));
  EXPECT_TRUE(Names(dir.path().string()).empty());
}

}  // namespace
}  // namespace mtserve
