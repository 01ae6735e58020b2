// Model::Load as a whole: what a machine without enough memory gets; the content fingerprint; the
// threads it leaves behind.
#include <omp.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "model/model.h"
#include "tests/test_lib/test_util.h"

namespace mtserve {
namespace {

// The process's address space now, in bytes (VmSize).
long long AddressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoll(line.substr(7)) * 1024;
  }
  return -1;
}

// Loads the model with only a few megabytes of address space to spare (room for the checkpoint's
// 17 MB mapping, not for its float copies), and exits 0 if Load said it ran out of memory.
[[noreturn]] void LoadWithLittleMemory() {
  const long long now = AddressSpaceBytes();
  if (now < 0) std::_Exit(3);
  rlimit limit;
  limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(now + (24 << 20));
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(4);
  const auto model = Model::Load(testing::TestModelDir());
  std::fprintf(stderr, "status: %s\n", model.status().ToString().c_str());
  std::_Exit(model.status().code() == absl::StatusCode::kResourceExhausted ? 0 : 1);
}

// An allocation that fails part way through a load is an error, not an abort with an uncaught
// std::bad_alloc.
TEST(ModelLoadTest, AllocationFailureIsAnErrorNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers' operator new reports running out of memory and aborts; it never throws
  // std::bad_alloc, so there is nothing of ours to test here (the release build tests it).
  GTEST_SKIP() << "no std::bad_alloc under AddressSanitizer or ThreadSanitizer";
#endif
  EXPECT_EXIT(LoadWithLittleMemory(), ::testing::ExitedWithCode(0),
              "RESOURCE_EXHAUSTED: .*not enough memory to load the model");
}

// The fingerprint is of the files' bytes: a copy elsewhere has the same, a copy with one file
// changed (a byte of the config's whitespace, which loads the same model) has another.
// The threads of this process (its tasks).
int ThreadCount() {
  int count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// Loading runs on the loading thread alone: a thread whose OpenMP regions may take two threads
// makes no OpenMP thread while it loads (libgomp keeps a team's threads for good and, once they
// outnumber the CPUs, wakes a worker's threads through the kernel at every region), and its own
// setting is back afterwards.
TEST(ModelLoadTest, LoadingMakesNoOpenMpThreads) {
  std::thread loader([] {
    omp_set_num_threads(2);
    const int threads = omp_get_max_threads();  // 1 under TSan (sanitizers/tsan_openmp.cc).
    const int before = ThreadCount();
    const auto model = Model::Load(testing::TestModelDir(), ComputeType::kInt8);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(ThreadCount(), before);
    EXPECT_EQ(omp_get_max_threads(), threads);
  });
  loader.join();
}

TEST(ModelLoadTest, FingerprintIsTheFilesContent) {
  const auto original = Model::Load(testing::TestModelDir());
  ASSERT_TRUE(original.ok()) << original.status();
  const std::string copy = testing::FreshTempDir("fingerprint_copy");
  std::filesystem::copy(
      testing::TestModelDir(), copy,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  const auto copied = Model::Load(copy);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ((*copied)->content_fingerprint(), (*original)->content_fingerprint());
  EXPECT_EQ((*original)->content_fingerprint().size(), 32u);

  std::ofstream(copy + "/config.json", std::ios::app) << "\n";
  const auto changed = Model::Load(copy);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE((*changed)->content_fingerprint(), (*original)->content_fingerprint());
}

}  // namespace
}  // namespace mtserve
